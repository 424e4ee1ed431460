#!/bin/bash
# tests/matrix.sh against the real archive (the host's apt lists) and the
# real images, in a copy of the checkout whose module/builds.list names
# older full-tier builds: a build whose source left the archive is followed
# by its newest equivalent build, a newer equivalent build is followed while
# the source is still there, a newer build that is not equivalent leaves the
# listed one in place (or stops the run when its source is gone, naming
# the port).  Needs the cache of tests/setup.sh (kfp's libraries, images).
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
tmp=$(mktemp -d)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$tmp"' EXIT
# shellcheck source=tap.sh
source "$repo/tests/tap.sh"

git clone -q "$repo" "$tmp/r" || exit 1
for f in tests/matrix.sh tests/lib.sh; do cp "$repo/$f" "$tmp/r/$f"; done
[[ -x $repo/tools/kfp/kfp ]] && cp "$repo/tools/kfp/kfp" "$tmp/r/tools/kfp/kfp"
list=$tmp/r/module/builds.list
orig=$tmp/orig.list
cp "$list" "$orig"

# resolve OUT [VMAMERGE_KERNELS]: matrix_resolve of the copy, in a subshell
# (its die exits); stderr to OUT.err
resolve() {
	(
		export VMAMERGE_CACHE=$cache VMAMERGE_KERNELS=${2:-}
		# shellcheck disable=SC2030,SC2269 # lib.sh reads $cache
		cache=$cache
		# shellcheck source=lib.sh
		source "$tmp/r/tests/lib.sh"
		die() { echo "die: $*" >&2; exit 1; }
		# shellcheck source=matrix.sh
		source "$tmp/r/tests/matrix.sh"
		matrix_resolve "$1"
	) 2>"$1.err"
}
# relist SED-SCRIPT: the copy's list, edited from the original
relist() { sed -e "$1" "$orig" >"$list"; }
uts57=$(
	source "$tmp/r/tests/lib.sh"
	VMAMERGE_MATRIX='' uts_version_of 6.1.0-57-amd64
)
# corrupt FP OUT: FP with its first function's hash changed
corrupt() {
	awk '!d && $1 == "func" { $4 = "00000000000000000000000000000000"; d = 1 } 1' "$1" >"$2"
}
# the version of a package the archive does not have (Debian removed it)
gone=6.1.192-0vmamerge.gone

# 1. the list as it is: the archive has every full-tier build's source and
# nothing newer is equivalent
resolve "$tmp/m1"
rc=$?
t "the list as it is: resolves (exit 0)" test $rc = 0
t "  the matrix is the list's full tier" \
	diff <(awk '!/^#/ && $4 == "full"' "$orig") "$tmp/m1"
t "  nothing followed" test ! -s "$tmp/m1.followed"

# 2. 6.1.0-56 full at a version whose linux-source-6.1 left the archive,
# 6.1.0-57 not listed: followed by 6.1.0-57, equivalent
relist "/ 6\\.1\\.0-57-amd64 /d; s/^6\\.1 6\\.1\\.0-56-amd64 6\\.1\\.192-2 smoke/6.1 6.1.0-56-amd64 $gone full/"
resolve "$tmp/m2" 6.1
rc=$?
t "6.1.0-56 listed full, its source gone: resolves (exit 0)" test $rc = 0
t "  the full tier is 6.1.0-57-amd64 at 6.1.192-3 with its own UTS version" \
	test "$(cat "$tmp/m2")" = "6.1 6.1.0-57-amd64 6.1.192-3 full $uts57"
t "  recorded as following 6.1.0-56-amd64" test "$(cat "$tmp/m2.followed")" = "6.1.0-57-amd64 6.1.0-56-amd64"
t "  says so, and why" grep -q "6.1.0-57-amd64 (6.1.192-3) is the newest build of 6.1.0-56-amd64's flavour and equivalent to it" "$tmp/m2.err"
out=$(
	cache=$cache
	source "$tmp/r/tests/lib.sh"
	export VMAMERGE_MATRIX=$tmp/m2
	builds_of full
	followed_of 6.1.0-57-amd64
	uts_version_of 6.1.0-57-amd64
	VMAMERGE_KERNELS=6.1 VMAMERGE_MATRIX='' builds_of full
)
t "  builds_of full reads it, followed_of and uts_version_of too; without it the list" \
	test "$out" = "6.1 6.1.0-57-amd64 6.1.192-3 full
6.1.0-56-amd64
$uts57
6.1 6.1.0-56-amd64 $gone full"

# 3. the same, 6.1.0-56's fingerprint changed in one function: not
# equivalent, and the source is gone: the run stops, naming the port
cp "$repo/module/fingerprints/6.1.0-56-amd64.kfp" "$tmp/fp56"
corrupt "$tmp/fp56" "$tmp/r/module/fingerprints/6.1.0-56-amd64.kfp"
resolve "$tmp/m3" 6.1
rc=$?
t "6.1.0-56 full, source gone, 6.1.0-57 not equivalent: exit 1" test $rc = 1
t "  names the port and what kfp said" \
	grep -q "the newest build 6.1.0-57-amd64 (6.1.192-3) is not equivalent to it: port it (make port KVER=6.1.0-57-amd64)" "$tmp/m3.err"
t "  writes no matrix" test ! -e "$tmp/m3"
t "  kfp named the function" grep -q "__anon_vma_prepare" "$tmp/m3.err"

# 3b. the same at 6.1.0-56's real version, whose source is still there:
# 6.1.0-56 stays, with a note
relist '/ 6\.1\.0-57-amd64 /d; s/^\(6\.1 6\.1\.0-56-amd64 6\.1\.192-2\) smoke/\1 full/'
resolve "$tmp/m3b" 6.1
rc=$?
t "6.1.0-56 full, its source there, 6.1.0-57 not equivalent: exit 0, 6.1.0-56 stays" \
	test "$rc $(cut -d' ' -f2 "$tmp/m3b")" = "0 6.1.0-56-amd64"
cp "$tmp/fp56" "$tmp/r/module/fingerprints/6.1.0-56-amd64.kfp"

# 4. 6.12.115+deb12 full, 6.12.117+deb12 not listed: its source is still
# in the archive, and the newer 6.12.117+deb12 is equivalent: followed
relist '/ 6\.12\.117+deb12-amd64 /d; s/^\(6\.12 6\.12\.115+deb12-amd64 6\.12\.115-2~deb12u1\) smoke/\1 full/'
resolve "$tmp/m4" 6.12
rc=$?
t "6.12.115+deb12 listed full, 6.12.117+deb12 newer and equivalent: exit 0" test $rc = 0
t "  followed by 6.12.117+deb12-amd64" \
	test "$(cut -d' ' -f1-4 "$tmp/m4")" = "6.12 6.12.117+deb12-amd64 6.12.117-1~deb12u1 full"

# 5. the same with 6.12.115+deb12's fingerprint changed: the newer build is
# not equivalent, the source is there: 6.12.115+deb12 stays, with a note
corrupt "$repo/module/fingerprints/6.12.115+deb12-amd64.kfp" "$tmp/r/module/fingerprints/6.12.115+deb12-amd64.kfp"
resolve "$tmp/m5" 6.12
rc=$?
t "6.12.115+deb12 full, the newer build not equivalent, its source there: exit 0" test $rc = 0
t "  6.12.115+deb12-amd64 stays" \
	test "$(cut -d' ' -f1-4 "$tmp/m5")" = "6.12 6.12.115+deb12-amd64 6.12.115-2~deb12u1 full"
t "  and the note names the port" grep -q "6.12.115+deb12-amd64 stays; port 6.12.117+deb12-amd64 (make port KVER=6.12.117+deb12-amd64)" "$tmp/m5.err"
t "  nothing followed" test ! -s "$tmp/m5.followed"
tap_end
