#!/bin/sh
# run-selftests.sh LABEL RESULTFILE [LIST]: run the kernel's own mm selftests
# of the run list (default: tests.txt next to this script) inside the busybox
# guest, as root.  Binaries: bin/ next to this script.
#
# RESULTFILE gets one line per test, "NAME RESULT SECONDS", RESULT one of
# pass (exit 0), skip (exit 4, KSFT_SKIP), fail (any other exit status or a
# signal), timeout (killed at the run list's timeout); and, for a test that
# prints ksft TAP ("ok N desc", "not ok N desc", "ok N desc # SKIP ..."),
# one line per subtest, "NAME:DESC RESULT" (DESC with blanks as '_', a
# repeated DESC numbered "#2", "#3", ...), RESULT pass, fail or skip.
# Each test's output: $VMAMERGE_SELFTESTS_LOGDIR (default
# /tmp/selftests-logs/LABEL)/NAME.log.  Progress on stdout as "# " lines.
#
# Run list: "NAME TIMEOUT TIER [SETUP...] PROG ARGS..." (tests-SERIES.txt
# documents the columns).  "run-selftests.sh --names - [LIST]" prints the
# names of the tests a run would run, "--unrecorded - [LIST]" those of them
# whose first SETUP word is "newest" (built from the newest Debian source: their
# results without the module are not recorded per kernel, corpus.sh).
#
# Environment:
#   VMAMERGE_SELFTESTS_TIER   quick (tier quick only), std (quick and std:
#                             the default) or full (every test)
#   VMAMERGE_SELFTESTS_ONLY   NAMEs separated by spaces or commas: run only
#                             these (any tier)
#   VMAMERGE_SELFTESTS_HUGEPAGES  hugetlb pages to reserve (160)
#   VMAMERGE_SELFTESTS_DEBUG  non-empty: print the runner's own time per test
#   VMAMERGE_SELFTESTS_TIMEOUT_SCALE  multiplies the run list's timeouts (1)
#
# The guest state the tests change (hugetlb pages, hugetlbfs mount, THP, KSM
# and a few sysctls) is set up here and restored after every test and at the
# end.
LABEL=${1:?usage: run-selftests.sh LABEL RESULTFILE [LIST]}
RESULTS=${2:?usage: run-selftests.sh LABEL RESULTFILE [LIST]}
DIR=$(cd "$(dirname "$0")" && pwd)
LIST=${3:-$DIR/tests.txt}
BIN=$DIR/bin
TIER=${VMAMERGE_SELFTESTS_TIER:-std}
ONLY=${VMAMERGE_SELFTESTS_ONLY:-}
# commas for spaces, as on the kernel command line (busybox sh)
# shellcheck disable=SC3060
ONLY=${ONLY//,/ }
SCALE=${VMAMERGE_SELFTESTS_TIMEOUT_SCALE:-1}
LOGDIR=${VMAMERGE_SELFTESTS_LOGDIR:-/tmp/selftests-logs/$LABEL}
WORK=/tmp/selftests-work
HUGE=$WORK/huge         # hugetlbfs mount, for the run list's $HUGE
NR_HUGE=${VMAMERGE_SELFTESTS_HUGEPAGES:-160} # 2 MiB pages reserved
THP=/sys/kernel/mm/transparent_hugepage
KSM=/sys/kernel/mm/ksm
export PATH="$BIN:$PATH"

now() { read -r _u _ </proc/uptime; echo "$_u"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# ---- saved state --------------------------------------------------------------
# save FILE...: remember the current value (the [selected] word of a
# THP-style "a [b] c" file); restore writes back what changed.  Shell
# builtins only: this runs after every test.
SAVED=$WORK/saved
value() { # FILE: its value in _c
	_c=
	case $1 in
	# busybox's read reads a byte at a time, and a sysctl read at an
	# offset > 0 returns nothing
	/proc/*) _c=$(cat "$1" 2>/dev/null) || return 1 ;;
	*) read -r _c <"$1" 2>/dev/null || [ -n "$_c" ] || return 1 ;;
	esac
	case $_c in *"["*"]"*) _c=${_c#*[}; _c=${_c%%]*} ;; esac
}
save() {
	for _f in "$@"; do
		if [ ! -f "$_f" ] || ! value "$_f"; then continue; fi
		[ "$_f" = $KSM/run ] && { KSM_RUN0=$_c; continue; }
		printf '%s %s\n' "$_f" "$_c" >>"$SAVED"
	done
}
restore() {
	# KSM stopped and unmerged first: merge_across_nodes can only change
	# with nothing merged
	[ -n "$KSM_RUN0" ] && echo 2 >$KSM/run 2>/dev/null
	while read -r _f _v; do
		value "$_f" && [ "$_c" = "$_v" ] && continue
		echo "$_v" >"$_f" 2>/dev/null
	done <"$SAVED"
	[ -n "$KSM_RUN0" ] && echo "$KSM_RUN0" >$KSM/run 2>/dev/null
	# hugetlb pages last: a test may have changed them
	echo "$NR_HUGE" >/proc/sys/vm/nr_hugepages 2>/dev/null
}

setup() {
	mkdir -p "$WORK" "$HUGE" "$LOGDIR"
	: >"$SAVED"
	KSM_RUN0=
	save $THP/enabled $THP/defrag $THP/shmem_enabled $THP/use_zero_page \
		$THP/khugepaged/defrag $THP/khugepaged/max_ptes_none \
		$THP/khugepaged/max_ptes_swap $THP/khugepaged/max_ptes_shared \
		$THP/khugepaged/pages_to_scan $THP/khugepaged/scan_sleep_millisecs \
		$THP/khugepaged/alloc_sleep_millisecs $THP/hugepages-*/enabled \
		$KSM/run $KSM/merge_across_nodes $KSM/use_zero_pages \
		$KSM/pages_to_scan $KSM/sleep_millisecs $KSM/max_page_sharing \
		$KSM/stable_node_chains_prune_millisecs $KSM/smart_scan \
		$KSM/advisor_mode \
		/proc/sys/kernel/shmmax /proc/sys/kernel/shmall \
		/proc/sys/vm/overcommit_memory /proc/sys/vm/max_map_count \
		/proc/sys/kernel/yama/ptrace_scope /proc/sys/vm/compact_unevictable_allowed
	NR_HUGE0=$(cat /proc/sys/vm/nr_hugepages)
	echo 3 >/proc/sys/vm/drop_caches
	echo 1 >/proc/sys/vm/compact_memory
	echo "$NR_HUGE" >/proc/sys/vm/nr_hugepages
	_got=$(cat /proc/sys/vm/nr_hugepages)
	[ "$_got" = "$NR_HUGE" ] || echo "# $LABEL: only $_got of $NR_HUGE hugetlb pages"
	grep -q " $HUGE hugetlbfs " /proc/mounts || mount -t hugetlbfs none "$HUGE"
}

teardown() {
	restore
	umount "$HUGE" 2>/dev/null
	echo "$NR_HUGE0" >/proc/sys/vm/nr_hugepages
}

# ---- one test -----------------------------------------------------------------
# tap_results NAME LOG [NONUM]: subtest lines of a ksft TAP log (and of
# uffd-unit-tests' own "Testing NAME... done|skipped [..]|failed [..]")
tap_results() {
	awk -v n="$1" -v nonum="$3" '
	/^Testing .*\.\.\. (done|skipped|failed)/ {
		d = $0
		sub(/^Testing /, "", d)
		r = d
		sub(/\.\.\. (done|skipped|failed).*$/, "", d)
		sub(/^.*\.\.\. /, "", r)
		sub(/ .*/, "", r)
		res = (r == "done") ? "pass" : (r == "skipped") ? "skip" : "fail"
		gsub(/[ \t]+/, "_", d)
		k = n ":" d
		if (seen[k]++) k = k "#" seen[k]
		print k, res
		next
	}
	/^(not )?ok [0-9]+([ \t]|$)/ {
		res = ($1 == "not") ? "fail" : "pass"
		d = $0
		sub(/^(not )?ok [0-9]+[ \t]*(-[ \t]+)?/, "", d)
		num = $0; sub(/^(not )?ok /, "", num); sub(/[^0-9].*/, "", num)
		if (match(d, /#[ \t]*[Ss][Kk][Ii][Pp]/)) {
			if (res == "pass") res = "skip"
			d = substr(d, 1, RSTART - 1)
		} else if (match(d, /#[ \t]*(XFAIL|TODO|exit=)/)) {
			d = substr(d, 1, RSTART - 1)
		}
		sub(/[ \t]+$/, "", d)
		gsub(/[ \t]+/, "_", d)
		if (nonum != "") gsub(/[0-9]+/, "N", d)
		if (d == "") d = "#" num
		k = n ":" d
		if (seen[k]++) k = k "#" seen[k]
		print k, res
	}' "$2"
}

# run_one NAME TIMEOUT CMD...: TIMEOUT "N" (seconds; killed = timeout) or
# "~N" (runs until stopped: still running after N seconds = pass)
run_one() {
	_name=$1 _to=$2
	shift 2
	_log=$LOGDIR/$_name.log
	_tA=$(now)
	_until=0
	case $_to in
	"~"*) _until=1 _to=${_to#"~"} ;; # a duration: not scaled
	*) _to=$((_to * SCALE)) ;;
	esac
	# SETUP words before the program: sysctl:KEY=VALUE (KEY as in
	# /proc/sys with dots, restored afterwards), compact (drop caches and
	# compact memory first, as run_vmtests.sh does before THP and hugetlb
	# tests), nonum (digits in subtest names become N: names that carry
	# measurements)
	_undo=
	_nonum=
	while :; do
		case $1 in
		sysctl:*=*)
			_k=${1#sysctl:}
			_v=${_k#*=}
			_k=/proc/sys/$(echo "${_k%%=*}" | tr . /)
			if [ -f "$_k" ] && value "$_k"; then
				_undo="$_undo $_k=$_c"
				echo "$_v" >"$_k"
			fi
			shift
			;;
		compact)
			echo 3 >/proc/sys/vm/drop_caches
			echo 1 >/proc/sys/vm/compact_memory
			shift
			;;
		nonum)
			_nonum=1
			shift
			;;
		newest) shift ;; # for corpus.sh (--unrecorded)
		*) break ;;
		esac
	done
	# by path, as run_vmtests.sh runs ./PROG: some tests open argv[0]
	_p=$1
	shift
	[ -x "$BIN/$_p" ] && _p=$BIN/$_p
	set -- "$_p" "$@"
	rm -f "$WORK/timedout"
	_t0=$(now)
	cd "$WORK" || return 1
	# own session and process group: the watchdog kills the whole group
	setsid "$@" >"$_log" 2>&1 </dev/null &
	_pid=$!
	setsid sh -c "sleep $_to; [ -d /proc/$_pid ] || exit 0; : >$WORK/timedout;
		kill -TERM -$_pid; sleep 5; kill -KILL -$_pid" >/dev/null 2>&1 &
	_wd=$!
	wait $_pid
	_rc=$?
	_t1=$(now)
	# the watchdog's group, or the watchdog itself when the test ended
	# before the watchdog's setsid ran (no group yet: wait would sleep on)
	kill -KILL -$_wd 2>/dev/null || kill -KILL $_wd 2>/dev/null
	wait $_wd 2>/dev/null
	kill -KILL -$_pid 2>/dev/null # whatever the test left behind
	cd / || return 1
	# files a test left on hugetlbfs hold huge pages (run_vmtests.sh
	# removes them too)
	rm -rf "${HUGE:?}"/* "$WORK"/thp_* 2>/dev/null
	for _u in $_undo; do echo "${_u#*=}" >"${_u%%=*}"; done
	restore
	_t2=$(now)
	if [ -e "$WORK/timedout" ]; then
		if [ $_until = 1 ]; then _res=pass; else _res=timeout; fi
	elif [ $_rc = 0 ]; then
		_res=pass
	elif [ $_rc = 4 ]; then
		_res=skip
	else
		_res=fail
	fi
	_dt=$(secs "$_t0" "$_t1")
	echo "$_name $_res $_dt" >>"$RESULTS"
	tap_results "$_name" "$_log" "$_nonum" >"$WORK/sub"
	_sub=
	for _r in pass skip fail; do
		_k=$(grep -c " $_r\$" "$WORK/sub")
		[ "$_k" = 0 ] || _sub="$_sub $_r:$_k"
	done
	cat "$WORK/sub" >>"$RESULTS"
	echo "# $LABEL: $_name $_res (exit $_rc) ${_dt}s${_sub:+ subtests$_sub}"
	[ -n "${VMAMERGE_SELFTESTS_DEBUG:-}" ] &&
		echo "#   runner: setup $(secs "$_tA" "$_t0") s, cleanup $(secs "$_t1" "$_t2") s, results $(secs "$_t2" "$(now)") s"
	case $_res in
	fail | timeout)
		# the failing lines themselves (a long test's tail may not have
		# them), then the end of its output
		grep -a -n -i -m 10 'fail\|not ok\|timeout\|timed out' "$_log" |
			sed 's/^/#   ! /'
		tail -n 15 "$_log" | sed 's/^/#   | /'
		;;
	esac
}

# ---- main ---------------------------------------------------------------------
# selected: the run list's "NAME TIMEOUT CMD" lines this run selects
selected() {
	while read -r name timeout tier cmd; do
		case $name in "" | "#"*) continue ;; esac
		if [ -n "$ONLY" ]; then
			case " $ONLY " in *" $name "*) ;; *) continue ;; esac
		else
			case $TIER/$tier in
			full/* | std/quick | std/std | quick/quick) ;;
			*) continue ;;
			esac
		fi
		echo "$name $timeout $cmd"
	done <"$LIST"
}

[ -f "$LIST" ] || { echo "# $LABEL: no run list $LIST"; exit 1; }
if [ "$LABEL" = --names ]; then # the names only, on stdout
	selected | while read -r name _; do echo "$name"; done
	exit 0
fi
if [ "$LABEL" = --unrecorded ]; then
	selected | while read -r name _ cmd; do
		case "$cmd " in "newest "*) echo "$name" ;; esac
	done
	exit 0
fi
: >"$RESULTS" || exit 1
setup
T0=$(now)
n=0
selected >"$WORK/selected"
while read -r name timeout cmd; do
	# $HUGE etc. in the command line
	eval "set -- $cmd"
	run_one "$name" "$timeout" "$@" </dev/null
	n=$((n + 1))
done <"$WORK/selected"
teardown
awk -v l="$LABEL" -v n="$n" -v t="$(secs "$T0" "$(now)")" '
	$1 !~ /:/ { c[$2]++ }
	END { printf "# %s: %d tests in %s s: %d pass, %d skip, %d fail, %d timeout\n",
		l, n, t, c["pass"], c["skip"], c["fail"], c["timeout"] }' "$RESULTS"
