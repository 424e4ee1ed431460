#!/bin/bash
# dkms-policy-test.sh - what dkms does with vmamerge on listed and unlisted
# kernels (docs/design.md, "dkms"), in a private dkms tree, without
# building anything: on a kernel that module/builds.list does not list,
# `dkms autoinstall` (what a kernel package's postinst runs) exits 0 and
# builds nothing, an explicit `dkms build` stops with BUILD_EXCLUSIVE (77),
# and the kernel hook (tools/kernel-postinst) prints its note, exits 0 and
# does not call dkms; on a listed kernel the hook calls `dkms install`.
# TAP-like; the last line "dkms-policy: N passed, N failed".
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$repo/tests/lib.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmamerge-dkms.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
np=0 nf=0
t() { # t DESCRIPTION CMD...: ok when CMD succeeds
	local d=$1
	shift
	if "$@"; then np=$((np + 1)); echo "ok - $d"; else nf=$((nf + 1)); echo "not ok - $d"; fi
}
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$repo/dkms.conf")
src=$tmp/src/vmamerge-$ver
mkdir -p "$src" "$tmp/tree"
cp -a "$repo/Kbuild" "$repo/Makefile" "$repo/dkms.conf" "$repo/module" "$src/"
listed=$(builds_of full | awk 'NR == 1 { print $2 }')
unlisted=6.12.99+deb13-amd64
kdir=$(kdir_of "$listed")
dk=(dkms --dkmstree "$tmp/tree" --sourcetree "$tmp/src")

"${dk[@]}" add -m vmamerge -v "$ver" >"$tmp/add.log" 2>&1
t "dkms add" [ $? = 0 ]
if kdir_ready "$listed"; then
	KDIR=$kdir "${dk[@]}" autoinstall --kernelsourcedir "$kdir" -k "$unlisted" >"$tmp/auto.log" 2>&1
	t "dkms autoinstall -k $unlisted (unlisted): exit 0" [ $? = 0 ]
	t "  ... built nothing" [ ! -e "$tmp/tree/vmamerge/$ver/$unlisted" ]
	KDIR=$kdir "${dk[@]}" build --kernelsourcedir "$kdir" -m vmamerge -v "$ver" -k "$unlisted" >"$tmp/build.log" 2>&1
	t "dkms build -k $unlisted (unlisted): BUILD_EXCLUSIVE, exit 77" [ $? = 77 ]
	t "  ... built nothing" [ ! -e "$tmp/tree/vmamerge/$ver/$unlisted/x86_64/module" ]
else
	echo "ok - dkms autoinstall/build on an unlisted kernel # SKIP $(kdir_missing_msg "$listed")"
fi
hook() { VMAMERGE_SRC=$src VMAMERGE_DKMS="echo CALLED dkms" sh "$repo/tools/kernel-postinst" "$@"; }
out=$(hook "$unlisted" 2>"$tmp/hook.err")
t "kernel hook, unlisted $unlisted: exit 0" [ $? = 0 ]
t "  ... does not call dkms" [ -z "$out" ]
t "  ... names the port command" grep -q "make port KVER=$unlisted" "$tmp/hook.err"
out=$(hook "$listed" 2>/dev/null)
t "kernel hook, listed $listed: exit 0" [ $? = 0 ]
t "  ... calls dkms install" [ "$out" = "CALLED dkms install vmamerge/$ver -k $listed" ]
echo "dkms-policy: $np passed, $nf failed"
((nf == 0))
