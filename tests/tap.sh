# shellcheck shell=bash
# TAP lines and totals for the host tests (sourced): ok/nok DESC, t DESC
# COMMAND... (ok if COMMAND succeeds), tap_end (the totals; its status is
# the verdict).
pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
nok() { echo "not ok - $*"; fail=$((fail + 1)); }
t() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
tap_end() {
	echo "$pass passed, $fail failed"
	((fail == 0))
}
