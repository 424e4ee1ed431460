#!/bin/bash
# build.sh SERIES [OUTDIR]: build (or reuse) the kernel's own mm selftests of
# SERIES (6.1: tools/testing/selftests/vm, 6.12: tools/testing/selftests/mm)
# as static binaries for the busybox guest.
#
# Source: $VMAMERGE_CACHE/src/linux-source-SERIES (never modified: the uapi
# headers are generated with `make O=<private dir> headers`, the selftest
# directory and what its Makefile includes are copied and built there).
# Result: $VMAMERGE_CACHE/selftests/SERIES-KEY/bin/<test> (KEY: a hash of
# this script, the Debian source version and the compiler), plus build.log,
# targets.txt (the Makefile's targets) and built.txt/failed.txt (which of
# them linked statically). A finished build is reused at once.
# With OUTDIR, the binaries the run list tests-SERIES.txt names are copied
# there; one that did not build is an error.
# Prints the cache directory on stdout; everything else goes to stderr.
#
# Needs: gcc, make, libc6-dev (static libc.a), libnuma-dev, libcap-dev,
# liburing-dev (their static .a).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
die() { echo "selftests/build: ERROR: $*" >&2; exit 1; }
log() { echo "selftests/build: $*" >&2; }

(($# >= 1 && $# <= 2)) || { echo "usage: $0 SERIES [OUTDIR]" >&2; exit 2; }
series=$1 outdir=${2:-}
src=$cache/src/linux-source-$series
list=$here/tests-$series.txt
[[ -f $src/Makefile ]] || die "$src missing: run tests/setup.sh"
[[ -f $list ]] || die "no run list $list"
srcver=$(cat "$src.version" 2>/dev/null) || die "$src.version missing"
if [[ -d $src/tools/testing/selftests/mm ]]; then
	sub=mm
else
	sub=vm # 6.1
fi

# The run list is not part of the key: every target of the Makefile is
# built, the list only selects what is staged (editing it must not cost a
# rebuild).
key=$( {
	cat "$here/build.sh"
	echo "$series $srcver"
	gcc --version | head -n1
} | sha256sum | cut -c1-12)
dir=$cache/selftests/$series-$key

# The binaries the run list needs: every word of its commands (column 4 on:
# NAME TIMEOUT TIER CMD...; "$BIN/" stripped) that names a Makefile target.
# $1: the file of target names.
needed() {
	awk '!/^[ \t]*(#|$)/ { for (i = 4; i <= NF; i++) { w = $i; sub(/^\$BIN\//, "", w); print w } }' "$list" |
		LC_ALL=C sort -u | LC_ALL=C join - "$1"
}

if [[ ! -f $dir/.done ]]; then
	for lib in libc libnuma libcap liburing; do
		[[ -f /usr/lib/x86_64-linux-gnu/$lib.a ]] ||
			die "/usr/lib/x86_64-linux-gnu/$lib.a missing (apt-get install libc6-dev libnuma-dev libcap-dev liburing-dev)"
	done
	mkdir -p "$cache/selftests"
	tmp=$(mktemp -d "$cache/selftests/.build-$series.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	t0=$SECONDS
	log "building the $series mm selftests ($srcver) in $tmp"
	{
		# uapi headers of exactly this kernel, generated out of tree
		nice -n 5 make -s -C "$src" O="$tmp/kobj" headers
		# the selftest dir and what its Makefile and sources include
		mkdir -p "$tmp/tree"
		(cd "$src" && cp -a --parents \
			tools/testing/selftests/lib.mk \
			tools/testing/selftests/kselftest.h \
			tools/testing/selftests/kselftest_harness.h \
			tools/testing/selftests/kselftest \
			tools/testing/selftests/x86 \
			"tools/testing/selftests/$sub" \
			tools/include include/vdso mm/gup_test.h "$tmp/tree/")
		mkdir -p "$tmp/out"
		# -k: build everything that builds; what does not is listed
		nice -n 5 make -k -j2 -C "$tmp/tree/tools/testing/selftests/$sub" \
			OUTPUT="$tmp/out" \
			KHDR_INCLUDES="-isystem $tmp/kobj/usr/include" \
			LDFLAGS=-static EXTRA_CFLAGS=-static || true
		# 6.12.117's khugepaged.c uses KSFT_SKIP without including
		# kselftest.h (a stable backport): define it for that one file.
		if [[ ! -x $tmp/out/khugepaged ]] && grep -q KSFT_SKIP \
			"$tmp/tree/tools/testing/selftests/$sub/khugepaged.c"; then
			nice -n 5 make -C "$tmp/tree/tools/testing/selftests/$sub" \
				OUTPUT="$tmp/out" \
				KHDR_INCLUDES="-isystem $tmp/kobj/usr/include" \
				LDFLAGS=-static EXTRA_CFLAGS="-static -DKSFT_SKIP=4" \
				"$tmp/out/khugepaged" || true
		fi
	} >"$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log" >&2; die "build failed (log above)"; }
	mkdir -p "$tmp/result/bin"
	# shellcheck disable=SC2016 # make expands it
	targets=$(make -s -C "$tmp/tree/tools/testing/selftests/$sub" OUTPUT="$tmp/out" \
		--eval 'print-targets: ; @echo $(notdir $(TEST_GEN_PROGS) $(TEST_GEN_FILES))' \
		print-targets 2>/dev/null | tr ' ' '\n' | LC_ALL=C sort -u)
	: >"$tmp/result/built.txt"
	: >"$tmp/result/failed.txt"
	for t in $targets; do
		f=$tmp/out/$t
		if [[ -f $f && -x $f ]] && ! readelf -l "$f" | grep INTERP >/dev/null; then
			strip -o "$tmp/result/bin/$t" "$f"
			echo "$t" >>"$tmp/result/built.txt"
		elif [[ -f $f && -x $f ]]; then
			echo "$t (not static)" >>"$tmp/result/failed.txt"
		else
			echo "$t" >>"$tmp/result/failed.txt"
		fi
	done
	cp "$tmp/build.log" "$tmp/result/build.log"
	echo "$series $srcver $sub" >"$tmp/result/source.txt"
	echo "$targets" >"$tmp/result/targets.txt"
	[[ -s $tmp/result/built.txt ]] || {
		cp "$tmp/build.log" "$cache/selftests/failed-build-$series.log"
		tail -30 "$tmp/build.log" >&2
		die "nothing built; full log: $cache/selftests/failed-build-$series.log"
	}
	touch "$tmp/result/.done"
	rm -rf "$dir"
	mv -T "$tmp/result" "$dir"
	log "built $(wc -l <"$dir/built.txt") binaries in $((SECONDS - t0)) s;" \
		"not built: $(tr '\n' ' ' <"$dir/failed.txt")"
	# keep the two newest builds of this series
	# shellcheck disable=SC2012 # our own directory names
	ls -1dt "$cache/selftests/$series"-* | tail -n +3 | xargs -r rm -rf
fi

if [[ -n $outdir ]]; then
	mkdir -p "$outdir"
	missing=
	for b in $(needed "$dir/targets.txt"); do
		if [[ -f $dir/bin/$b ]]; then
			cp "$dir/bin/$b" "$outdir/$b"
		else
			missing+=" $b"
		fi
	done
	[[ -z $missing ]] || {
		grep -E 'error|undefined' "$dir/build.log" | head -30 >&2
		die "run list binaries that did not build:$missing (log: $dir/build.log)"
	}
fi
echo "$dir"
