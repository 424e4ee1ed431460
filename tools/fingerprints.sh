#!/bin/bash
# fingerprints.sh [--check] [RELEASE...] - the fingerprints of the
# validated builds, module/fingerprints/RELEASE.kfp, from their images.
#
# Each is `tools/kfp/kfp fingerprint` of the build's own image and config
# ($VMAMERGE_CACHE/kernels/RELEASE/boot/, unpacked by tests/setup.sh or
# tools/port.sh) over:
#   - the port manifest of its series: every function and datum the module
#     mirrors, replaces, calls or relies on (tools/mirror-diff.sh's items,
#     read from the module source and the series' full-tier linux-source:
#     the port tool and the equivalence check read the same list),
#   - module/fingerprints/structs (layouts from .BTF),
#   - module/fingerprints/options (config options).
# The equivalence check at build time (module/admit.sh) fingerprints a new
# image with each file's own lists and admits it when every item is the
# same.  The files are generated, never edited: make check runs --check,
# which regenerates them into a temporary directory and fails on any
# difference, on a missing one and on one of a build not in the list.
# Default RELEASEs: every full and smoke build of module/builds.list.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# the list's own builds, never the test harness's resolved matrix (tests/matrix.sh)
unset VMAMERGE_MATRIX
# shellcheck source=../tests/lib.sh
source "$repo/tests/lib.sh"
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
dir=$repo/module/fingerprints
kfp=${KFP:-$repo/tools/kfp/kfp}
check=0
if [[ ${1:-} == --check ]]; then
	check=1
	shift
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmamerge-fp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

[[ -x $kfp ]] || make -s -C "$repo/tools/kfp" >/dev/null
# every listed build; the defaults follow VMAMERGE_KERNELS (make check's series)
mapfile -t listed < <(VMAMERGE_KERNELS='' builds_of full smoke | awk '{ print $2 }')
(($#)) || mapfile -t -O 0 args < <(builds_of full smoke | awk '{ print $2 }')
(($#)) || set -- "${args[@]}"

manifest() { # SERIES: the function list into $tmp/functions-SERIES
	local s=$1 src=$cache/src/linux-source-$1
	[[ -s $tmp/functions-$s ]] && return 0
	[[ -d $src/mm ]] || { echo "fingerprints: no $src (tests/setup.sh unpacks it)" >&2; return 1; }
	MIRROR_DIFF_ITEMS=1 bash "$repo/tools/mirror-diff.sh" "$s" "$src" "$src" |
		awk '$1 == "mirror" || $1 == "replaced" || $1 == "called" || $1 == "relied" { print $2 }' \
			>"$tmp/functions-$s"
	[[ -s $tmp/functions-$s ]]
}

rc=0
for rel in "$@"; do
	series=$(VMAMERGE_KERNELS='' builds_of full smoke | awk -v r="$rel" '$2 == r { print $1 }')
	[[ -n $series ]] || { echo "fingerprints: $rel is not a full or smoke build of module/builds.list" >&2; exit 2; }
	boot=$cache/kernels/$rel/boot
	[[ -s $boot/vmlinuz-$rel && -s $boot/config-$rel ]] ||
		{ echo "fingerprints: no image or config of $rel in $boot (tests/setup.sh)" >&2; exit 2; }
	manifest "$series"
	out=$dir/$rel.kfp
	((check)) && out=$tmp/$rel.kfp
	"$kfp" fingerprint "$boot/vmlinuz-$rel" --functions "$tmp/functions-$series" \
		--structs "$dir/structs" --config "$boot/config-$rel" \
		--options "$dir/options" -o "$out"
	if ((check)); then
		if ! cmp -s "$out" "$dir/$rel.kfp"; then
			echo "fingerprints: module/fingerprints/$rel.kfp is not what its image gives now: run tools/fingerprints.sh $rel" >&2
			diff "$dir/$rel.kfp" "$out" 2>&1 | head -20 >&2 || true
			rc=1
		fi
	else
		echo "module/fingerprints/$rel.kfp"
	fi
done
if ((check)); then
	for f in "$dir"/*.kfp; do
		[[ -e $f ]] || continue
		rel=$(basename "$f" .kfp)
		printf '%s\n' "${listed[@]}" | grep -qxF "$rel" ||
			{ echo "fingerprints: $f is of $rel, which module/builds.list does not list" >&2; rc=1; }
	done
	((rc)) || echo "fingerprints: $# files are what their images give"
fi
exit $rc
