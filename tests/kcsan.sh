#!/bin/bash
# `make kcsan`: the module under KCSAN, the kernel's data-race detector, on
# the KCSAN twin of every full-tier series (never part of make check: two
# more kernel builds and boots than CI's budget holds; docs/testing.md,
# "The KCSAN twin").
#
#   bash tests/kcsan.sh [TORTURE_SECONDS]     (default 600)
#
# Per series: builds (or reuses) <upstream>-vmamerge-kcsan
# (tests/debug-kernel/build.sh SERIES kcsan), builds the module against it
# and boots it with two vCPUs (tests/quick.sh) and panic_on_warn=0 - a
# KCSAN report is a warning, and the run is there to collect all of them.
# In the guest: the renumber, in-place, edges, family, large-folio and
# compaction suites, the SMP set (multi-threaded torture with pins and
# migration, t_compact with a writer, t_forkverify, fork hold, load/unload
# cycles) and torture.sh opted in for TORTURE_SECONDS.  Then every report,
# whole, into the log, and a summary by function pair: a report with a
# vmamerge function on either side's stack is the module's and fails the
# run, as does any other splat or test failure; the others are the
# kernel's own races, listed and counted (they happen without the module).
#
# Needs the caches of a previous `make check` (headers, initramfs tools,
# QEMU 10.0).  Environment: VMAMERGE_KERNELS (series), VMAMERGE_KCSAN_SEED
# (torture's first seed, default 710000000), VMAMERGE_MTORTURE_S (the SMP
# set's torture, default 60 s per run).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$here/lib.sh"
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}

secs=${1:-600}
if [[ ! $secs =~ ^[0-9]+$ ]] || ((secs < 10)); then
	echo "usage: $0 [TORTURE_SECONDS>=10]" >&2
	exit 2
fi
seed=${VMAMERGE_KCSAN_SEED:-710000000}
mts=${VMAMERGE_MTORTURE_S:-60}
out=$cache/logs/kcsan-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"

# The guest's commands (run.sh's helpers; tests/quick.sh).
guest_cmds="MTS=$mts
load; renumber_tests; inplace_tests; edges_tests; family_tests; large_tests
compact_tests; unload
smp
load; \"\$DIR/torture.sh\" -t $secs on $seed 10000; unload
kcsan_reports
other_splats >\"\$TMP/other\"; [ ! -s \"\$TMP/other\" ]
tap \$? \"no splat besides KCSAN reports\" \"\$(head -20 \"\$TMP/other\")\""

# summarize OUT: the reports of quick.sh's output by title ("data-race in
# A / B"), "ours" when a vmamerge function is on a stack; prints "OURS n"
# last.  The lines of the results channel, not their streamed copies.
summarize() {
	tr -d '\r' <"$1" | sed -n 's/^KCSAN| //p' | awk '
		/BUG: KCSAN:/ { flush(); t = $0; sub(/.*BUG: KCSAN: /, "", t)
				ours = 0; next }
		/\[vmamerge\]|vmamerge_[a-z0-9_.]*\+0x/ { ours = 1 }
		END { flush()
		      for (k in n) printf "%5d  %s  %s\n", n[k], own[k] ? "MODULE" : "kernel", k
		      print "OURS " total_ours + 0 }
		function flush() { if (t == "") return
				   n[t]++; if (ours) { own[t] = 1; total_ours++ }
				   t = "" }'
}

rc=0
while read -r series _; do
	rel=$(bash "$here/debug-kernel/build.sh" "$series" kcsan)
	echo "=== $rel: suites, SMP set, torture.sh opted in for $secs s (seed $seed)"
	set +e
	VMAMERGE_GUEST_CPUS=2 VMAMERGE_GUEST_APPEND="panic_on_warn=0" \
		QUICK_TAG=kcsan QUICK_TIMEOUT_S=$((secs + 5400)) \
		bash "$here/quick.sh" "$rel" "$guest_cmds" >"$out/$rel.out" 2>&1
	qrc=$?
	set -e
	log=$(sed -n 's/^log: \(.*\) (run-guest exit .*/\1/p' "$out/$rel.out" | tail -n1)
	grep -a 'torture o[nf]*:\|GUEST-RESULT\|not ok\|KCSAN-REPORTS\|KCSAN-STATE' \
		"$out/$rel.out" | head -n 60 || true
	[[ -n $log ]] && cp "$log" "$out/$rel.log"
	summarize "$out/$rel.out" >"$out/$rel.summary"
	echo "KCSAN reports of $rel (count, whose, race):"
	sed '$d' "$out/$rel.summary"
	ours=$(sed -n 's/^OURS //p' "$out/$rel.summary")
	if ((qrc != 0)); then
		echo "$rel: FAILED: a test failed or the guest did not finish (quick.sh exit $qrc; $out/$rel.out)"
		rc=1
	fi
	if ((${ours:-0} > 0)); then
		echo "$rel: FAILED: $ours KCSAN report(s) with the module on a stack"
		rc=1
	fi
done < <(builds_of full | awk '{ print $1 }' | sort -u)
echo "logs: $out"
exit $rc
