#!/bin/sh
# corpus.sh: the upstream mm selftest regression corpus, inside the guest
# (busybox sh, root).  Staged by tests/selftests/stage.sh as /selftests/.
#
#  1. runs the run list without the module          -> results.stock
#  2. compares results.stock with expected-$(uname -r).txt (the results
#     recorded for this kernel; timings ignored, only the tests of this run)
#  3. loads the module (insmod, waits for the livepatch transition), sets
#     mode always (every process opted in), runs the list again
#                                                   -> results.module
#     and unloads it
#  4. per test: is the result the same with the module (the test's own and
#     every subtest's), but for the changes deliberate.txt lists (each of
#     which must happen)?
# Tests built from the newest Debian source (SETUP "newest") skip step 2:
# their results without the module follow the archive, not this kernel.
# A test whose result differs (step 2 or 4) is run once more and the second
# result counts; each retry is printed with the first run's lines.
# Output: unnumbered TAP lines ("ok - ...", "not ok - ...", "# ..."), as
# tests/guest/run.sh's emit() reads them; exit status 0 unless something
# failed.  The module must not be loaded when this starts.
#
# Environment:
#   VMAMERGE_KO                the module (/lib/vmamerge/vmamerge.ko)
#   VMAMERGE_SELFTESTS_TIER    quick | std | full (default: quick on a
#                              *-vmamerge-debug kernel, std otherwise)
#   VMAMERGE_SELFTESTS_TIMEOUT_SCALE  timeouts x this (default 4 on a debug
#                              kernel, 1 otherwise)
#   VMAMERGE_SELFTESTS_ONLY    run only these test names (separated by
#                              spaces or commas)
#   VMAMERGE_SELFTESTS_OUT     where results.* and logs go
#                              (/tmp/selftests-out)
#   VMAMERGE_SELFTESTS_PRINT   1: print the results without the module even
#                              when they are as expected
DIR=$(cd "$(dirname "$0")" && pwd)
KO=${VMAMERGE_KO:-/lib/vmamerge/vmamerge.ko}
REL=$(uname -r)
case $REL in
*-vmamerge-debug)
	# 3-5x slower than the stock kernels, more on a loaded host
	VMAMERGE_SELFTESTS_TIER=${VMAMERGE_SELFTESTS_TIER:-quick}
	VMAMERGE_SELFTESTS_TIMEOUT_SCALE=${VMAMERGE_SELFTESTS_TIMEOUT_SCALE:-4}
	export VMAMERGE_SELFTESTS_TIMEOUT_SCALE
	;;
*) VMAMERGE_SELFTESTS_TIER=${VMAMERGE_SELFTESTS_TIER:-std} ;;
esac
export VMAMERGE_SELFTESTS_TIER
OUT=${VMAMERGE_SELFTESTS_OUT:-/tmp/selftests-out}
EXPECTED=$DIR/expected-$REL.txt
LP=/sys/kernel/livepatch/vmamerge
DBG=/sys/kernel/debug/vmamerge
FAILED=0
STOCK_OK=0

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; FAILED=1; }
diag() { sed 's/^/# /'; }

# wait_until SECONDS CMD...: poll CMD every 0.2 s
wait_until() {
	_n=$(($1 * 5))
	shift
	while [ $_n -gt 0 ]; do
		"$@" && return 0
		sleep 0.2
		_n=$((_n - 1))
	done
	return 1
}
# shellcheck disable=SC2317 # called through wait_until
settled() { [ "$(cat "$LP/transition" 2>/dev/null)" = 0 ]; }
# shellcheck disable=SC2317
gone() { [ ! -e "$1" ]; }
# shellcheck disable=SC2317
unreferenced() { [ "$(cat /sys/module/vmamerge/refcnt 2>/dev/null)" = 0 ]; }

load() {
	_o=$(insmod "$KO" 2>&1) || { echo "insmod: $_o"; return 1; }
	wait_until 60 settled || { echo "transition did not finish"; return 1; }
	[ "$(cat $LP/enabled)" = 1 ] || { echo "$LP/enabled is not 1"; return 1; }
	_o=$( (echo always >$DBG/mode) 2>&1) || { echo "mode always: $_o"; return 1; }
	case $(cat $DBG/mode) in *"[always]"*) ;; *) echo "mode reads $(cat $DBG/mode)"; return 1 ;; esac
}

unload() {
	[ -e $LP/enabled ] && echo 0 >$LP/enabled
	wait_until 60 gone $LP || { echo "livepatch did not go away"; return 1; }
	wait_until 30 unreferenced || { echo "module still referenced"; return 1; }
	_o=$(rmmod vmamerge 2>&1) || { echo "rmmod: $_o"; return 1; }
}

# keyed FILE [NAMES]: "key result" lines of a results file (no timings),
# sorted; with NAMES (a file of test names) only the lines of those tests
keyed() {
	if [ -n "$2" ]; then
		awk 'NR == FNR { t[$1] = 1; next }
			/^#/ { next }
			{ n = $1; sub(/:.*/, "", n) } (n in t) && NF >= 2 { print $1, $2 }' "$2" "$1"
	else
		awk '/^#/ { next } NF >= 2 { print $1, $2 }' "$1"
	fi | LC_ALL=C sort
}

# lines_of NAME KEYEDFILE: the keyed lines of test NAME (its own result and
# its subtests')
lines_of() {
	awk -v n="$1" '$1 == n || index($1, n ":") == 1' "$2"
}

# deliberate KEYED: KEYED (results without the module) with the results
# deliberate.txt says the module gives (KEY WITHOUT WITH lines; only those of
# the tests in $OUT/names), sorted; an entry whose WITHOUT is not the result
# here, or whose key did not run, goes to $OUT/deliberate.bad
deliberate() {
	: >"$OUT/deliberate.bad"
	awk -v bad="$OUT/deliberate.bad" -v names="$OUT/names" '
		FILENAME == names { t[$1] = 1; next }
		FILENAME != ARGV[ARGC - 1] {
			n = $1; sub(/:.*/, "", n)
			if (n in t) { w[$1] = $2; m[$1] = $3 }
			next
		}
		$1 in w {
			seen[$1] = 1
			if ($2 == w[$1]) { print $1, m[$1]; next }
			print $1, $2, w[$1] > bad
		}
		{ print }
		END { for (k in w) if (!(k in seen)) print k, "missing", w[k] > bad }' \
		"$OUT/names" "$DIR/deliberate.txt" "$1" | LC_ALL=C sort
}

# differing A B: names (from $OUT/names) whose keyed lines differ between
# keyed files A and B
differing() {
	while read -r _n _; do
		lines_of "$_n" "$1" >"$OUT/da"
		lines_of "$_n" "$2" >"$OUT/db"
		cmp -s "$OUT/da" "$OUT/db" || echo "$_n"
	done <"$OUT/names"
}

# retry LABEL RESULTS NAMES...: run these tests once more and put their new
# lines in RESULTS in place of the old ones.  Some upstream tests are
# timing- or address-dependent (mremap_test maps its destination at a random
# address with MAP_FIXED_NOREPLACE and fails on "File exists"; 6.1's
# khugepaged collapse_compound_extreme fails its check_huge() when
# MADV_COLLAPSE finds no free huge page, seen twice in a row once, without
# the module), so a result that differs is confirmed by up to two more runs
# before it counts (confirm below); every retry is reported, with the
# earlier run's lines.
retry() {
	_label=$1 _res=$2
	shift 2
	[ $# -gt 0 ] || return 0
	echo "# retrying ($_label): $*"
	VMAMERGE_SELFTESTS_ONLY="$*" VMAMERGE_SELFTESTS_LOGDIR=$OUT/logs.$_label.retry \
		sh "$DIR/run-selftests.sh" "$_label-retry" "$OUT/retry" "$DIR/tests.txt"
	cp "$_res" "$OUT/first.$_label"
	for _n in "$@"; do
		echo "# earlier run of $_n ($_label):"
		lines_of "$_n" "$OUT/first.$_label" | head -20 | diag
		awk -v n="$_n" '!($1 == n || index($1, n ":") == 1)' "$_res" >"$OUT/kept"
		cp "$OUT/kept" "$_res"
	done
	cat "$OUT/retry" >>"$_res"
}

# confirm LABEL RESULTS REF: retry the tests whose lines in RESULTS differ
# from keyed file REF, in up to two rounds: a difference counts only when
# three runs in a row show it.
confirm() {
	for _round in 1 2; do
		keyed "$2" >"$OUT/confirm.keyed"
		_d=$(differing "$3" "$OUT/confirm.keyed")
		[ -n "$_d" ] || return 0
		# shellcheck disable=SC2086 # test names have no spaces
		retry "$1" "$2" $_d
	done
}

# ---- main ---------------------------------------------------------------------
mkdir -p "$OUT"
echo "# selftests: $REL, tier $VMAMERGE_SELFTESTS_TIER${VMAMERGE_SELFTESTS_ONLY:+, only $VMAMERGE_SELFTESTS_ONLY}"
if [ -e /sys/module/vmamerge ]; then
	notok "selftests: the module is not loaded before the run without it"
	exit 1
fi

VMAMERGE_SELFTESTS_LOGDIR=$OUT/logs.stock \
	sh "$DIR/run-selftests.sh" stock "$OUT/results.stock" "$DIR/tests.txt"
# what should have run (a test missing from the results then shows as a
# difference)
sh "$DIR/run-selftests.sh" --names - "$DIR/tests.txt" >"$OUT/names"
sh "$DIR/run-selftests.sh" --unrecorded - "$DIR/tests.txt" >"$OUT/unrecorded"
grep -vxF -f "$OUT/unrecorded" "$OUT/names" >"$OUT/names.recorded"

# ---- results without the module against the recorded ones
if [ -f "$EXPECTED" ]; then
	keyed "$EXPECTED" "$OUT/names.recorded" >"$OUT/expected.keyed"
	confirm stock "$OUT/results.stock" "$OUT/expected.keyed"
	keyed "$OUT/results.stock" "$OUT/names.recorded" >"$OUT/stock.keyed"
	if cmp -s "$OUT/expected.keyed" "$OUT/stock.keyed"; then
		STOCK_OK=1
		ok "selftests: results without the module as recorded in expected-$REL.txt ($(wc -l <"$OUT/stock.keyed") results)"
	else
		notok "selftests: results without the module as recorded in expected-$REL.txt"
		echo "# (- expected, + this run)"
		diff "$OUT/expected.keyed" "$OUT/stock.keyed" | grep '^[-+][^-+]' | head -60 | diag
	fi
else
	ok "selftests: results without the module as recorded # SKIP no expected-$REL.txt"
fi
# The results themselves when they are new or differ, or on request
# (VMAMERGE_SELFTESTS_PRINT=1); tests/selftests/record-expected.sh turns
# this block into expected-$REL.txt (the recorded tests' lines only).
if [ "$STOCK_OK" != 1 ] || [ "${VMAMERGE_SELFTESTS_PRINT:-0}" = 1 ]; then
	echo "# selftests-results-begin $REL tier $VMAMERGE_SELFTESTS_TIER"
	awk 'NR == FNR { t[$1] = 1; next } { n = $1; sub(/:.*/, "", n) } n in t' \
		"$OUT/names.recorded" "$OUT/results.stock" | diag
	echo "# selftests-results-end"
fi

# ---- what the module should change: deliberate.txt applied to the results
# without it
keyed "$OUT/results.stock" >"$OUT/stock.keyed"
deliberate "$OUT/stock.keyed" >"$OUT/want.keyed"
_nd=$(wc -l <"$DIR/deliberate.txt")
if [ -s "$OUT/deliberate.bad" ]; then
	notok "selftests: deliberate.txt describes the results without the module"
	echo "# (key, result without the module, the one deliberate.txt names)"
	diag <"$OUT/deliberate.bad"
else
	ok "selftests: deliberate.txt describes the results without the module ($_nd entries)"
fi

# ---- with the module, mode always
if [ ! -f "$KO" ]; then
	ok "selftests: runs with the module # SKIP no $KO"
	exit $FAILED
fi
if ! err=$(load); then
	notok "selftests: load the module, mode always"
	echo "$err" | diag
	unload >/dev/null 2>&1
	exit 1
fi
ok "selftests: module loaded, mode always"
VMAMERGE_SELFTESTS_LOGDIR=$OUT/logs.module \
	sh "$DIR/run-selftests.sh" module "$OUT/results.module" "$DIR/tests.txt"
confirm module "$OUT/results.module" "$OUT/want.keyed"
echo "# vmamerge stats after the run with the module:"
diag <$DBG/stats
if err=$(unload); then
	ok "selftests: module unloaded after the run"
else
	notok "selftests: module unloaded after the run"
	echo "$err" | diag
fi

# ---- per test: same result with the module, but for deliberate.txt
keyed "$OUT/results.module" >"$OUT/module.keyed"
while read -r name _; do
	res=$(awk -v n="$name" '$1 == n { print $2 }' "$OUT/results.stock")
	mres=$(awk -v n="$name" '$1 == n { print $2 }' "$OUT/results.module")
	lines_of "$name" "$OUT/want.keyed" >"$OUT/a"
	lines_of "$name" "$OUT/module.keyed" >"$OUT/b"
	_nd=$(awk -v n="$name" 'index($1, n ":") == 1' "$DIR/deliberate.txt" | wc -l)
	_but=
	[ "$_nd" = 0 ] || _but=", but for $_nd deliberate changes"
	if [ -z "$res" ] && [ -z "$mres" ]; then
		notok "selftests $name: same result with the module (it did not run)"
	elif cmp -s "$OUT/a" "$OUT/b"; then
		ok "selftests $name: same result with the module ($res$_but)"
	else
		notok "selftests $name: same result with the module$_but (${res:-missing} without, ${mres:-missing} with)"
		echo "# (- without the module$_but, + with it)"
		diff "$OUT/a" "$OUT/b" | grep '^[-+][^-+]' | head -30 | diag
		if [ -f "$OUT/logs.module/$name.log" ]; then
			echo "# its output with the module (tail):"
			tail -n 20 "$OUT/logs.module/$name.log" | diag
		fi
	fi
done <"$OUT/names"
exit $FAILED
