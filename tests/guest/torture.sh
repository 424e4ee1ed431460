#!/bin/sh
# Data-checking torture under kernel noise (busybox sh, in the guest).
#
#   torture.sh [-t SECONDS] [-T SECONDS] [-m] [off|on] SEEDS NOPS
#
#   off      t_torture runs without opting in (module loaded or not)
#   on | -m  t_torture opts in through /dev/vmamerge (-o); the module must
#            be loaded
#   SEEDS    e.g. "1 2 3" or "1,2,3": one t_torture run of NOPS ops per seed
#   -t S     soak: from the first seed of SEEDS on, seed after seed (+1),
#            until S seconds have passed; NOPS bounds each run (0: none)
#   -T S     bound each t_torture run to S seconds as well (for make
#            check: the run passes with the ops it did; the count is shown)
#   -N OPS   soak: stop as well once the runs have done OPS ops in all
#
# Noise while t_torture runs: THP enabled=always with a busy khugepaged,
# KSM running fast, t_migrate moving the window's pages between NUMA nodes
# 0 and 1 with a full compaction every few rounds, zram swap (MADV_PAGEOUT
# in the op mix).  Settings are restored at the end.
#
# Output: unnumbered TAP ("ok - ...", "not ok - ...", "# ...") for
# run.sh's emit; exit status 0 when everything passed.
#
# Environment: TORTURE_WINDOW (pages, default 1024), TORTURE_MIGRATE_MS
# (t_migrate pause, default 50), TORTURE_COMPACT_EVERY (rounds, 10),
# TORTURE_KSM_PAGES (1000), TORTURE_KSM_SLEEP_MS (10), TORTURE_ARGS (more
# t_torture arguments, e.g. "-c 4").

DIR=$(cd "$(dirname "$0")" && pwd)
MM=/sys/kernel/mm
THP=$MM/transparent_hugepage
KSM=$MM/ksm
SOAK=
RUNMAX=
OPSMAX=
MODE=off

usage() {
	echo "usage: torture.sh [-t SECONDS] [-T SECONDS] [-N OPS] [-m] [off|on] SEEDS NOPS" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	-m) MODE=on ;;
	-t) [ $# -ge 2 ] || usage; SOAK=$2; shift ;;
	-T) [ $# -ge 2 ] || usage; RUNMAX=$2; shift ;;
	-N) [ $# -ge 2 ] || usage; OPSMAX=$2; shift ;;
	off|on) MODE=$1 ;;
	-*) usage ;;
	*) break ;;
	esac
	shift
done
[ $# -eq 2 ] || usage
SEEDS=$(echo "$1" | tr ',' ' ')
NOPS=$2
WINDOW=${TORTURE_WINDOW:-1024}

now_ms() {
	if [ -x "$DIR/t_wait" ]; then
		"$DIR/t_wait" now
	else
		echo $(($(date +%s) * 1000))
	fi
}

# ---- noise settings ----

SAVED=
# save FILE: remember FILE's value (the bracketed word for THP's files)
save() {
	[ -w "$1" ] || return 1
	_v=$(cat "$1" 2>/dev/null) || return 1
	case $_v in *\[*\]*) _v=${_v#*[}; _v=${_v%%]*} ;; esac
	SAVED="$SAVED$1=$_v
"
	return 0
}

# set VALUE FILE
set_knob() {
	if save "$2"; then
		(echo "$1" > "$2") 2>/dev/null || echo "# torture: could not write $1 to $2"
	else
		echo "# torture: $2 missing or not writable"
	fi
}

restore() {
	printf '%s' "$SAVED" | while IFS='=' read -r _f _v; do
		[ -n "$_f" ] && (echo "$_v" > "$_f") 2>/dev/null
	done
}

VMSTAT_KEYS="thp_fault_alloc thp_collapse_alloc thp_split_page thp_split_pmd pgmigrate_success pgmigrate_fail compact_stall pswpout pswpin"
vmstat_snap() {
	for _k in $VMSTAT_KEYS; do
		awk -v k="$_k" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' /proc/vmstat
	done
	cat "$KSM/full_scans" 2>/dev/null || echo 0
}

TMP=$(mktemp -d /tmp/torture.XXXXXX 2>/dev/null) || TMP=/tmp/torture.$$
mkdir -p "$TMP"
trap 'restore; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

set_knob always "$THP/enabled"
set_knob 100 "$THP/khugepaged/scan_sleep_millisecs"
set_knob 1000 "$THP/khugepaged/alloc_sleep_millisecs"
set_knob "${TORTURE_KSM_PAGES:-1000}" "$KSM/pages_to_scan"
set_knob "${TORTURE_KSM_SLEEP_MS:-10}" "$KSM/sleep_millisecs"
set_knob 1 "$KSM/run"
# Debug kernels of 6.12 only: keep fully mapped THPs off the deferred split
# queue.  Debian's 6.12.117 requeues a migrated THP with the partially-mapped
# state its source had before the move (upstream "mm: migrate: requeue
# destination folio on deferred split queue", March 2026); when the torture
# unmaps part of the new folio between remove_migration_ptes() and that
# requeue, deferred_split_folio(dst, false) finds the flag already set and
# its VM_WARN_ON_FOLIO fires - with panic_on_warn, a panic in t_migrate
# (seen once, docs/testing.md).  That is a race in the kernel's own code,
# not in ours; with shrink_underused off only partially mapped THPs are ever
# queued, and the requeue passes true.  Stock kernels keep the default.
case $(uname -r) in
*debug*) [ -e "$THP/shrink_underused" ] && set_knob 0 "$THP/shrink_underused" ;;
esac

OPT=
if [ "$MODE" = on ]; then
	OPT=-o
	if [ ! -c /dev/vmamerge ]; then
		echo "not ok - torture on: /dev/vmamerge missing (module not loaded)"
		exit 1
	fi
fi

echo "# torture $MODE: seeds $SEEDS, ${NOPS} ops each${RUNMAX:+ (at most ${RUNMAX} s)}${SOAK:+, soak ${SOAK} s}${OPSMAX:+ or $OPSMAX ops}, window $WINDOW pages; noise: THP always + khugepaged 100 ms, KSM ${TORTURE_KSM_PAGES:-1000} pages/${TORTURE_KSM_SLEEP_MS:-10} ms, t_migrate every ${TORTURE_MIGRATE_MS:-50} ms, compaction every ${TORTURE_COMPACT_EVERY:-10} rounds, zram swap"

FAILS=0
RUNS=0
OPS=0
T0=$(now_ms)
vmstat_snap > "$TMP/vm0"

# one SEED [TIME_LIMIT_S]: a t_torture run with t_migrate beside it
one() {
	_seed=$1
	_targs="-s $_seed -n $NOPS -w $WINDOW -p $TMP/pub"
	_lim=${2:-$RUNMAX}
	[ -n "$RUNMAX" ] && [ -n "$2" ] && [ "$RUNMAX" -lt "$2" ] && _lim=$RUNMAX
	[ -n "$_lim" ] && _targs="$_targs -t $_lim"
	rm -f "$TMP/pub"
	# shellcheck disable=SC2086 # word splitting wanted
	"$DIR/t_torture" $OPT $_targs ${TORTURE_ARGS:-} > "$TMP/t.out" 2>&1 &
	_tp=$!
	"$DIR/t_migrate" -i "${TORTURE_MIGRATE_MS:-50}" -k "${TORTURE_COMPACT_EVERY:-10}" \
		"$TMP/pub" > "$TMP/m.out" 2>&1 &
	_mp=$!
	wait $_tp
	_rc=$?
	kill -TERM $_mp 2>/dev/null
	wait $_mp
	_mrc=$?
	RUNS=$((RUNS + 1))
	_nres=0
	_nfail=0
	while IFS= read -r _l; do
		case $_l in
		"ok - "*) _nres=$((_nres + 1)) ;;
		"not ok - "*) _nres=$((_nres + 1)); _nfail=$((_nfail + 1)) ;;
		"#"*) ;;
		*) _l="# $_l" ;;
		esac
		echo "$_l"
	done < "$TMP/t.out"
	if [ "$_rc" -ne 0 ] && [ "$_nfail" -eq 0 ]; then
		echo "not ok - torture $MODE seed $_seed: t_torture exited with status $_rc without a failed test"
		_nfail=1
	elif [ "$_nres" -eq 0 ]; then
		echo "not ok - torture $MODE seed $_seed: t_torture printed no result"
		_nfail=1
	fi
	# t_torture's "# seed S: N ops (...)" line: the ops this run did
	_n=$(sed -n 's/^# seed [0-9]*: \([0-9]*\) ops .*/\1/p' "$TMP/t.out" | head -n 1)
	OPS=$((OPS + ${_n:-0}))
	sed 's/^\([^#]\)/# \1/' "$TMP/m.out"
	if [ "$_mrc" -ne 0 ]; then
		echo "not ok - torture $MODE seed $_seed: t_migrate exited with status $_mrc"
		_nfail=$((_nfail + 1))
	fi
	FAILS=$((FAILS + _nfail))
	[ "$_nfail" -eq 0 ]
}

if [ -n "$SOAK" ]; then
	_seed=${SEEDS%% *}
	while :; do
		_left=$((SOAK - ($(now_ms) - T0) / 1000))
		[ "$_left" -gt 0 ] || break
		one "$_seed" "$_left"
		if [ -n "$OPSMAX" ] && [ "$OPS" -ge "$OPSMAX" ]; then
			echo "# torture $MODE: $OPS ops done (-N $OPSMAX), stopping the soak"
			break
		fi
		if [ "$FAILS" -ge 5 ]; then
			echo "# torture $MODE: stopping the soak after $FAILS failures"
			break
		fi
		_seed=$((_seed + 1))
	done
else
	for _seed in $SEEDS; do
		one "$_seed"
	done
fi

T1=$(now_ms)
vmstat_snap > "$TMP/vm1"
_i=1
_d=
for _k in $VMSTAT_KEYS ksm_full_scans; do
	_a=$(sed -n "${_i}p" "$TMP/vm0")
	_b=$(sed -n "${_i}p" "$TMP/vm1")
	_d="$_d $_k=$((_b - _a))"
	_i=$((_i + 1))
done
echo "# torture $MODE: $RUNS run(s), $OPS ops, $FAILS failure(s) in $(((T1 - T0) / 1000)) s; kernel noise during the runs:$_d"
[ "$FAILS" -eq 0 ]
