#!/bin/bash
# cli-check-kernel.sh: `vmamerge check-kernel` with the real kfp on the
# real images of the validated builds ($VMAMERGE_CACHE/kernels/RELEASE/boot/,
# unpacked by tests/setup.sh) and the real fingerprints (module/fingerprints/),
# where userspace/test_check_kernel.sh has fakes.  The CLI is built with
# one smoke build of 6.1 (else any smoke build) left out of its list, so
# that build is one it must prove:
#   - a listed build: validated, kfp not run (VMAMERGE_KFP points nowhere);
#   - the left-out build: equivalent to a validated build of its series
#     (exit 0; its own fingerprint among them, so at least that one);
#   - against a copy of one fingerprint with one function's hash changed:
#     refused, that function the one difference, that build the nearest;
#   - against fingerprints of another series only: refused, no nearest;
#   - an image of another release: kfp's own message passed on, exit 2;
#   - every --json output one JSON object (python3 -m json.tool where there
#     is a python3, else tests/guest/t_json built here).
# Without the cache's images or a kfp that builds, it says so and skips.
# TAP-like lines, then "N passed, N failed"; exit 1 on a failure.
#   tests/cli-check-kernel.sh     (KFP=PATH: a kfp; default tools/kfp/kfp)
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
kfp=${KFP:-$repo/tools/kfp/kfp}
list=$repo/module/builds.list
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cli-check-kernel.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# shellcheck source-path=SCRIPTDIR source=../userspace/test_lib.sh
source "$repo/userspace/test_lib.sh"

skip() {
	echo "ok 1 - check-kernel with the real kfp # SKIP $*"
	echo "1 passed, 0 failed, 1 skipped"
	exit 0
}

# builds SERIES TIER: the releases of module/builds.list
builds() {
	awk -v s="$1" -v t="$2" '!/^[ \t]*#/ && NF >= 5 && $1 == s && $4 == t { print $2 }' "$list"
}

left=$(builds 6.1 smoke | head -1)
[[ -n $left ]] || left=$(awk '!/^[ \t]*#/ && NF >= 5 && $4 == "smoke" { print $2; exit }' "$list")
[[ -n $left ]] || skip "module/builds.list has no smoke build to leave out"
series=$(awk -v r="$left" '$2 == r { print $1 }' "$list")
listed=$(builds "$series" full | head -1)
boot=$cache/kernels/$left/boot
[[ -s $boot/vmlinuz-$left && -s $boot/config-$left ]] ||
	skip "no image or config of $left in $boot (tests/setup.sh unpacks them)"
if [[ ! -x $kfp ]] && ! make -s -C "$repo/tools/kfp" >"$tmp/kfp.log" 2>&1; then
	skip "no kfp: make -C tools/kfp failed ($(tail -1 "$tmp/kfp.log"))"
fi

# the CLI without $left in its list, built out of the tree
awk -v r="$left" '$2 != r' "$list" >"$tmp/builds.list"
mkdir "$tmp/cli"
if ! make -s -C "$tmp/cli" -f "$repo/userspace/Makefile" BUILDS_LIST="$tmp/builds.list" \
	vmamerge >"$tmp/cli.log" 2>&1; then
	res 1 "the CLI builds without $left in its list" "$(tail -20 "$tmp/cli.log")"
	echo "0 passed, 1 failed"
	exit 1
fi
cli=$tmp/cli/vmamerge
if command -v python3 >/dev/null; then
	is_json() { python3 -m json.tool >/dev/null 2>&1; }
else
	cc -O2 -o "$tmp/t_json" "$repo/tests/guest/t_json.c" || exit 1
	is_json() { "$tmp/t_json" >/dev/null 2>&1; }
fi

# run WANT DESC ARGS...: the CLI, exit status WANT ($tmp/out, $tmp/err)
run() {
	local want=$1 d=$2 rc
	shift 2
	"$cli" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	[[ $rc == "$want" ]]
	res $? "$d: exit $want" "vmamerge $*" "exit $rc" "stdout: $(head -c 800 "$tmp/out")" \
		"stderr: $(head -c 800 "$tmp/err")"
}

has() { # DESC PATTERN: the last stdout matches the extended regex
	grep -qE -- "$2" "$tmp/out"
	res $? "  ... $1" "stdout: $(head -c 800 "$tmp/out")" "want: $2"
}

json_ok() {
	is_json <"$tmp/out"
	res $? "  ... one JSON object" "$(head -c 800 "$tmp/out")"
}

export VMAMERGE_KFP=$kfp VMAMERGE_FINGERPRINTS=$repo/module/fingerprints
img=(--image "$boot/vmlinuz-$left" --config "$boot/config-$left")

VMAMERGE_KFP=$tmp/no-kfp run 0 "listed build $listed, kfp pointing nowhere" check-kernel "$listed"
has "validated, kfp not run" "^$listed: validated \(full tier\)$"

run 0 "$left (left out of the list)" check-kernel "$left" "${img[@]}"
has "equivalent to a validated build, with the counts" \
	"^$left: equivalent to [^ ]+: [0-9]+ functions?, [0-9]+ structs?, [0-9]+ config options? identical$"
ref=$(sed -n 's/^[^ ]*: equivalent to \([^:]*\):.*/\1/p' "$tmp/out")
awk -v r="$ref" -v s="$series" '$1 == s && $2 == r { f = 1 } END { exit !f }' "$list"
res $? "  ... $ref is a build of series $series of module/builds.list"
run 0 "$left --json" check-kernel "$left" "${img[@]}" --json
json_ok
has "tier equivalent, its build id" \
	"\"validated\": false, \"tier\": \"equivalent\", \"equivalent_to\": \"$ref\", \"nearest\": \"$ref\", \"build_id\": \"[0-9a-f]+\", \"differs\": \[\], \"error\": null\}$"

# one fingerprint, one function's hash changed: the one difference
mkdir "$tmp/fp"
fp=$repo/module/fingerprints/$listed.kfp
func=$(awk '$1 == "func" { print $2; exit }' "$fp")
awk '$1 == "func" && !done { h = $4; $4 = (substr(h, 1, 1) == "0" ? "1" : "0") substr(h, 2); done = 1 } 1' \
	"$fp" >"$tmp/fp/$listed.kfp"
VMAMERGE_FINGERPRINTS=$tmp/fp run 1 "$left against a fingerprint with $func changed" \
	check-kernel "$left" "${img[@]}"
has "refused, $func the difference, $listed the nearest" \
	"^$left: refused: differs from the nearest validated build $listed in: func:$func$"
has "what to do" "^to support it, port it in the vmamerge source tree: make port KVER=$left "
VMAMERGE_FINGERPRINTS=$tmp/fp run 1 "  the same, --json" check-kernel "$left" "${img[@]}" --json
json_ok
has "tier refused, the nearest, the difference" \
	"\"tier\": \"refused\", \"equivalent_to\": null, \"nearest\": \"$listed\", .*\"differs\": \[\"func:$func\"\], \"error\": null\}$"

# fingerprints of other series only
mkdir "$tmp/other"
for f in "$repo"/module/fingerprints/*.kfp; do
	r=$(basename "$f" .kfp)
	awk -v r="$r" -v s="$series" '$2 == r && $1 != s { f = 1 } END { exit !f }' "$list" &&
		cp "$f" "$tmp/other/"
done
if compgen -G "$tmp/other/*.kfp" >/dev/null; then
	VMAMERGE_FINGERPRINTS=$tmp/other run 1 "$left against other series only" \
		check-kernel "$left" "${img[@]}" --json
	json_ok
	has "refused, no nearest" "\"tier\": \"refused\", \"equivalent_to\": null, \"nearest\": null, .*\"differs\": \[\]"
fi

# an image of another release: kfp says so, passed on
run 2 "$left-x with $left's image" check-kernel "$left-x" "${img[@]}"
grep -qF "vmamerge: check-kernel: kfp: $boot/vmlinuz-$left: the image is of kernel $left, not $left-x" "$tmp/err"
res $? "  ... kfp's message passed on" "stderr: $(cat "$tmp/err")"

echo "1..$n"
echo "$((n - failed)) passed, $failed failed"
((failed == 0))
