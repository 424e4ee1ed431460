#!/bin/sh
# vmamerge benchmarks, guest side (busybox sh).  Staged as /tests/run.sh
# next to the benchmark programs; /init runs it and copies its output to
# the results channel.  Prints JSON lines (one per measurement, starting
# with "{") and "# " progress lines.
#
# Every figure is a ratio between configurations of the same boot:
#   stock       module not loaded
#   loaded      module loaded, process not opted in (features all on)
#   off         opted in, features none
#   renumber    opted in, renumber only
#   transplant  opted in, transplant only
#   both        opted in, renumber and transplant
# Two ways of taking turns:
#  - spacing and the workloads need a fresh process per measurement: in
#    each of BENCH_REPS repetitions every configuration runs once, the
#    order rotating from one repetition to the next;
#  - micro and bigmove switch configurations inside one process (opt-in
#    and features by ioctl between batches or moves, see bench.h), so only
#    stock vs module-loaded needs separate processes: each round runs one
#    process with the module unloaded (configurations stock and stock2, an
#    identical twin that measures the noise) and one with it loaded (all
#    other configurations), the order alternating from round to round.
#
# Environment (kernel command line words NAME=VALUE reach us as such; the
# command line cannot carry spaces, so lists may use commas instead):
#   BENCH_N       spacing: number of mappings (20000)
#   BENCH_REPS    repetitions of spacing and the workloads (2)
#   BENCH_ASLR    randomize_va_space during the run (0)
#   BENCH_SPACING spacing: shapes MODE[:DEST] ("diff same"; spacing -m, -d)
#   BENCH_SIZES   bigmove: region sizes in MiB ("4 64 1024")
#   BENCH_MOVES   bigmove: timed moves per configuration and process (5)
#   BENCH_MICRO   micro: "ITERS BATCHES" (256 15)
#   BENCH_MICRO_ROUNDS  micro: rounds (4)
#   BENCH_BIGMOVE_ROUNDS  bigmove: rounds (1)
#   BENCH_SUITES  which benchmarks ("spacing micro bigmove workload profile")
#   BENCH_PROFILE_N  profile: spacing's mappings (2000)
#   BENCH_CONFIGS which configurations ("stock loaded off renumber transplant both")
#   BENCH_WORKLOAD_REPS  repetitions of each workload per configuration (1)
DIR=$(cd "$(dirname "$0")" && pwd)
KO=/lib/vmamerge/vmamerge.ko
LP=/sys/kernel/livepatch/vmamerge
DBG=/sys/kernel/debug/vmamerge
N=${BENCH_N:-20000}
REPS=${BENCH_REPS:-2}
SHAPES=${BENCH_SPACING:-"diff same"}
SIZES=${BENCH_SIZES:-"4 64 1024"}
MOVES=${BENCH_MOVES:-5}
MROUNDS=${BENCH_MICRO_ROUNDS:-4}
BROUNDS=${BENCH_BIGMOVE_ROUNDS:-1}
MICRO=${BENCH_MICRO:-"256 15"}
SUITES=${BENCH_SUITES:-"spacing micro bigmove workload profile"}
PROFILE_N=${BENCH_PROFILE_N:-2000}
CONFIGS=${BENCH_CONFIGS:-"stock loaded off renumber transplant both"}
WREPS=${BENCH_WORKLOAD_REPS:-1}
lst() { echo "$1" | tr , ' '; }
SIZES=$(lst "$SIZES")
SHAPES=$(lst "$SHAPES")
MICRO=$(lst "$MICRO")
SUITES=$(lst "$SUITES")
CONFIGS=$(lst "$CONFIGS")
export PATH="$DIR:$PATH"

say() { echo "# $*"; }
up() { cut -d' ' -f1 /proc/uptime; }
fail() {
	say "FATAL: $*"
	echo "{\"bench\":\"error\",\"msg\":\"$*\"}"
	exit 1
}
has() { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; }

wait_until() { # SECONDS CMD...: poll CMD every 0.2 s
	_t=$(($1 * 5))
	shift
	while [ $_t -gt 0 ]; do
		"$@" && return 0
		sleep 0.2
		_t=$((_t - 1))
	done
	return 1
}
lp_settled() { [ "$(cat $LP/transition 2>/dev/null)" = 0 ]; }
lp_gone() { [ ! -e $LP ]; }
mod_gone() { [ ! -e /sys/module/vmamerge ]; }
loaded() { [ -e /sys/module/vmamerge ]; }

load() {
	loaded && return 0
	insmod $KO || fail "insmod $KO"
	wait_until 120 lp_settled || fail "livepatch transition did not finish"
}
unload() {
	loaded || return 0
	[ "$(cat $LP/enabled 2>/dev/null)" = 1 ] && echo 0 >$LP/enabled
	wait_until 120 lp_gone || fail "livepatch did not go away"
	wait_until 60 rmmod vmamerge 2>/dev/null || fail "rmmod vmamerge"
	wait_until 30 mod_gone || fail "module did not go away"
}

# set_features WORDS: none, then each word; checked against debugfs
set_features() {
	echo none >$DBG/features || fail "features none"
	for _f in $1; do
		echo "$_f" >$DBG/features || fail "features $_f"
	done
}

# config CFG: bring the system into CFG; sets BENCH_OPTIN
config() {
	case $1 in
	stock) unload; BENCH_OPTIN=0 ;;
	loaded) load; set_features "renumber transplant"; BENCH_OPTIN=0 ;;
	off) load; set_features ""; BENCH_OPTIN=1 ;;
	renumber) load; set_features renumber; BENCH_OPTIN=1 ;;
	transplant) load; set_features transplant; BENCH_OPTIN=1 ;;
	both) load; set_features "renumber transplant"; BENCH_OPTIN=1 ;;
	*) fail "unknown configuration $1" ;;
	esac
	if loaded; then
		echo optin >$DBG/mode || fail "mode optin"
		_feat=$(cat $DBG/features)
	else
		_feat=-
	fi
	BENCH_CONFIG=$1
	export BENCH_CONFIG BENCH_OPTIN
	say "config $1 (features: $_feat, opt-in: $BENCH_OPTIN) uptime $(up)"
}

# rotate LIST K: LIST rotated left by K words
rotate() {
	_l=$1
	_k=$2
	set -- $_l
	_n=$#
	_k=$((_k % _n))
	while [ $_k -gt 0 ]; do
		_f=$1
		shift
		set -- "$@" "$_f"
		_k=$((_k - 1))
	done
	echo "$@"
}

run_spacing() { # REP
	for _sh in $SHAPES; do
		_m=${_sh%:*}
		_d=inside
		[ "$_sh" = "$_m" ] || _d=${_sh#*:}
		spacing -n "$N" -m "$_m" -d "$_d" || say "spacing -m $_m -d $_d failed ($?)"
	done
	if [ "$1" = 1 ]; then # VMA count over time: one traced run per config
		spacing -n "$N" -m diff -t 25 || say "spacing -t failed ($?)"
	fi
}

run_micro() {
	set -- $MICRO
	micro -k "$1" -b "$2" || say "micro failed ($?)"
}

run_bigmove() {
	# largest first: the biggest region needs the least fragmented memory;
	# next to a larger neighbour (-n merge: every move rewrites the region)
	# only up to the module's default rewrite budget, 128 MiB
	for _s in $(echo $SIZES | tr ' ' '\n' | sort -rn); do
		_ns=none
		[ "$_s" -le 128 ] && _ns="none merge"
		for _n in $_ns; do
			for _a in aligned unaligned; do
				for _h in nothp thp; do
					bigmove -s "$_s" -a "$_a" -H "$_h" -n "$_n" -k "$MOVES" ||
						say "bigmove -s $_s -a $_a -H $_h -n $_n failed ($?)"
				done
			done
		done
	done
}

run_workload() {
	[ -x "$DIR/workload.sh" ] || { say "no workload.sh staged"; return; }
	_i=1
	while [ $_i -le "$WREPS" ]; do
		sh "$DIR/workload.sh" || say "workload failed ($?)"
		_i=$((_i + 1))
	done
}

# Address-space randomisation off: every process of a configuration then
# gets the same layout, so the maple tree and page tables its system calls
# walk have the same shape in each.  With it on, the comparisons that need
# two processes (stock vs loaded) moved by up to +-10 % per operation
# between processes (6.12 munmap 0.897-1.117) - far above the 0.3 % they
# are meant to resolve; with it off, three processes of one configuration
# agreed within 0.2-0.7 % (quick runs of 28 Nov 2026, docs/design.md,
# "The in-place decision's cost, part by part").
# BENCH_ASLR=2 keeps it on (to measure what it changes).
echo "${BENCH_ASLR:-0}" >/proc/sys/kernel/randomize_va_space 2>/dev/null ||
	say "could not set randomize_va_space to ${BENCH_ASLR:-0}"
aslr=$(cat /proc/sys/kernel/randomize_va_space 2>/dev/null || echo unknown)
thp=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled)
echo "{\"bench\":\"meta\",\"kernel\":\"$(uname -r)\",\"n\":$N,\"reps\":$REPS,\"sizes\":\"$SIZES\",\"moves\":$MOVES,\"micro\":\"$MICRO\",\"suites\":\"$SUITES\",\"configs\":\"$CONFIGS\",\"micro_rounds\":$MROUNDS,\"bigmove_rounds\":$BROUNDS,\"workload_reps\":$WREPS,\"thp\":\"$thp\",\"aslr\":\"$aslr\",\"nproc\":$(nproc),\"mem_kb\":$(awk '/^MemTotal/ {print $2}' /proc/meminfo)}"
[ -f $KO ] || fail "no $KO"

t0=$(up)
ts=$t0
lap() { # NAME: time since the last lap
	say "$1: $(awk -v a="$ts" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }') s"
	ts=$(up)
}

# ---- per-process suites: spacing, workload --------------------------------
pp=
for s in $SUITES; do
	case $s in spacing | workload) pp="$pp $s" ;; esac
done
if [ -n "$pp" ]; then
	rep=1
	while [ $rep -le "$REPS" ]; do
		BENCH_REP=$rep
		export BENCH_REP
		for cfg in $(rotate "$CONFIGS" $((rep - 1))); do
			config "$cfg"
			for s in $pp; do
				"run_$s" "$rep"
			done
		done
		rep=$((rep + 1))
	done
	lap "per-process suites ($pp)"
fi

# ---- in-process suites: micro, bigmove --------------------------------------
inproc=
for c in $CONFIGS; do
	[ "$c" = stock ] || inproc="$inproc,$c"
done
inproc=${inproc#,}
# two_states ROUNDS FUNC: FUNC once unloaded and once loaded per round
two_states() {
	_r=1
	while [ "$_r" -le "$1" ]; do
		BENCH_REP=$_r
		export BENCH_REP
		if [ $((_r % 2)) = 1 ]; then _o="stock loaded"; else _o="loaded stock"; fi
		for _st in $_o; do
			if [ $_st = stock ]; then
				has "$CONFIGS" stock || continue
				config stock
				BENCH_INPROC=stock,stock2
			else
				[ -n "$inproc" ] || continue
				config loaded
				BENCH_INPROC=$inproc
			fi
			export BENCH_INPROC
			"$2"
		done
		_r=$((_r + 1))
	done
}
if has "$SUITES" micro; then
	two_states "$MROUNDS" run_micro
	lap "micro"
fi
if has "$SUITES" bigmove; then
	two_states "$BROUNDS" run_bigmove
	lap "bigmove"
fi
# ---- profile: where a move's time goes, function by function --------------
#
# One function at a time is traced (function_graph with that function alone
# in set_ftrace_filter: its entry and exit, nothing below it), so its
# duration is its whole cost - callees included - plus one round trip of
# the tracer, which the calibration function measures (an almost empty one:
# mremap_userfaultfd_prep() of a VMA without userfaultfd).  Under -icount
# the durations are instruction counts too.  Configurations stock and both,
# each program run once per function; a function this kernel does not have
# (the other series' name, inlined) is left out.
TR=/sys/kernel/tracing
PROFILE_CAL=mremap_userfaultfd_prep
# The copy_vma() mirror merges through the module's own mirror of the
# merge (vmamerge_612_merge_new_range, vmamerge_61_vma_merge), called
# directly: under "both" the stock vma_merge_new_range/vma_merge rows count
# only their other callers (mmap in the programs' setup).  vma_expand's
# traceable callees say where an expansion's time goes (the maple tree's
# mas_* functions are not in available_filter_functions).
PROFILE_FUNCS="$PROFILE_CAL __x64_sys_mremap move_vma copy_vma vmamerge_copy_vma
	vma_merge_new_range vmamerge_612_merge_new_range vma_merge
	vmamerge_61_vma_merge vma_expand __vma_adjust vma_adjust_trans_huge
	anon_vma_interval_tree_insert
	anon_vma_interval_tree_remove vm_area_dup anon_vma_clone vma_link
	move_page_tables do_vmi_munmap do_mas_munmap unlink_anon_vmas
	vmamerge_move_prepare vmamerge_edge_check vmamerge_mv_rewrite
	vmamerge_renumber_vma vmamerge_transplant_vma vmamerge_rewrite_collect
	vmamerge_rewrite_commit vmamerge_move_done klp_shadow_get"
# profile_one FUNC PROGRAM ARGS: "CALLS NS" of FUNC while PROGRAM runs
profile_one() {
	_f=$1
	shift
	echo nop >$TR/current_tracer
	echo "$_f" >$TR/set_ftrace_filter || return 1
	echo function_graph >$TR/current_tracer
	echo >$TR/trace
	echo 1 >$TR/tracing_on
	"$@" >/dev/null || say "$* failed ($?)"
	echo 0 >$TR/tracing_on
	awk '/ us +\|/ { d = $0; sub(/ us.*/, "", d); sub(/.*\) *[-+!#*@$]? */, "", d)
		t += d; c++ }
		END { printf "%d %.0f\n", c, t * 1000 }' $TR/trace
}
# profile_prog NAME PROGRAM ARGS: every function of PROFILE_FUNCS
profile_prog() {
	_p=$1
	shift
	for _f in $PROFILE_FUNCS; do
		grep -qE "^$_f( |\$)" $TR/available_filter_functions || continue
		_r=$(profile_one "$_f" "$@") || continue
		echo "{\"bench\":\"profile\",\"config\":\"$BENCH_CONFIG\",\"program\":\"$_p\",\"func\":\"$_f\",\"calls\":${_r% *},\"ns\":${_r#* },\"calibration\":$([ "$_f" = $PROFILE_CAL ] && echo true || echo false)}"
	done
}
if has "$SUITES" profile; then
	[ -e $TR/trace ] || mount -t tracefs nodev $TR 2>/dev/null
	if [ -w $TR/set_ftrace_filter ]; then
		echo 1 >$TR/options/funcgraph-tail 2>/dev/null
		echo 0 >$TR/options/funcgraph-irqs 2>/dev/null
		for cfg in stock both; do
			has "$CONFIGS" $cfg || continue
			config $cfg
			profile_prog "spacing -m diff -n $PROFILE_N" spacing -m diff -n "$PROFILE_N" -t 1
			# bigmove switches configurations itself: this one only
			BENCH_INPROC=$cfg
			export BENCH_INPROC
			profile_prog "bigmove -s 64 -a unaligned -H nothp -n merge" \
				bigmove -s 64 -a unaligned -H nothp -n merge -k 1
		done
		echo nop >$TR/current_tracer
		echo >$TR/set_ftrace_filter
		lap "profile"
	else
		say "profile: no $TR/set_ftrace_filter (tracefs, CONFIG_FUNCTION_GRAPH_TRACER)"
	fi
fi

unload
say "benchmarks done in $(awk -v a="$t0" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }') s"
echo "{\"bench\":\"done\",\"seconds\":$(awk -v a="$t0" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }')}"
