# shellcheck shell=bash
# test_lib.sh: the TAP line of the CLI's shell tests (test_check_kernel.sh,
# tests/cli-check-kernel.sh), sourced.  n counts the checks, failed the
# failures; a script ends with: echo "1..$n"; echo "$((n - failed)) passed,
# $failed failed".
n=0 failed=0

# res RC DESC [DETAIL...]: "ok N - DESC" when RC is 0, else "not ok" and
# the DETAIL lines as comments
res() {
	local rc=$1 d=$2
	shift 2
	n=$((n + 1))
	if ((rc == 0)); then
		echo "ok $n - $d"
		return
	fi
	echo "not ok $n - $d"
	failed=$((failed + 1))
	printf '%s\n' "$@" | sed 's/^/#   /'
}
