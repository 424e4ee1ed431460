#!/bin/bash
# build.sh SERIES [debug|kcsan]: build (or reuse) the vmamerge debug kernel
# of SERIES ("debug", the default: the debug twin make check boots) or its
# KCSAN twin ("kcsan": the data-race detector instead of KASAN, release
# <upstream>-vmamerge-kcsan; tests/debug-kernel/kcsan.config; not part of
# make check).
#
# Source: $VMAMERGE_CACHE/src/linux-source-SERIES (tests/setup.sh unpacks
# the Debian linux-source package of module/builds.list: the same sources as the
# stock image).  Configuration: allnoconfig + tests/debug-kernel/debug.config
# + tests/debug-kernel/debug-SERIES.config.
#
# Cache: one build tree per series and Debian version,
# $VMAMERGE_CACHE/debug/SERIES-VERSION/obj.  KEY, a hash of the fragments,
# the build recipe below and the compiler, is written to .../done when a
# build finishes; with the same KEY the build is reused, with another one
# (or after an interrupted build) kbuild rebuilds incrementally what the
# changed configuration touches.  Another Debian version gets a new tree.
#
# It then publishes the kernel in the layout the rest of the tests use for
# the stock kernels (release R = <upstream version>-vmamerge-VARIANT):
#   kernels/R/boot/vmlinuz-R           the bzImage
#   kernels/R/lib/modules/R/modules.dep   empty: everything is built in
#   headers/R/usr/src/linux-headers-R  -> the build tree (KDIR for the module)
#   symbols/System.map-R               the build's System.map
# and prints R on stdout (everything else goes to stderr).
#
# UTS version: "#1 SMP PREEMPT_DYNAMIC Debian <debian version> vmamerge-VARIANT"
# (UTS_VERSION holds 64 characters at most) - module/validated_builds.c
# accepts exactly that for R.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../lib.sh
source "$repo/tests/lib.sh"	# builds_of
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
die() { echo "debug-kernel: ERROR: $*" >&2; exit 1; }
log() { echo "debug-kernel: $*" >&2; }

(($# == 1 || $# == 2)) || { echo "usage: $0 SERIES [debug|kcsan]" >&2; exit 2; }
series=$1
variant=${2:-debug}
[[ $variant == debug || $variant == kcsan ]] ||
	{ echo "usage: $0 SERIES [debug|kcsan]" >&2; exit 2; }
frags=("$here/debug.config")
[[ -f $here/debug-$series.config ]] && frags+=("$here/debug-$series.config")
[[ $variant == kcsan ]] && frags+=("$here/kcsan.config")

# Options that must be set after kconfig resolved dependencies: without any
# of them the debug tier would silently test less than it claims.
required=(LIVEPATCH KPROBES UPROBES DEBUG_FS KALLSYMS_ALL MODULES MODULE_UNLOAD
	SMP NUMA ACPI_NUMA SWAP ZRAM COMPACTION MIGRATION KSM TRANSPARENT_HUGEPAGE
	MEM_SOFT_DIRTY USERFAULTFD PROC_PAGE_MONITOR HUGETLBFS
	SERIAL_8250_CONSOLE BLK_DEV_INITRD DEVTMPFS PREEMPT_DYNAMIC MEMCG
	PROVE_LOCKING DEBUG_VM DEBUG_VM_MAPLE_TREE
	DEBUG_VM_PGFLAGS DEBUG_LIST PAGE_TABLE_CHECK PAGE_TABLE_CHECK_ENFORCED)
if [[ $variant == kcsan ]]; then
	required+=(KCSAN KCSAN_EARLY_ENABLE KCSAN_SELFTEST)
else
	required+=(KASAN KASAN_GENERIC)
	[[ $series == 6.1 ]] || required+=(SLUB_RCU_DEBUG)
fi

debver=$(VMAMERGE_KERNELS=$series builds_of full | awk 'NR == 1 { print $3 }')
[[ -n $debver ]] || die "series $series has no full-tier build in module/builds.list"
src=$cache/src/linux-source-$series
[[ -f $src/Makefile ]] || die "$src missing: run tests/setup.sh"
[[ $(cat "$src.version" 2>/dev/null) == "$debver" ]] ||
	die "$src is not Debian $debver: run tests/setup.sh"
upstream=${debver%%-*}
rel=$upstream-vmamerge-$variant

# Everything that changes the kernel besides the sources and the fragments:
# bump recipe when the make invocation below changes.
recipe=1
stamp="Debian $debver vmamerge-$variant"
key=$( {
	cat "${frags[@]}"
	echo "$recipe $stamp"
	gcc --version | head -n1
} | sha256sum | cut -c1-12)
# (the debug twin's tree keeps its name of before the KCSAN twin existed)
prefix=$series
[[ $variant == kcsan ]] && prefix=kcsan-$series
top=$cache/debug/$prefix-${debver//[^A-Za-z0-9.+-]/_}
obj=$top/obj
jobs=$(nproc)

kmake() {
	make -C "$src" O="$obj" ARCH=x86_64 -j"$jobs" \
		KBUILD_BUILD_VERSION=1 KBUILD_BUILD_USER=vmamerge \
		KBUILD_BUILD_HOST=debug \
		KBUILD_BUILD_TIMESTAMP="$stamp" "$@"
}

check_config() {
	local o missing=()
	for o in "${required[@]}"; do
		grep -q "^CONFIG_$o=y" "$obj/.config" || missing+=("$o")
	done
	((${#missing[@]} == 0)) ||
		die "$series: not set after allnoconfig + debug.config: ${missing[*]}"
}

build() {
	local t0=$SECONDS
	mkdir -p "$obj"
	rm -f "$top/done"
	cat "${frags[@]}" >"$top/fragment.config"
	log "building $rel from $src (key $key, log $top/build.log)"
	kmake KCONFIG_ALLCONFIG="$top/fragment.config" allnoconfig >"$top/build.log" 2>&1 ||
		{ tail -n 30 "$top/build.log" >&2; die "$series: allnoconfig failed"; }
	check_config
	[[ $(kmake -s kernelrelease 2>/dev/null) == "$rel" ]] ||
		die "$series: kernelrelease is '$(kmake -s kernelrelease)', want $rel"
	if ! kmake all >>"$top/build.log" 2>&1; then
		tail -n 40 "$top/build.log" >&2
		die "$series: kernel build failed (log $top/build.log)"
	fi
	echo "$((SECONDS - t0))" >"$top/build-seconds"
	echo "$key" >"$top/done"
	log "$rel built in $((SECONDS - t0)) s"
}

publish() {
	local k=$cache/kernels/$rel h=$cache/headers/$rel
	rm -rf "$k" "$h"
	mkdir -p "$k/boot" "$k/lib/modules/$rel" "$h/usr/src" "$cache/symbols"
	cp "$obj/arch/x86/boot/bzImage" "$k/boot/vmlinuz-$rel"
	: >"$k/lib/modules/$rel/modules.dep"
	ln -s "$obj" "$h/usr/src/linux-headers-$rel"
	cp "$obj/System.map" "$cache/symbols/System.map-$rel"
	# Trees of other Debian versions of this series are dead weight.
	find "$cache/debug" -mindepth 1 -maxdepth 1 -name "$prefix-*" ! -path "$top" \
		-exec rm -rf {} +
}

mkdir -p "$cache/debug"
exec 8>"$cache/debug/.lock-$prefix"
flock 8
if [[ $(cat "$top/done" 2>/dev/null) == "$key" ]]; then
	log "$rel: cached build $top (key $key, built in $(cat "$top/build-seconds") s)"
else
	build
fi
publish
echo "$rel"
