#!/bin/sh
# Guest side of `make demo` (busybox sh), staged as /demo/demo.sh; /init runs
# it when the kernel command line has vmamerge_test=demo.
# Runs /demo/demo-prog on the stock kernel, then loads vmamerge and runs it
# again opted in (vmamerge run --), showing its VMAs and the counters.
PROG=/demo/demo-prog
KO=/lib/vmamerge/vmamerge.ko
LP=/sys/kernel/livepatch/vmamerge

banner() {
	echo
	echo "==================================================================="
	echo "== $*"
	echo "==================================================================="
}
show() { # CMD...: echo and run a command, report a failure
	echo "\$ $*"
	"$@"
	rc=$?
	[ $rc = 0 ] || echo "(exit status $rc)"
}
wait_for() { # SECONDS CMD...
	t=$(($1 * 5))
	shift
	while [ $t -gt 0 ]; do
		"$@" && return 0
		sleep 0.2
		t=$((t - 1))
	done
	return 1
}
lp_settled() { [ "$(cat $LP/transition 2>/dev/null)" = 0 ]; }
lp_gone() { [ ! -e $LP ]; }
ready() { grep -q '^READY pid=' "$1"; }

have_cli=1
[ -x /bin/vmamerge ] || {
	have_cli=0
	echo "demo: no /bin/vmamerge staged: showing /proc/PID/maps only"
}

run_prog() { # OUTFILE [LAUNCHER...]
	out=$1
	shift
	"$@" $PROG >"$out" 2>&1 &
	if ! wait_for 30 ready "$out"; then
		cat "$out"
		echo "demo: demo-prog did not get ready"
		return 1
	fi
	cat "$out"
	pid=$(sed -n 's/^READY pid=//p' "$out")
	if [ $have_cli = 1 ]; then
		show vmamerge maps -p "$pid"
		show vmamerge stats
	fi
	kill "$pid"
	wait
}

banner "1. stock kernel, vmamerge not loaded"
run_prog /tmp/run1.out

banner "2. load vmamerge"
if [ ! -f $KO ]; then
	echo "demo: no $KO staged; stopping here"
	exit 1
fi
show insmod $KO
wait_for 120 lp_settled || echo "demo: livepatch transition did not finish"
[ $have_cli = 1 ] && show vmamerge status

banner "3. the same program, opted in: vmamerge run -- demo-prog"
if [ $have_cli = 1 ]; then
	run_prog /tmp/run2.out vmamerge run --
else
	echo "demo: no CLI to opt the process in"
fi

banner "4. unload: disable the livepatch, rmmod"
echo "\$ echo 0 > $LP/enabled"
echo 0 >$LP/enabled
wait_for 120 lp_gone || echo "demo: livepatch did not go away"
show rmmod vmamerge
echo
echo "demo: done"
