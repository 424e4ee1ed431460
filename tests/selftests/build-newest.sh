#!/bin/bash
# build-newest.sh [OUTDIR]: build (or reuse) the upstream mm selftests that
# every kernel of the matrix runs from the newest Debian kernel source
# (tests/setup.sh extracts it and names it in $VMAMERGE_CACHE/src/newest):
# today only merge.c, the VMA merge cases upstream asserts.  Static, for
# the busybox guest, against the uapi headers of that source.
#
# Kernels before 6.11 have no PROCMAP_QUERY, which merge.c queries every
# VMA with: procmap_compat.c answers it from /proc/PID/maps text there
# (linked with -Wl,--wrap=ioctl; the real ioctl is tried first).
# Result: $VMAMERGE_CACHE/selftests/newest-KEY/bin/merge (KEY: a hash of
# this script, procmap_compat.c, the source's version and the compiler);
# with OUTDIR the binaries are copied there.  Prints the cache directory
# (its source.txt: "PACKAGE VERSION" of the source).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
die() { echo "selftests/build-newest: ERROR: $*" >&2; exit 1; }

(($# <= 1)) || { echo "usage: $0 [OUTDIR]" >&2; exit 2; }
outdir=${1:-}
pkg=$(cat "$cache/src/newest" 2>/dev/null) || die "$cache/src/newest missing: run tests/setup.sh"
src=$cache/src/$pkg
srcver=$(cat "$src.version" 2>/dev/null) || die "$src.version missing: run tests/setup.sh"
[[ -f $src/Makefile ]] || die "$src missing: run tests/setup.sh"
key=$( {
	cat "$here/build-newest.sh" "$here/procmap_compat.c"
	echo "$pkg $srcver"
	gcc --version | head -n1
} | sha256sum | cut -c1-12)
dir=$cache/selftests/newest-$key
progs=(merge)

if [[ ! -f $dir/.done ]]; then
	mkdir -p "$cache/selftests"
	tmp=$(mktemp -d "$cache/selftests/.build-newest.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	st=$src/tools/testing/selftests
	{
		# uapi headers of that source, generated out of tree
		nice -n 5 make -s -C "$src" O="$tmp/kobj" headers
		mkdir -p "$tmp/result/bin"
		for p in "${progs[@]}"; do
			gcc -static -O2 -Wall -isystem "$tmp/kobj/usr/include" \
				-I"$st" -I"$st/mm" -I"$src/tools/include" \
				-o "$tmp/result/bin/$p" "$st/mm/$p.c" "$st/mm/vm_util.c" \
				"$st/mm/hugepage_settings.c" "$here/procmap_compat.c" \
				-Wl,--wrap=ioctl
		done
	} >"$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log" >&2; die "build failed (log above)"; }
	strip "$tmp/result/bin/"*
	cp "$tmp/build.log" "$tmp/result/build.log"
	echo "$pkg $srcver" >"$tmp/result/source.txt"
	touch "$tmp/result/.done"
	rm -rf "$dir"
	mv -T "$tmp/result" "$dir"
	# keep the two newest builds
	# shellcheck disable=SC2012 # our own directory names
	ls -1dt "$cache/selftests/newest"-* | tail -n +3 | xargs -r rm -rf
fi
if [[ -n $outdir ]]; then
	mkdir -p "$outdir"
	cp "$dir/bin/"* "$outdir/"
fi
echo "$dir"
