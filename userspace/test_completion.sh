#!/bin/bash
# The bash completion of vmamerge: COMPREPLY for typical command lines.
# TAP-like lines, exit 1 on a failure.  Run by "make test".
set -u
# shellcheck source=vmamerge.bash-completion
source "$(dirname "$0")/vmamerge.bash-completion"
failed=0 n=0

# expect "WANT" WORD... : complete the last WORD (may be empty)
expect() {
	local want=$1
	shift
	COMP_WORDS=(vmamerge "$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_vmamerge
	n=$((n + 1))
	if [[ "${COMPREPLY[*]}" == "$want" ]]; then
		echo "ok $n - vmamerge $* -> $want"
	else
		echo "not ok $n - vmamerge $*: got '${COMPREPLY[*]}', want '$want'"
		failed=1
	fi
}

expect "status stats" st
expect "maps mode" m
expect "--help" --h
expect "-p --pid --all --json --help" stats ""
expect "--summary" maps -p 1 --s
expect "--json always optin never --help" mode ""
expect "--json -renumber -transplant --help" features -
expect "--no-exec" run --no
expect "status stats" help st
# -p: the pids of /proc, ours among them
COMP_WORDS=(vmamerge stats -p "")
COMP_CWORD=3
_vmamerge
n=$((n + 1))
if [[ " ${COMPREPLY[*]} " == *" $$ "* ]]; then
	echo "ok $n - vmamerge stats -p '' -> pids, $$ among them"
else
	echo "not ok $n - vmamerge stats -p '': $$ missing from '${COMPREPLY[*]}'"
	failed=1
fi
expect "--json" verify -p 1 --j
expect "compact" co
expect "-p --pid --json --help" compact ""
expect "--json" compact -p 1 --j
expect "compact" help comp
expect "check-kernel" ch
expect "check-kernel" help che
expect "--json --image --config --help" check-kernel --
expect "--image" check-kernel 6.1.0-57-amd64 --im
# a release: the installed kernels' (none here: only the options match)
expect "" check-kernel zzz-no-such-release
# --image PATH: files
COMP_WORDS=(vmamerge check-kernel --image "$(dirname "$0")/vmamerge.bash-comp")
COMP_CWORD=3
_vmamerge
n=$((n + 1))
if [[ ${COMPREPLY[*]} == "$(dirname "$0")/vmamerge.bash-completion" ]]; then
	echo "ok $n - vmamerge check-kernel --image PATH -> files"
else
	echo "not ok $n - vmamerge check-kernel --image PATH: got '${COMPREPLY[*]}'"
	failed=1
fi
expect "selftest" se
expect "--json --help" selftest ""
expect "selftest" help sel
echo "1..$n"
exit $failed
