#!/bin/bash
# `make demo`: boots one matrix kernel (default: the stock build of 6.12;
# VMAMERGE_DEMO_KERNEL=6.1, or a full release string, a debug twin's too) in QEMU and runs
# tests/qemu/demo-guest.sh there: tests/qemu/demo-prog.c on the stock kernel,
# then opted in to vmamerge, with `vmamerge maps -p` and `vmamerge stats`.
#
# Environment: as tests/check.sh (VMAMERGE_CACHE, VMAMERGE_SKIP_SETUP=1),
# VMAMERGE_DEMO_KERNEL.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=check.sh
source "$(dirname "${BASH_SOURCE[0]}")/check.sh"

want=${VMAMERGE_DEMO_KERNEL:-6.12}
read_matrix
# A series means its stock Debian build (read_matrix lists the debug twins
# too); a release string that exact build, a debug twin included.
rel='' ser='' kind=''
for i in "${!series[@]}"; do
	if [[ ${releases[$i]} == "$want" ||
	      (-z $rel && ${series[$i]} == "$want" && ${kinds[$i]} == stock) ]]; then
		rel=${releases[$i]} ser=${series[$i]} kind=${kinds[$i]}
	fi
done
[[ -n $rel ]] || { echo "demo: '$want' is not a full-tier build of module/builds.list" >&2; exit 1; }
echo "=== demo kernel: $rel ($kind)"

# The guest's swap is zram: a module to load where it is one, nothing to
# do where it is built in (the debug twins build everything in).
gmods=zram
builtin=$cache/kernels/$rel/lib/modules/$rel/modules.builtin
if [[ $kind == debug ]] || { [[ -f $builtin ]] && grep -q '/zram\.ko$' "$builtin"; }; then
	gmods=""
fi

# The demo builds in $cache/build/<release>/ as make check does: one at a
# time (check.sh's lock).
mkdir -p "$cache"
exec 9>"$cache/.check.lock"
if ! flock -n 9; then
	echo "demo: a make check is using $cache; waiting for it" >&2
	flock 9
fi

mkdir -p "$logdir"
tapfile=$logdir/tap.txt
: >"$tapfile"

if [[ ${VMAMERGE_SKIP_SETUP:-0} != 1 ]]; then
	VMAMERGE_KERNELS=$ser bash "$repo/tests/setup.sh"
fi

echo "=== building the module for $rel"
src=$(build_dir "$rel")
stage_module_src "$src"
kdir=$(kdir_of "$rel")
kdir_ready "$rel" || { kdir_missing_msg "$rel" >&2; exit 1; }
make -C "$src" -j"$jobs" KDIR="$kdir" KVER="$rel" module >"$logdir/build-$rel.log" 2>&1 || {
	show_tail "$logdir/build-$rel.log" 60
	exit 1
}

echo "=== building the CLI and the demo program"
make -s -C "$repo/userspace" static
demo=$cache/demo
rm -rf "$demo"
mkdir -p "$demo/stage/demo"
gcc -static -O2 -Wall -o "$demo/stage/demo/demo-prog" "$repo/tests/qemu/demo-prog.c"
install -m 755 "$repo/tests/qemu/demo-guest.sh" "$demo/stage/demo/demo.sh"

# shellcheck disable=SC2034 # read by stage_guest (check.sh)
guest_bin=/nonexistent # no guest tests in the demo
stage_guest "$rel" "$demo/stage.common"
cp -a "$demo/stage.common/." "$demo/stage/"
VMAMERGE_GUEST_MODULES=$gmods \
	bash "$repo/tests/qemu/mkinitramfs.sh" "$rel" "$demo/demo.cpio.gz" "$demo/stage"

echo "=== booting $rel (QEMU TCG, about 10 s to boot)"
VMAMERGE_GUEST_APPEND=vmamerge_test=demo VMAMERGE_STREAM_PREFIX="" \
	bash "$repo/tests/qemu/run-guest.sh" "$rel" "$demo/demo.cpio.gz" "$logdir/demo-$rel.log" 600
