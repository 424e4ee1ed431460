#!/bin/sh
# The vmamerge CLI as a user runs it: every command of README.md's
# "Use" section exactly as written there, the argv `run` hands to the
# program, exit statuses, --json output (checked by t_json: the guest has no
# python or jq), unprivileged use as uid 65534 (t_asuser), `vmamerge
# selftest` (its result, the knobs that stop it).  Runs as root in
# the busybox guest with the module loaded; leaves mode and features at the
# defaults.  Output: "ok - ..."/"not ok - ..." lines for run.sh.
#
#   t_cli.sh            (VMAMERGE_CLI: the CLI, default /bin/vmamerge)
#   t_cli.sh params KO  the module parameters mode= and features= through
#                       modprobe.d and insmod, good and bad values, and
#                       selftest without the module; runs with the module
#                       unloaded and leaves it so

DIR=$(cd "$(dirname "$0")" && pwd)
CLI=${VMAMERGE_CLI:-/bin/vmamerge}
DBG=/sys/kernel/debug/vmamerge
NOBODY=65534
VER=$(cat /sys/module/vmamerge/version 2>/dev/null)
# res, check, stderr_is, cli_on_path
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$DIR/cli_lib.sh"
# the commands below are written as a user types them: "vmamerge ..."
cli_on_path
T=$(mktemp -d /tmp/t_cli.XXXXXX) || exit 1
cd "$T" || exit 1
chmod 755 "$T"

# The README runs the privileged commands with sudo; the guest is root.
sudo() {
	"$@"
}

# runs DESC RC CMD...: CMD exits with RC (stdout in $T/out, for json)
runs() {
	_d=$1
	_wr=$2
	shift 2
	"$@" > "$T/out" 2> "$T/err"
	_r=$?
	[ "$_r" -eq "$_wr" ]
	res $? "$_d" "exit status $_r (want $_wr)" "stdout: $(head -c 600 "$T/out")" \
		"stderr: $(cat "$T/err")"
}

# json DESC WANT PATH...: the last check's stdout is JSON and the values
# at PATHs are WANT (newline-separated)
json() {
	_d=$1
	printf '%b\n' "$2" > "$T/want"
	shift 2
	t_json "$@" < "$T/out" > "$T/jv" 2>&1
	cmp -s "$T/want" "$T/jv"
	res $? "$_d" "t_json $*: $(cat "$T/jv")" "want: $(cat "$T/want")" \
		"stdout: $(head -c 600 "$T/out")"
}

# ---- the headline: run passes exactly the arguments given ----

argv_tests() {
	_who=$1
	shift
	check "run$_who: argv exactly 'a|b c||d|', exit 7" 7 'a|b c||d|\c' \
		"$@" vmamerge run -- /bin/sh -c 'printf "%s|" "$@"; exit 7' sh a 'b c' '' d
	check "run --no-exec$_who: argv exactly 'a|b c||d|', exit 7" 7 'a|b c||d|\c' \
		"$@" vmamerge run --no-exec -- /bin/sh -c 'printf "%s|" "$@"; exit 7' sh a 'b c' '' d
	check "run without --$_who: options after CMD are CMD's" 0 '-p|3|--no-exec|\c' \
		"$@" vmamerge run /bin/sh -c 'printf "%s|" "$@"' sh -p 3 --no-exec
	# the program itself is opted in: it asks the module about itself
	# ($$ is the shell vmamerge became; "; true" keeps it from exec'ing
	# its last command)
	check "run$_who: the program is opted in, kept across execve" 0 \
		'true\ntrue\nfalse' "$@" vmamerge run -- /bin/sh -c \
		'vmamerge stats -p $$ --json | t_json .state.opted_in .state.exec_keep .state.exec_once; true'
	check "run --no-exec$_who: the program is opted in, not across execve" 0 \
		'true\nfalse\nfalse' "$@" vmamerge run --no-exec -- /bin/sh -c \
		'vmamerge stats -p $$ --json | t_json .state.opted_in .state.exec_keep .state.exec_once; true'
	# what the program executes: opted in without --no-exec only
	check "run$_who: what the program executes is opted in too" 0 \
		'this process: opted in, kept across execve, active' \
		"$@" vmamerge run -- /bin/sh -c 'vmamerge status | grep "^this process"; true'
	check "run --no-exec$_who: what the program executes is not" 0 \
		'this process: not opted in, not active' \
		"$@" vmamerge run --no-exec -- /bin/sh -c 'vmamerge status | grep "^this process"; true'
}

# ---- README.md "Use", line by line ----

readme_tests() {
	_modline="module:       loaded"
	[ -n "$VER" ] && _modline="$_modline, version $VER"
	# the full suite runs on full-tier builds and their debug twins
	# (module/builds.list; the smoke tier runs the smoke set only)
	_build="build:        validated (full tier)"
	case $(uname -r) in
	*-vmamerge-*) _build="build:        validated (debug twin of a full build)" ;;
	esac
	# a newer build that make check tests in place of a listed full-tier
	# build (tests/matrix.sh) is admitted by equivalence to it
	[ -z "${VMAMERGE_FOLLOWS:-}" ] || _build="build:        equivalent (to $VMAMERGE_FOLLOWS)"
	check "vmamerge status: loaded, optin, both features" 0 \
		"$(printf 'kernel:       %s\n%s\n%s\nlivepatch:    enabled, no transition in progress\nabi version:  1 (this tool: 1)\nmode:         always [optin] never\nfeatures:     [renumber] [transplant]\nthis process: not opted in, not active' \
		"$(uname -r)" "$_build" "$_modline")" \
		vmamerge status

	# "vmamerge run -- ./my-server": a program in the current directory
	# that reports its own and a child's opt-in state
	cat > my-server <<'EOS'
#!/bin/sh
vmamerge stats -p $$ --json | t_json .state.opted_in
sh -c 'vmamerge stats -p $$ --json | t_json .state.opted_in; true'
EOS
	chmod 755 my-server
	check "vmamerge run -- ./my-server: it and its children opted in" 0 \
		'true\ntrue' vmamerge run -- ./my-server

	t_wait sleep 120000 &
	PID=$!
	t_wait value "/proc/$PID/comm" t_wait 10000 >/dev/null
	check "vmamerge enable -p PID" 0 '\c' vmamerge enable -p $PID
	check "  ... stats -p PID: opted in" 0 \
		"pid $PID: opted in, kept across execve, active" \
		sh -c 'vmamerge stats -p $0 | head -1' $PID
	check "vmamerge disable -p PID" 0 '\c' vmamerge disable -p $PID
	check "  ... stats -p PID: opted out" 0 "pid $PID: not opted in, not active" \
		sh -c 'vmamerge stats -p $0 | head -1' $PID
	check "vmamerge enable -p PID --no-exec" 0 '\c' vmamerge enable -p $PID --no-exec
	check "  ... stats -p PID: opted in until execve" 0 \
		"pid $PID: opted in, ends at execve, active" \
		sh -c 'vmamerge stats -p $0 | head -1' $PID

	# vmamerge stats [-p PID] [--json]
	vmamerge stats > "$T/out" 2>&1
	_rc=$?
	[ $_rc -eq 0 ] && grep -q '^merge_attempts  *[0-9][0-9]*$' "$T/out" &&
		! grep -q '^pid' "$T/out"
	res $? "vmamerge stats: the global counters" "exit $_rc" "$(cat "$T/out")"
	runs "vmamerge stats --json: exit 0" 0 vmamerge stats --json
	json "  ... JSON: pid null, state null" 'null\nnull' .pid .state
	t_json .counters.merge_attempts < "$T/out" | grep -qx '[0-9][0-9]*'
	res $? "  ... counters.merge_attempts is a number"
	vmamerge stats -p $PID > "$T/out" 2>&1
	_rc=$?
	[ $_rc -eq 0 ] && grep -q '^merge_attempts  *[0-9][0-9]*$' "$T/out"
	res $? "vmamerge stats -p PID: state and counters" "exit $_rc" "$(cat "$T/out")"
	vmamerge stats -p $PID --json > "$T/out" 2>&1
	json "vmamerge stats -p PID --json" "$PID\ntrue\nfalse\ntrue" \
		.pid .state.opted_in .state.exec_keep .state.active

	# vmamerge maps -p PID
	vmamerge maps -p $PID > "$T/out" 2>&1
	_rc=$?
	[ $_rc -eq 0 ] && grep -q "^VMAs of pid $PID (from /proc/$PID/smaps and the module" "$T/out" &&
		grep -q '^[0-9]* vmas$' "$T/out" && grep -q '^[0-9]* vmas, [0-9]* adjacent anonymous pairs' "$T/out"
	res $? "vmamerge maps -p PID: VMAs, pgoffs from the module, the summary" \
		"exit $_rc" "$(head -40 "$T/out")"

	# sudo vmamerge verify -p PID
	runs "sudo vmamerge verify -p PID: exit 0" 0 sudo vmamerge verify -p $PID
	grep -q "^pid $PID: [0-9]* VMAs, [0-9]* pages (.*) checked: rmap invariants hold$" "$T/out"
	res $? "  ... says so" "$(cat "$T/out")"

	# sudo vmamerge mode always|optin|never
	for _m in always never optin; do
		case $_m in
		always) _t='[always] optin never' ;;
		optin) _t='always [optin] never' ;;
		never) _t='always optin [never]' ;;
		esac
		check "sudo vmamerge mode $_m" 0 '\c' sudo vmamerge mode $_m
		check "  ... vmamerge mode shows it" 0 "$_t" vmamerge mode
		check "  ... debugfs shows it" 0 "$_t" cat $DBG/mode
	done

	# sudo vmamerge features all|none|+renumber|-transplant ...
	for _f in none +renumber all -transplant 'none +transplant' \
		'-renumber,-transplant' 'all -transplant +transplant'; do
		case $_f in
		none|-renumber,-transplant) _t='renumber transplant' ;;
		+renumber|-transplant) _t='[renumber] transplant' ;;
		'none +transplant') _t='renumber [transplant]' ;;
		*) _t='[renumber] [transplant]' ;;
		esac
		# shellcheck disable=SC2086 # several tokens, as typed
		check "sudo vmamerge features $_f" 0 '\c' sudo vmamerge features $_f
		check "  ... vmamerge features shows it" 0 "$_t" vmamerge features
		check "  ... debugfs shows it" 0 "$_t" cat $DBG/features
	done
	kill $PID
	wait $PID 2>/dev/null
}

# ---- stats --all, maps --summary ----

listing_tests() {
	t_wait sleep 120000 &
	_a=$!
	t_asuser $NOBODY t_wait sleep 120000 &
	_b=$!
	t_wait value "/proc/$_a/comm" t_wait 10000 >/dev/null
	t_wait value "/proc/$_b/comm" t_wait 10000 >/dev/null
	vmamerge enable -p $_a
	vmamerge enable -p $_b --no-exec
	runs "stats --all: exit 0" 0 vmamerge stats --all
	grep -qxF "pid $_a (t_wait): opted in, kept across execve, active" "$T/out" &&
		grep -qxF "pid $_b (t_wait): opted in, ends at execve, active" "$T/out" &&
		tail -1 "$T/out" | grep -qx '[0-9]* opted-in process\(es\)\{0,1\}'
	res $? "  ... lists both opted-in processes with their state" "$(cat "$T/out")"
	runs "stats --all --json: exit 0" 0 vmamerge stats --all --json
	t_json < "$T/out" >/dev/null &&
		grep -qF "{\"pid\": $_a, \"comm\": \"t_wait\", \"state\": {\"opted_in\": true, \"exec_keep\": true" "$T/out" &&
		grep -qF "{\"pid\": $_b, \"comm\": \"t_wait\", \"state\": {\"opted_in\": true, \"exec_keep\": false" "$T/out"
	res $? "  ... valid JSON with both" "$(head -c 800 "$T/out")"
	runs "stats --all as uid $NOBODY: exit 0" 0 t_asuser $NOBODY vmamerge stats --all
	grep -qxF "pid $_b (t_wait): opted in, ends at execve, active" "$T/out" &&
		! grep -q "^pid $_a " "$T/out" &&
		tail -1 "$T/out" | grep -q 'opted-in process.* (.* not readable by this user)$'
	res $? "  ... only its own process; root's are counted as not readable" "$(cat "$T/out")"
	vmamerge disable -p $_a
	runs "stats --all after disable" 0 vmamerge stats --all
	! grep -q "^pid $_a " "$T/out" && grep -q "^pid $_b " "$T/out"
	res $? "  ... the disabled process is gone from the list" "$(cat "$T/out")"

	_n=$(wc -l < /proc/$_a/maps)
	_max=$(cat /proc/sys/vm/max_map_count)
	runs "maps -p PID --summary: exit 0" 0 vmamerge maps -p $_a --summary
	[ "$(sed -n 1p "$T/out")" = "pid $_a: $_n vmas, vm.max_map_count $_max ($((_max - _n)) to go)" ] &&
		[ "$(sed -n 2p "$T/out")" = "missed merges: 0 (vmamerge compact would leave $_n vmas at best)" ] &&
		sed -n 3p "$T/out" | grep -q "^$_n vmas, 0 adjacent anonymous pairs: " &&
		[ "$(wc -l < "$T/out")" -eq 3 ]
	res $? "  ... VMAs, distance to vm.max_map_count, missed merges" "$(cat "$T/out")"
	runs "maps -p PID --summary --json: exit 0" 0 vmamerge maps -p $_a --summary --json
	json "  ... nr_vmas, max_map_count, headroom, missed_merges" \
		"$_a\n$_n\n$_max\n$((_max - _n))\n0\ntrue" \
		.pid .nr_vmas .max_map_count .headroom .missed_merges .module_info
	kill $_a $_b
	wait $_a $_b 2>/dev/null
}

# ---- as uid 65534 ----

unprivileged_tests() {
	_scope=/proc/sys/kernel/yama/ptrace_scope
	_old=
	if [ -e $_scope ]; then
		# Yama's relational mode (1) would refuse a process that is
		# not our descendant; Debian's default is 0
		_old=$(cat $_scope)
		echo 0 > $_scope
	fi
	runs "stats --json as uid $NOBODY: exit 0" 0 t_asuser $NOBODY vmamerge stats --json
	json "  ... JSON: pid null" 'null' .pid

	t_asuser $NOBODY t_wait sleep 120000 &
	_own=$!
	t_wait sleep 120000 &
	_root=$!
	t_wait value "/proc/$_own/comm" t_wait 10000 >/dev/null
	t_wait value "/proc/$_root/comm" t_wait 10000 >/dev/null
	check "enable -p on one's own process as uid $NOBODY" 0 '\c' \
		t_asuser $NOBODY vmamerge enable -p $_own
	vmamerge stats -p $_own --json > "$T/out"
	json "  ... it is opted in" 'true' .state.opted_in
	check "  ... and a shell opts itself in by its pid" 0 'true' \
		t_asuser $NOBODY sh -c 'vmamerge enable -p $$ && vmamerge stats -p $$ --json | t_json .state.opted_in; true'
	check "enable -p on root's process as uid $NOBODY: refused, exit 1" 1 '\c' \
		t_asuser $NOBODY vmamerge enable -p $_root
	stderr_is "vmamerge: enable: permission denied: acting on another process needs ptrace rights over it (pid $_root)"
	vmamerge stats -p $_root --json > "$T/out"
	json "  ... root's process stays opted out" 'false' .state.opted_in
	check "disable -p on root's process as uid $NOBODY: refused, exit 1" 1 '\c' \
		t_asuser $NOBODY vmamerge disable -p $_root
	check "stats -p root's process --json as uid $NOBODY: exit 1, JSON error" 1 \
		"{\"error\": \"query: permission denied: acting on another process needs ptrace rights over it (pid $_root)\"}" \
		t_asuser $NOBODY vmamerge stats -p $_root --json
	check "mode always --json as uid $NOBODY: exit 1, JSON error" 1 \
		'{"error": "set mode: permission denied: changing mode/features needs CAP_SYS_ADMIN"}' \
		t_asuser $NOBODY vmamerge mode always --json
	check "verify -p PID --json as uid $NOBODY: exit 2, JSON error" 2 \
		"{\"error\": \"verify: permission denied: must be root (CAP_SYS_ADMIN, and ptrace read rights over pid $_own)\"}" \
		t_asuser $NOBODY vmamerge verify -p $_own --json
	check "  ... mode unchanged" 0 'always [optin] never' vmamerge mode
	kill $_own $_root
	wait $_own $_root 2>/dev/null
	[ -n "$_old" ] && echo "$_old" > $_scope

	# run's own failures: 125 (the device closed to others for a moment)
	chmod 600 /dev/vmamerge
	check "run as uid $NOBODY without access to the device: exit 125" 125 '\c' \
		t_asuser $NOBODY vmamerge run -- /bin/true
	chmod 666 /dev/vmamerge
	argv_tests " as uid $NOBODY" t_asuser $NOBODY
}

# ---- --json on every command that prints data ----

json_tests() {
	_v=null
	[ -n "$VER" ] && _v="\"$VER\""
	runs "status --json: exit 0" 0 vmamerge status --json
	json "  ... loaded, version, mode, features, this process, livepatch, ABI" \
		"true\n$_v\n\"optin\"\ntrue\ntrue\nfalse\ntrue\nfalse\n1\n1" \
		.module.loaded .module.version .mode .features.renumber .features.transplant \
		.this_process.opted_in .livepatch.enabled .livepatch.transition .abi_version \
		.tool_abi_version
	_tier='"full"'
	case $(uname -r) in *-vmamerge-*) _tier='"debug"' ;; esac
	if [ -n "${VMAMERGE_FOLLOWS:-}" ]; then
		json "  ... the build: equivalent, to the listed build it follows" \
			"\"equivalent\"\n\"$VMAMERGE_FOLLOWS\"" .build.tier .build.equivalent_to
	else
		json "  ... the build: validated, its tier (module/builds.list), itself the nearest" \
			"true\n$_tier\n\"$(uname -r)\"" .build.validated .build.tier .build.nearest
	fi
	check "mode --json" 0 '{"mode": "optin"}' vmamerge mode --json
	check "features --json" 0 '{"features": {"renumber": true, "transplant": true}}' \
		vmamerge features --json
	check "mode never --json: the new mode" 0 '{"mode": "never"}' vmamerge mode never --json
	check "mode optin --json" 0 '{"mode": "optin"}' vmamerge mode --json optin
	check "features --json -transplant: the new features" 0 \
		'{"features": {"renumber": true, "transplant": false}}' \
		vmamerge features --json -transplant
	check "features --json all" 0 '{"features": {"renumber": true, "transplant": true}}' \
		vmamerge features --json all
	runs "maps -p PID --json: exit 0" 0 vmamerge maps -p $$ --json
	json "  ... pid, module info" "$$\ntrue" .pid .module_info
	t_json .nr_vmas .summary.nr_vmas < "$T/out" > "$T/n" && [ "$(sed -n 1p "$T/n")" = "$(sed -n 2p "$T/n")" ] &&
		[ "$(sed -n 1p "$T/n")" -gt 3 ]
	res $? "  ... nr_vmas consistent" "$(cat "$T/n")"
	runs "verify -p PID --json: exit 0" 0 vmamerge verify -p $$ --json
	json "  ... no violation" "$$\n0\nnull" .pid .nr_violations .first_violation
	check "stats -p 999999 --json: exit 1, JSON error" 1 \
		'{"error": "no such process: 999999"}' vmamerge stats -p 999999 --json
	check "maps -p 999999 --json: exit 1, JSON error" 1 \
		'{"error": "no such process: 999999"}' vmamerge maps -p 999999 --json
	check "stats --x --json: usage error as JSON, exit 2" 2 \
		"{\"error\": \"unknown option '--x' for 'stats'; see 'vmamerge help stats'\"}" \
		vmamerge stats --x --json
}

# ---- usage errors, help, exec failures ----

usage_tests() {
	check "stats --x: exit 2, one line on stderr" 2 '\c' vmamerge stats --x
	stderr_is "vmamerge: unknown option '--x' for 'stats'; see 'vmamerge help stats'"
	check "run --bogus ls: exit 125" 125 '\c' vmamerge run --bogus ls
	stderr_is "vmamerge: unknown option '--bogus' for 'run'; see 'vmamerge help run'"
	check "run (no command): exit 125" 125 '\c' vmamerge run
	stderr_is "vmamerge: run needs a command; see 'vmamerge help run'"
	check "enable (no -p): exit 2" 2 '\c' vmamerge enable
	stderr_is "vmamerge: enable needs -p PID; see 'vmamerge help enable'"
	check "no command: exit 2" 2 '\c' vmamerge
	stderr_is "vmamerge: missing command; see 'vmamerge --help'"
	check "run -- /nonexistent: exit 127" 127 '\c' vmamerge run -- /nonexistent
	stderr_is "vmamerge: /nonexistent: command not found"
	check "run -- / (a directory): exit 126" 126 '\c' vmamerge run -- /
	check "run -- sh -c 'exit 3': the program's status" 3 '\c' vmamerge run -- sh -c 'exit 3'
	vmamerge help run > "$T/out" 2>&1
	_rc=$?
	[ $_rc -eq 0 ] && [ "$(head -1 "$T/out")" = 'usage: vmamerge run [--no-exec] [--] CMD [ARG...]' ]
	res $? "help run: its usage" "exit $_rc" "$(head -3 "$T/out")"
	vmamerge stats --help > "$T/out" 2>&1
	[ "$(head -1 "$T/out")" = 'usage: vmamerge stats [-p PID | --all] [--json]' ]
	res $? "stats --help: the help of stats" "$(head -3 "$T/out")"
	vmamerge --help > "$T/out" 2>&1
	_rc=$?
	[ $_rc -eq 0 ] && grep -q '^  run \[--no-exec\]' "$T/out" && grep -q '^  verify -p PID' "$T/out"
	res $? "--help: every command" "exit $_rc"
}

# ---- selftest: the install check (userspace/selftest.c) ----

ST_OK='selftest: ok (renumber merge: 1 VMA; transplant merge: 1 VMA; counters: '
ST_UNLOADED="selftest: module not loaded: load it with 'sudo modprobe vmamerge'"

# st_line DESC PREFIX: the last run's stdout is one line starting with
# PREFIX (the counters after it depend on the kernel's merge paths), and
# nothing went to stderr
st_line() {
	[ "$(wc -l < "$T/out")" -eq 1 ] && [ ! -s "$T/err" ] &&
		case $(cat "$T/out") in "$2"*) true ;; *) false ;; esac
	res $? "$1" "stdout: $(cat "$T/out")" "want: $2..." "stderr: $(cat "$T/err")"
}

# with the module loaded (mode optin, all features): both cases merge,
# the module's counters moved exactly; the knobs that stop it are named
selftest_tests() {
	runs "selftest: exit 0" 0 vmamerge selftest
	st_line "  ... ok, one VMA each, the counters" "$ST_OK"
	grep -q 'merge_renumber +1, merge_transplant +1, vmas_renumbered +1, pages_renumbered +8, vmas_transplanted +1, pages_transplanted +8' "$T/out"
	res $? "  ... renumbered 8 pages, transplanted 8" "$(cat "$T/out")"
	runs "selftest --json: exit 0" 0 vmamerge selftest --json
	json "  ... ok, each case one VMA and its counters" \
		'true\nnull\n"ok"\n1\n1\n1\n8\n"ok"\n1\n1\n1\n8\n16' \
		.ok .error .cases.0.status .cases.0.vmas .cases.0.counters.merge_renumber \
		.cases.0.counters.vmas_renumbered .cases.0.counters.pages_renumbered \
		.cases.1.status .cases.1.vmas .cases.1.counters.merge_transplant \
		.cases.1.counters.vmas_transplanted .cases.1.counters.pages_transplanted \
		.counters.pages_rewritten
	runs "selftest as uid $NOBODY: exit 0" 0 t_asuser $NOBODY vmamerge selftest
	st_line "  ... ok" "$ST_OK"
	vmamerge features -transplant
	runs "selftest with transplant off: exit 0" 0 vmamerge selftest
	st_line "  ... the transplant case skipped" \
		'selftest: ok (renumber merge: 1 VMA; transplant merge: skipped, feature transplant off; counters: '
	vmamerge features -renumber
	check "selftest with renumber off: exit 1, nothing to test" 1 '\c' vmamerge selftest
	stderr_is "vmamerge: selftest: the renumber feature is off, which every case needs: enable it with 'sudo vmamerge features +renumber'"
	vmamerge features all
	vmamerge mode never
	check "selftest in mode never: exit 1" 1 '\c' vmamerge selftest
	stderr_is "vmamerge: selftest: the mode is never, nothing merges: set it with 'sudo vmamerge mode optin'"
	check "selftest --json in mode never: exit 1, JSON error" 1 \
		"{\"error\": \"selftest: the mode is never, nothing merges: set it with 'sudo vmamerge mode optin'\"}" \
		vmamerge selftest --json
	vmamerge mode optin
	check "selftest --bogus: exit 2" 2 '\c' vmamerge selftest --bogus
	stderr_is "vmamerge: unknown option '--bogus' for 'selftest'; see 'vmamerge help selftest'"
	check "selftest x: exit 2" 2 '\c' vmamerge selftest x
	stderr_is "vmamerge: unexpected argument 'x'; see 'vmamerge help selftest'"
}

# without the module (t_cli.sh params, before it loads one)
selftest_unloaded_tests() {
	check "selftest without the module: exit 1" 1 '\c' vmamerge selftest
	stderr_is "vmamerge: $ST_UNLOADED"
	check "selftest --json without the module: exit 1, JSON error" 1 \
		"{\"error\": \"$ST_UNLOADED\"}" vmamerge selftest --json
}

# ---- module parameters (t_cli.sh params KO) ----

LP=/sys/kernel/livepatch/vmamerge

# unload_mod: disable the livepatch, wait, rmmod; 0 when gone
unload_mod() {
	[ -e $LP/enabled ] && echo 0 > $LP/enabled
	t_wait gone $LP 60000 >/dev/null &&
		t_wait value /sys/module/vmamerge/refcnt 0 30000 >/dev/null &&
		rmmod vmamerge && t_wait gone /sys/module/vmamerge 10000 >/dev/null
}

# loaded_with DESC MODE FEATURES: debugfs, parameters and status agree
loaded_with() {
	t_wait value $LP/transition 0 60000 >/dev/null
	check "$1: debugfs mode" 0 "$2" cat $DBG/mode
	check "$1: debugfs features" 0 "$3" cat $DBG/features
	vmamerge status > "$T/out" 2>&1
	grep -qxF "mode:         $2" "$T/out" && grep -qxF "features:     $3" "$T/out"
	res $? "$1: vmamerge status shows them" "$(cat "$T/out")"
}

# refused DESC MESSAGE INSMOD-ARGS...: the load fails, the kernel log has
# MESSAGE (each test's is unique: the log is not cleared, run.sh looks
# for splats in all of it), nothing is left behind
refused() {
	_d=$1
	_m=$2
	shift 2
	insmod "$KO" "$@" > "$T/out" 2>&1
	_rc=$?
	_left=
	for _p in /sys/module/vmamerge /dev/vmamerge $DBG $LP; do
		[ -e $_p ] && _left="$_left $_p"
	done
	[ $_rc -ne 0 ] && [ -z "$_left" ] && dmesg | grep -qF "vmamerge: $_m"
	res $? "$_d: refused with '$_m', nothing left" "insmod exit $_rc: $(cat "$T/out")" \
		"left:$_left" "$(dmesg | tail -5)"
	[ -e /sys/module/vmamerge ] && unload_mod
}

params_tests() {
	_mods=/lib/modules/$(uname -r)
	# as an administrator configures it: modprobe.d, then modprobe
	mkdir -p /etc/modprobe.d "$_mods/extra"
	cp "$KO" "$_mods/extra/vmamerge.ko"
	echo 'options vmamerge mode=always features=renumber' > /etc/modprobe.d/vmamerge.conf
	depmod
	check "modprobe vmamerge with modprobe.d options mode=always features=renumber" 0 '\c' \
		modprobe vmamerge
	loaded_with "modprobe.d" '[always] optin never' '[renumber] transplant'
	check "  ... /sys/module/vmamerge/parameters" 0 'always\nrenumber' \
		cat /sys/module/vmamerge/parameters/mode /sys/module/vmamerge/parameters/features
	_ver=$(cat /sys/module/vmamerge/version)
	check "  ... the CLI has the module's version" 0 "vmamerge $_ver (ABI version 1)" \
		vmamerge --version
	[ -n "$_ver" ] && [ "$_ver" != unknown ]
	res $? "  ... which is set ('$_ver')"
	dmesg | grep -qF "vmamerge: $_ver loaded for $(uname -r), mode always, features 0x1"
	res $? "  ... the kernel log says version, mode and features" "$(dmesg | grep vmamerge: | tail -3)"
	vmamerge features all
	check "  ... the parameter shows the value changed at run time" 0 'renumber,transplant' \
		cat /sys/module/vmamerge/parameters/features
	unload_mod
	res $? "  ... unload"
	rm -f /etc/modprobe.d/vmamerge.conf "$_mods/extra/vmamerge.ko"
	depmod

	check "insmod KO mode=never features=all,-renumber" 0 '\c' \
		insmod "$KO" mode=never features=all,-renumber
	loaded_with "insmod mode=never features=all,-renumber" 'always optin [never]' \
		'renumber [transplant]'
	unload_mod
	res $? "  ... unload"

	refused "mode=sometimes" "mode=sometimes: unknown mode (always, optin, never)" mode=sometimes
	refused "mode=" "mode=: unknown mode (always, optin, never)" mode=
	refused "mode=always features=renumber,frob" \
		"features=renumber,frob: not a list of features" mode=always features=renumber,frob
	# (the parser's other bad input: t_debugfs, through the same code)
	check "  ... and then it loads with the defaults" 0 '\c' insmod "$KO"
	loaded_with "insmod without parameters" 'always [optin] never' '[renumber] [transplant]'
	unload_mod
	res $? "  ... unload"
}

# timed SECTION: run the function SECTION and say how long it took
timed() {
	_t0=$(t_wait now)
	"$1"
	echo "# t_cli.sh $1: $(($(t_wait now) - _t0)) ms"
}

if [ "$1" = params ]; then
	KO=$2
	[ ! -e /sys/module/vmamerge ] && timed selftest_unloaded_tests
	timed params_tests
	cd /
	rm -rf "$T"
	[ -n "$LINK" ] && rm -f "$LINK"
	exit 0
fi

root_argv_tests() {
	argv_tests ""
}

timed root_argv_tests
timed readme_tests
timed listing_tests
timed json_tests
timed usage_tests
timed selftest_tests
timed unprivileged_tests
# the defaults, whatever failed above
vmamerge mode optin >/dev/null 2>&1
vmamerge features all >/dev/null 2>&1
check "defaults restored" 0 'always [optin] never\n[renumber] [transplant]' \
	sh -c "cat $DBG/mode $DBG/features"
cd /
rm -rf "$T"
[ -n "$LINK" ] && rm -f "$LINK"
exit 0
