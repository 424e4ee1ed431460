#!/bin/bash
# test_main.sh VMAMERGE T_JSON: the CLI through its real entry point with
# generated argument lists - every command with each argument of a list of
# awkward ones (unknown and repeated options, --json and -- in every
# position, empty strings, huge numbers, bad pids) alone, and with every
# pair of the ones that change how the rest is parsed; then check-kernel
# past its options with a fake kfp that answers each way (equivalent,
# refused, garbage, cut short, its own error, killed by a signal).
# VMAMERGE is a build with AddressSanitizer and UndefinedBehaviorSanitizer
# (make test builds vmamerge.asan); the module need not be loaded (on a
# host it is not).  Every run must end with an exit status the CLI
# documents - 0, 1 or 2; run's 125, 126 or 127 - never a signal or a
# sanitizer report (exit 86), and whenever --json is among the options
# (json_wanted) its output must be one JSON value (T_JSON checks).
set -u
cli=${1:?usage: $0 VMAMERGE T_JSON}
json=${2:?usage: $0 VMAMERGE T_JSON}
export ASAN_OPTIONS=exitcode=86:detect_leaks=0:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:exitcode=86:print_stacktrace=1
cmds=(status mode features enable disable run stats maps verify compact
	check-kernel selftest help)
atoms=(--json -- '' -p 99999999999999999999999 -1 0 abc 2147483648 -x
	--bogus --json=1 'all,x' -renumber always --all --summary --no-exec
	/nonexistent -h --help --image --config=/nonexistent 6.1.0-99-amd64
	../x)
# the pairs: the atoms that change how the rest is parsed, and bad values
pairs=(--json -- '' -p 99999999999999999999999 -x --bogus -h --image)
out=$(mktemp) err=$(mktemp) T=$(mktemp -d)
trap 'rm -rf "$out" "$err" "$T"' EXIT
runs=0 fails=0

# json_wanted CMD ARGS...: --json among CMD's options - before any "--",
# and for run before its CMD (the first argument that is not an option),
# not as the value of check-kernel's --image or --config - and no help
# asked for (help is text: -h, --help, the help command).
json_wanted() {
	local c=$1 a json=1 skip=
	shift
	[[ $c == help ]] && return 1
	for a; do
		[[ $skip ]] && { skip=; continue; }
		[[ $c == check-kernel && ( $a == --image || $a == --config ) ]] && skip=1
		[[ $a == -- ]] && break
		[[ $c == run && ( -z $a || $a != -* ) ]] && break
		[[ $a == -h || $a == --help ]] && return 1
		[[ $a == --json ]] && json=0
	done
	return $json
}

check() { # CMD ARGS...
	local rc why=
	"$cli" "$@" >"$out" 2>"$err" </dev/null
	rc=$?
	runs=$((runs + 1))
	case $1:$rc in
	*:0 | *:1 | *:2 | run:125 | run:126 | run:127) ;;
	*) why="exit status $rc" ;;
	esac
	if [[ -z $why ]] && json_wanted "$@" && ! "$json" <"$out" 2>/dev/null; then
		why="--json given, output is not one JSON value: $(head -c 200 "$out")"
	fi
	if [[ -n $why ]]; then
		fails=$((fails + 1))
		printf 'not ok - vmamerge'; printf " '%s'" "$@"; printf ': %s\n' "$why"
		head -5 "$err" | sed 's/^/#   /'
	fi
}

for c in "${cmds[@]}"; do
	check "$c"
	for a in "${atoms[@]}"; do
		check "$c" "$a"
	done
	for a in "${pairs[@]}"; do
		for b in "${pairs[@]}"; do
			check "$c" "$a" "$b"
		done
	done
	check "$c" --json --json
	check "$c" -p 1 -p 2 --json
done
# check-kernel past its options: a fake kfp (KFP_SAYS: what it answers)
# for the release it is given, with a fake image, config and fingerprints
cat >"$T/kfp" <<'EOF'
#!/bin/bash
rel=unknown
while (($#)); do [[ $1 == --release ]] && rel=$2; shift; done
head="image $rel
version #1 SMP Debian 6.1.192-9
build-id 00ff"
case ${KFP_SAYS:-} in
equivalent) printf '%s\nref 6.1.0-57-amd64 identical 1 2 3\nequivalent 6.1.0-57-amd64\n' "$head" ;;
refused) printf '%s\nref 6.1.0-57-amd64 differs 2 func:a struct:b\nrefused 6.1.0-57-amd64\n' "$head"; exit 1 ;;
garbage) printf '%s\nref 6.1.0-57-amd64 differs 9 a\n' "$head" ;;
cut) printf 'image %s\nversi' "$rel" ;;
error) echo "kfp: bad image" >&2; exit 2 ;;
signal) kill -SEGV $$ ;;
*) exit 7 ;;
esac
EOF
chmod 755 "$T/kfp"
: >"$T/vmlinuz" && : >"$T/config" && mkdir "$T/fp" && : >"$T/fp/6.1.0-57-amd64.kfp"
export VMAMERGE_KFP=$T/kfp VMAMERGE_FINGERPRINTS=$T/fp
ck=(check-kernel 6.1.0-99-amd64 --image "$T/vmlinuz" --config "$T/config")
for says in equivalent refused garbage cut error signal other; do
	export KFP_SAYS=$says
	check "${ck[@]}"
	for a in "${pairs[@]}"; do
		check "${ck[@]}" "$a"
		check "${ck[@]}" --json "$a"
	done
done
for a in "${atoms[@]}"; do
	check "${ck[@]}" "$a"
	check check-kernel "$a" --image "$T/vmlinuz" --config "$T/config" --json
done
unset KFP_SAYS

((fails == 0)) && echo "ok - the CLI through main: $runs argument lists, each a documented exit status, JSON where asked"
((fails == 0))
