#!/bin/sh
# "vmamerge compact -p PID [--json]" as a user types it: a
# process fragmented before it opted in (t_compact hold: N one-page VMAs
# side by side, other page offsets, other anon_vmas) is merged by one
# command; the text and the JSON (checked by t_json: the guest has no
# python or jq) say exactly what /proc shows; the pages stay byte-exact
# and the rmap verifier agrees; errors (not opted in, mode never, no such
# process, no ptrace rights, usage) exit 1 or 2 with their one line.
# Runs as root in the busybox guest with the module loaded, mode optin
# (run.sh's default); leaves the mode at optin.  Output: "ok - ..." /
# "not ok - ..." lines for run.sh.
#
#   t_compact_cli.sh    (VMAMERGE_CLI: the CLI, default /bin/vmamerge)
#
# The helper, t_compact hold N FILE: opts itself out, fragments N pages of
# its window into N VMAs, writes "ready V" to FILE (V: the window's VMA
# count, N), then waits; each SIGUSR1 checks every page byte-exact and
# writes "checked V" (V counted anew) or "bad page I" to FILE; SIGTERM
# ends it.  FILE is written whole (a temporary file renamed over it).

DIR=$(cd "$(dirname "$0")" && pwd)
CLI=${VMAMERGE_CLI:-/bin/vmamerge}
NOBODY=65534
N=64
# res, check, stderr_is, cli_on_path
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$DIR/cli_lib.sh"
# the commands below are written as a user types them: "vmamerge ..."
cli_on_path
T=$(mktemp -d /tmp/t_compact_cli.XXXXXX) || exit 1
HOLDERS=
NH=0

# ---- the fragmented process ----

# hold: start "t_compact hold $N", wait until it is fragmented; HOLD is
# its pid, HFILE its file.  1 when it did not get there.
hold() {
	NH=$((NH + 1))
	HFILE=$T/hold.$NH
	t_compact hold $N "$HFILE" > "$HFILE.out" 2>&1 &
	HOLD=$!
	HOLDERS="$HOLDERS $HOLD"
	t_wait value "$HFILE" "ready $N" 60000 > "$T/wait"
	_hr=$?
	res $_hr "t_compact hold $N: $N VMAs in its window, not opted in" \
		"$(cat "$T/wait")" "$(cat "$HFILE.out" 2>/dev/null)"
	return $_hr
}

# held DESC V: SIGUSR1 to HOLD, which finds V VMAs in its window and every
# page byte-exact
held() {
	kill -USR1 "$HOLD"
	t_wait value "$HFILE" "checked $2" 30000 > "$T/wait"
	res $? "$1" "$(cat "$T/wait")" "$(cat "$HFILE.out" 2>/dev/null)"
}

# vmas_of PID: its VMA count (mm->map_count, what compact reports): the
# lines of /proc/PID/maps but the vsyscall page, which is no VMA of its own
vmas_of() {
	grep -vc ' \[vsyscall\]$' "/proc/$1/maps"
}

# ---- errors before the opt-in ----

# maps on the fragmented process: its N VMAs are one run line
# ("  START-END PERMS  N vmas  REASON"), not N - 1 lines, and the missed
# merges say the count compaction would leave
maps_run_tests() {
	vmamerge maps -p "$HOLD" > "$T/out" 2> "$T/err"
	_rc=$?
	_k=$(sed -n 's/^  [0-9a-f]*-[0-9a-f]* .... *\([0-9][0-9]*\) vmas  .*/\1/p' "$T/out" | sort -n | tail -1)
	[ $_rc -eq 0 ] && [ "${_k:-0}" -ge $N ] &&
		[ "$(grep -c '^  [0-9a-f]*-[0-9a-f]* .... *[0-9][0-9]* vmas  ' "$T/out")" -lt $N ] &&
		grep -q '^missed merges: [0-9]* (vmamerge compact would leave [0-9]* vmas at best)$' "$T/out"
	res $? "vmamerge maps -p PID: the $N fragments are one run line (${_k:-none} VMAs), the count compaction would leave" \
		"exit $_rc" "$(sed -n '/^Runs/,$p' "$T/out" | head -8)"
}

not_opted_in_tests() {
	_p=$HOLD
	maps_run_tests
	check "compact -p PID, PID not opted in: exit 1" 1 '\c' vmamerge compact -p "$_p"
	stderr_is "vmamerge: compact: process $_p is not opted in: run 'vmamerge enable -p $_p' first"
	check "compact -p PID --json, PID not opted in: exit 1, JSON error" 1 \
		"{\"error\": \"compact: process $_p is not opted in: run 'vmamerge enable -p $_p' first\"}" \
		vmamerge compact -p "$_p" --json
	held "  ... its window untouched: $N VMAs, pages byte-exact" $N
}

# ---- the text ----

text_tests() {
	hold || return
	not_opted_in_tests
	check "vmamerge enable -p PID" 0 '\c' vmamerge enable -p "$HOLD"
	_b=$(vmas_of "$HOLD")
	vmamerge compact -p "$HOLD" > "$T/out" 2> "$T/err"
	_rc=$?
	_a=$(vmas_of "$HOLD")
	[ $_rc -eq 0 ] && [ ! -s "$T/err" ] && [ "$(wc -l < "$T/out")" -eq 4 ]
	res $? "vmamerge compact -p PID: exit 0, four lines" "exit $_rc" \
		"$(cat "$T/out")" "stderr: $(cat "$T/err")"
	# pid P: B VMAs -> A, M merge(s) (O VMAs offered)
	sed -n 1p "$T/out" | grep -qx "pid $HOLD: $_b VMAs -> $_a, [0-9][0-9]* merges\{0,1\} ([0-9][0-9]* VMAs offered)" &&
		[ $((_b - _a)) -eq $((N - 1)) ]
	res $? "  ... VMAs before -> after as /proc shows them ($_b -> $_a), $((N - 1)) fewer" \
		"$(sed -n 1p "$T/out")"
	_l=$(sed -n 2p "$T/out")
	_r=$(echo "$_l" | sed -n 's/^pages rewritten: \([0-9]*\) (\([0-9]*\) renumbered, \([0-9]*\) transplanted)$/\1 \2 \3/p')
	# shellcheck disable=SC2086 # three numbers
	set -- $_r
	# each page renumbered and transplanted in the same pass: once
	[ $# -eq 3 ] && [ "$2" -eq $((N - 1)) ] && [ "$1" -eq "$2" ] && [ "$3" -eq "$2" ]
	res $? "  ... pages rewritten $((N - 1)), each renumbered and transplanted in one pass" "$_l"
	[ "$(sed -n 3p "$T/out")" = "refused: none" ]
	res $? "  ... refused: none" "$(sed -n 3p "$T/out")"
	sed -n 4p "$T/out" | grep -qx 'mmap_lock: [1-9][0-9]* slices\{0,1\}, longest hold [0-9][0-9]*\.[0-9][0-9][0-9] ms'
	res $? "  ... mmap_lock slices and the longest hold" "$(sed -n 4p "$T/out")"
	held "  ... its window: one VMA, pages byte-exact" 1
	vmamerge verify -p "$HOLD" > "$T/out" 2>&1
	_rc=$?
	[ $_rc -eq 0 ] &&
		grep -q "^pid $HOLD: [0-9]* VMAs, [0-9]* pages (.*) checked: rmap invariants hold$" "$T/out"
	res $? "  ... vmamerge verify -p PID: the rmap invariants hold" "exit $_rc" \
		"$(cat "$T/out")"

	# mode never: refused with its own message
	vmamerge mode never
	check "compact -p PID in mode never: exit 1" 1 '\c' vmamerge compact -p "$HOLD"
	stderr_is "vmamerge: compact: the mode is never, nothing merges: run 'sudo vmamerge mode optin' first"
	vmamerge mode optin

	# as uid 65534 on root's process
	check "compact -p PID as uid $NOBODY on root's process: exit 1" 1 '\c' \
		t_asuser $NOBODY vmamerge compact -p "$HOLD"
	stderr_is "vmamerge: compact: permission denied: acting on another process needs ptrace rights over it (pid $HOLD)"
}

# ---- mode always: every process is active, opted in or not ----

always_tests() {
	hold || return
	vmamerge mode always
	_b=$(vmas_of "$HOLD")
	vmamerge compact -p "$HOLD" > "$T/out" 2> "$T/err"
	_rc=$?
	_a=$(vmas_of "$HOLD")
	vmamerge mode optin
	[ $_rc -eq 0 ] && [ ! -s "$T/err" ] && [ $((_b - _a)) -eq $((N - 1)) ]
	res $? "compact -p PID in mode always, PID not opted in: exit 0, $((N - 1)) fewer VMAs ($_b -> $_a)" \
		"exit $_rc" "$(cat "$T/out")" "stderr: $(cat "$T/err")"
	held "  ... its window: one VMA, pages byte-exact" 1
}

# ---- the JSON ----

# jnum PATH: the number at PATH in $T/out (-1 when missing)
jnum() {
	t_json "$1" < "$T/out" 2>/dev/null || echo -1
}

json_tests() {
	hold || return
	vmamerge enable -p "$HOLD"
	_b=$(vmas_of "$HOLD")
	vmamerge compact -p "$HOLD" --json > "$T/out" 2> "$T/err"
	_rc=$?
	_a=$(vmas_of "$HOLD")
	[ $_rc -eq 0 ] && [ ! -s "$T/err" ] && [ "$(wc -l < "$T/out")" -eq 1 ] &&
		t_json < "$T/out" > /dev/null
	res $? "vmamerge compact -p PID --json: exit 0, one line of valid JSON" \
		"exit $_rc" "$(head -c 800 "$T/out")" "stderr: $(cat "$T/err")"
	t_json .pid .vmas_before .vmas_after .refused < "$T/out" > "$T/jv" 2>&1
	printf '%s\n%s\n%s\n{}\n' "$HOLD" "$_b" "$_a" > "$T/want"
	cmp -s "$T/want" "$T/jv" && [ $((_b - _a)) -eq $((N - 1)) ]
	res $? "  ... pid, VMAs before and after as /proc shows them ($_b -> $_a), refused {}" \
		"$(cat "$T/jv")"
	_rn=$(jnum .pages_renumbered)
	_tr=$(jnum .pages_transplanted)
	[ "$_rn" = $((N - 1)) ] && [ "$(jnum .pages_rewritten)" = "$_rn" ] &&
		[ "$(jnum .counters.pages_renumbered)" = "$_rn" ] &&
		[ "$(jnum .counters.pages_transplanted)" = "$_tr" ] &&
		[ "$(jnum .counters.refused_shared)" = 0 ]
	res $? "  ... pages: renumbered $((N - 1)), each rewritten once (with its transplant), as the counter deltas" \
		"$(head -c 800 "$T/out")"
	_m=$(jnum .merges)
	_o=$(jnum .vmas_offered)
	_s=$(jnum .lock_slices)
	_ns=$(jnum .max_hold_ns)
	_ms=$(jnum .max_hold_ms)
	[ "$_m" -ge $((N / 2)) ] && [ "$_o" -ge "$_m" ] && [ "$_s" -ge 1 ] &&
		[ "$_ns" -gt 0 ] && [ "$_ms" = "$((_ns / 1000000)).$(printf '%03d' $((_ns / 1000 % 1000)))" ]
	res $? "  ... merges $_m of $_o offered, $_s lock slice(s), longest hold $_ns ns = $_ms ms" \
		"$(head -c 800 "$T/out")"
	held "  ... its window: one VMA, pages byte-exact" 1

	# again: nothing left to merge
	vmamerge compact -p "$HOLD" --json > "$T/out" 2> "$T/err"
	_rc=$?
	_a2=$(vmas_of "$HOLD")
	t_json .vmas_before .vmas_after .merges .pages_rewritten .refused < "$T/out" > "$T/jv" 2>&1
	printf '%s\n%s\n0\n0\n{}\n' "$_a2" "$_a2" > "$T/want"
	[ $_rc -eq 0 ] && cmp -s "$T/want" "$T/jv"
	res $? "compact -p PID --json again: nothing to merge, $_a2 VMAs stay" "exit $_rc" \
		"$(cat "$T/jv")" "stderr: $(cat "$T/err")"
}

# ---- usage and process errors ----

usage_tests() {
	check "compact -p 999999: exit 1" 1 '\c' vmamerge compact -p 999999
	stderr_is "vmamerge: no such process: 999999"
	check "compact -p 999999 --json: exit 1, JSON error" 1 \
		'{"error": "no such process: 999999"}' vmamerge compact -p 999999 --json
	check "compact (no -p): exit 2" 2 '\c' vmamerge compact
	stderr_is "vmamerge: compact needs -p PID; see 'vmamerge help compact'"
	check "compact --json (no -p): exit 2, JSON error" 2 \
		"{\"error\": \"compact needs -p PID; see 'vmamerge help compact'\"}" \
		vmamerge compact --json
	check "compact -p 1 extra: exit 2" 2 '\c' vmamerge compact -p 1 extra
	stderr_is "vmamerge: unexpected argument 'extra'; see 'vmamerge help compact'"
	vmamerge help compact > "$T/out" 2>&1
	_rc=$?
	[ $_rc -eq 0 ] && [ "$(head -1 "$T/out")" = 'usage: vmamerge compact -p PID [--json]' ]
	res $? "help compact: its usage" "exit $_rc" "$(head -3 "$T/out")"
}

text_tests
always_tests
json_tests
usage_tests
for _h in $HOLDERS; do
	kill "$_h" 2>/dev/null
done
for _h in $HOLDERS; do
	wait "$_h" 2>/dev/null
done
vmamerge mode optin > /dev/null 2>&1
rm -rf "$T"
[ -n "$LINK" ] && rm -f "$LINK"
exit 0
