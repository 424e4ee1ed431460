#!/bin/bash
# run-guest.sh RELEASE INITRD LOG [TIMEOUT_S]
#
# Boots $VMAMERGE_CACHE/kernels/RELEASE/boot/vmlinuz-RELEASE with INITRD under
# QEMU TCG (1 vCPU, or 2 on multi-threaded TCG with QEMU 10.0 from
# bookworm-backports; 3 GiB in two NUMA nodes; panic_on_warn).
#   LOG          serial console (ttyS0): kernel log + everything the guest says
#   LOG.results  results channel (ttyS1): what the host parses
# The results channel is streamed to stdout while the guest runs, each line
# prefixed with $VMAMERGE_STREAM_PREFIX (default "  guest| "; set it to ""
# for the demo; VMAMERGE_STREAM=0 to stream nothing).
# Exit 0 only if the guest reached GUEST-DONE without GUEST-SPLAT,
# GUEST-BASELINE-SPLAT or a kernel panic; 1 otherwise (timeout included).
#
# Environment: VMAMERGE_CACHE, VMAMERGE_GUEST_APPEND (extra kernel
# arguments, e.g. vmamerge_test=demo; unknown NAME=VALUE words reach /init,
# and so the guest tests, as environment variables:
# VMAMERGE_GUEST_APPEND="VMAMERGE_CYCLES=2"), VMAMERGE_QEMU_EXTRA (extra QEMU
# arguments, word-split), VMAMERGE_STREAM_PREFIX,
# VMAMERGE_GUEST_CPUS (1 or 2; default 1), VMAMERGE_TCG_THREAD (multi or
# single, with 2 vCPUs; default multi), VMAMERGE_QEMU (the
# qemu-system-x86_64 to run; default: the host's with one vCPU,
# $VMAMERGE_CACHE/qemu/current/qemu-system-x86_64 from tests/setup.sh with
# two).
set -euo pipefail

usage() { echo "usage: $0 RELEASE INITRD LOG [TIMEOUT_S]" >&2; exit 2; }
(($# >= 3 && $# <= 4)) || usage
rel=$1 initrd=$2 log=$3 timeout_s=${4:-1800}
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
kernel=$cache/kernels/$rel/boot/vmlinuz-$rel
res=$log.results
prefix=${VMAMERGE_STREAM_PREFIX-"  guest| "}

[[ -f $kernel ]] || { echo "run-guest: $kernel missing: run tests/setup.sh" >&2; exit 1; }
[[ -f $initrd ]] || { echo "run-guest: $initrd missing" >&2; exit 1; }
mkdir -p "$(dirname "$log")"
: >"$log"
: >"$res"

# vCPUs: one by default.  VMAMERGE_GUEST_CPUS=2 gives two, each on its own
# host thread (multi-threaded TCG), run by QEMU 10.0 from bookworm-backports
# (tests/qemu/install-qemu.sh): Debian 12's QEMU 7.2 got the kernel's
# int3-based text patching wrong under multi-threaded TCG (livepatch
# transitions oopsed), 10.0 does not.  They stay opt-in because every
# livepatch transition on 6.12 retargets ~480 cond_resched call sites, each
# text_poke_bp() with synchronous IPIs to the other vCPU, and on a loaded
# host that makes a load/unload cycle minutes long (docs/testing.md, "Two
# vCPUs").  VMAMERGE_TCG_THREAD=single puts both vCPUs on one host thread.
# With two vCPUs, one socket per node: both in one socket (QEMU's default)
# share an LLC across nodes and the kernel WARNs in topology_sane() -
# fatal with panic_on_warn.  With one, node 1 has memory but no CPU.
# la57=off: with 5-level paging a debug kernel splatted early under TCG
# (shared/design/craft.md). quiet, then loglevel=5: warnings and worse
# reach the console (a WARN's own lines and its dump_page() before a
# panic_on_warn, the stacks of KCSAN reports).  The order matters: both set
# the console's level as the command line is read, so a "quiet" after
# "loglevel=5" (as here until 27 Nov 2026) left errors only.  Stall
# detectors are relaxed a little for slow TCG hosts; real deadlocks still
# trip them.
append="console=ttyS0,115200 panic_on_warn=1 panic=-1 oops=panic quiet loglevel=5"
append+=" log_buf_len=4M rcupdate.rcu_cpu_stall_timeout=60 watchdog_thresh=30"
append+=" ${VMAMERGE_GUEST_APPEND:-}"

ncpus=${VMAMERGE_GUEST_CPUS:-1}
tcg_thread=${VMAMERGE_TCG_THREAD:-multi}
qemu_bin=${VMAMERGE_QEMU:-}
if [[ -z $qemu_bin ]]; then
	qemu_bin="qemu-system-x86_64"
	((ncpus == 1)) || qemu_bin=$cache/qemu/current/qemu-system-x86_64
fi
[[ -x $qemu_bin ]] || command -v "$qemu_bin" >/dev/null ||
	{ echo "run-guest: $qemu_bin missing: run tests/setup.sh (or set VMAMERGE_QEMU)" >&2; exit 1; }
[[ $tcg_thread == multi || $tcg_thread == single ]] ||
	{ echo "run-guest: VMAMERGE_TCG_THREAD must be multi or single" >&2; exit 1; }
# shellcheck disable=SC2054 # commas belong to QEMU's option syntax
case $ncpus in
2)
	cpus=(-accel "tcg,thread=$tcg_thread" -smp 2,sockets=2,cores=1,threads=1)
	node1=(-numa node,nodeid=1,cpus=1,memdev=m1)
	;;
1)
	cpus=(-accel tcg -smp 1)
	node1=(-numa node,nodeid=1,memdev=m1)
	;;
*) echo "run-guest: VMAMERGE_GUEST_CPUS must be 1 or 2" >&2; exit 1 ;;
esac
qemu_ver=$("$qemu_bin" --version | sed -n '1s/^QEMU emulator version \([^ ]*\).*/\1/p')
cpu_desc="$ncpus vCPU, TCG thread=$tcg_thread"
((ncpus == 2)) || cpu_desc="1 vCPU"
# shellcheck disable=SC2054 # commas belong to QEMU's option syntax
qemu=("$qemu_bin" -nodefaults -no-user-config
	"${cpus[@]}" -cpu max,la57=off -m 3G
	-object memory-backend-ram,id=m0,size=1536M
	-object memory-backend-ram,id=m1,size=1536M
	-numa node,nodeid=0,cpus=0,memdev=m0 "${node1[@]}"
	-display none -monitor none -no-reboot
	-serial "file:$log" -serial "file:$res"
	-kernel "$kernel" -initrd "$initrd" -append "$append")
# shellcheck disable=SC2206 # word splitting wanted
[[ -n ${VMAMERGE_QEMU_EXTRA:-} ]] && qemu+=(${VMAMERGE_QEMU_EXTRA})

t0=$EPOCHREALTIME
elapsed() { awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

timeout -k 10 "$timeout_s" "${qemu[@]}" >"$log.qemu-stderr" 2>&1 &
qpid=$!
boot_s=
while IFS= read -r line; do
	line=${line%$'\r'}
	if [[ -z $boot_s && $line == GUEST-BOOT-OK* ]]; then
		boot_s=$(elapsed)
		line+=" (host: ${boot_s}s)"
	fi
	[[ ${VMAMERGE_STREAM:-1} == 0 ]] || printf '%s%s\n' "$prefix" "$line"
done < <(tail -n +1 -s 0.5 -F --pid="$qpid" "$res" 2>/dev/null)
set +e
wait "$qpid"
qrc=$?
set -e
total_s=$(elapsed)

fail=()
if ((qrc == 124 || qrc == 137)); then
	fail+=("timeout after ${timeout_s}s")
elif ((qrc != 0)); then
	fail+=("qemu exit status $qrc: $(tr '\n' ' ' <"$log.qemu-stderr")")
fi
# (grep reads the files itself: `tr | grep -q` fails under pipefail when grep
# stops early on a large file.)
grep -aq 'Kernel panic' "$log" && fail+=("kernel panic: $(grep -m1 -a 'Kernel panic' "$log" | tr -d '\r')")
grep -aq '^GUEST-BASELINE-SPLAT' "$res" && fail+=("splat before anything was loaded (GUEST-BASELINE-SPLAT)")
grep -aqE $'^GUEST-SPLAT\r?$' "$res" && fail+=("splat in dmesg (GUEST-SPLAT)")
grep -aq '^GUEST-DONE' "$res" || fail+=("guest did not reach GUEST-DONE")
if ! grep -aq '^GUEST-INFO cpus: .*node1' "$res"; then
	echo "run-guest: warning: the guest did not show NUMA node1" >&2
fi

echo "run-guest: $rel boot ${boot_s:-?}s, total ${total_s}s (QEMU ${qemu_ver:-?}, $cpu_desc), log $log"
if ((${#fail[@]})); then
	printf 'run-guest: FAILED: %s\n' "${fail[@]}"
	exit 1
fi
exit 0
