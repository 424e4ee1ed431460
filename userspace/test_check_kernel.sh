#!/bin/bash
# test_check_kernel.sh VMAMERGE T_JSON BUILDS_LIST: `vmamerge check-kernel`
# and the build tier of `vmamerge status` through the real entry point,
# with fake kfp and modinfo programs and fake image, config and
# fingerprint files in a temporary directory: a validated build (kfp not
# run), an equivalent one, a refused one, kfp's own error passed on, kfp
# missing, killed by a signal, printing garbage, the fingerprints missing,
# --json, bad options.  VMAMERGE is the sanitizer build (make test); every
# run must end with the exit status wanted, never a signal or a sanitizer
# report (exit 86).  BUILDS_LIST: the list VMAMERGE was built with.
# TAP-like lines; exit 1 on a failure.
set -u
cli=${1:?usage: $0 VMAMERGE T_JSON BUILDS_LIST}
t_json=${2:?usage: $0 VMAMERGE T_JSON BUILDS_LIST}
list=${3:?usage: $0 VMAMERGE T_JSON BUILDS_LIST}
export ASAN_OPTIONS=exitcode=86:detect_leaks=0:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:exitcode=86:print_stacktrace=1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
full=$(awk '!/^[ \t]*#/ && NF >= 5 && $4 == "full" { print $2; exit }' "$list")
rel=6.1.0-99-amd64	# in no list

# shellcheck source-path=SCRIPTDIR source=test_lib.sh
source "$(dirname "$0")/test_lib.sh"

# run WANT ARGS...: the CLI with ARGS, exit status WANT ($T/out, $T/err)
run() {
	local want=$1 rc
	shift
	"$cli" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	[[ $rc == "$want" ]]
	res $? "vmamerge $*: exit $want" "exit $rc" "stdout: $(head -c 600 "$T/out")" \
		"stderr: $(head -c 600 "$T/err")"
}

out_is() { # DESC WANT: the last run's stdout is WANT
	[[ $(cat "$T/out") == "$2" ]]
	res $? "  ... $1" "got: $(cat "$T/out")" "want: $2"
}

err_has() { # DESC TEXT: the last run's stderr has TEXT
	grep -qF -- "$2" "$T/err"
	res $? "  ... $1" "stderr: $(cat "$T/err")" "want: $2"
}

# json DESC WANT PATH...: the last stdout is one JSON value (python's
# json.tool too, where there is a python3), with WANT (lines) at PATHs
json() {
	local d=$1 want=$2 got
	shift 2
	got=$("$t_json" "$@" <"$T/out" 2>&1)
	if [[ $got == "$(printf '%b' "$want")" ]] && { ! command -v python3 >/dev/null ||
		python3 -m json.tool <"$T/out" >/dev/null 2>&1; }; then
		res 0 "  ... JSON: $d"
	else
		res 1 "  ... JSON: $d" "got: $got" "want: $(printf '%b' "$want")" \
			"stdout: $(head -c 600 "$T/out")"
	fi
}

# fake NAME BODY: an executable shell script $T/NAME
fake() {
	printf '#!/bin/sh\n%s\n' "$2" >"$T/$1"
	chmod 755 "$T/$1"
}

# kfp_says STATUS LINES...: a fake kfp that records its arguments in
# $T/kfp.argv and prints LINES, then exits with STATUS
kfp_says() {
	local status=$1
	shift
	printf '%s\n' "$@" >"$T/kfp.out"
	fake kfp "printf '%s\\n' \"\$@\" >'$T/kfp.argv'
cat '$T/kfp.out'
exit $status"
}

mkdir -p "$T/fp" "$T/empty"
: >"$T/vmlinuz" && : >"$T/config"
: >"$T/fp/6.1.0-57-amd64.kfp" && : >"$T/fp/6.1.0-56-amd64.kfp"
: >"$T/fp/options" && : >"$T/fp/.hidden.kfp"
export VMAMERGE_KFP=$T/kfp VMAMERGE_FINGERPRINTS=$T/fp
img=(--image "$T/vmlinuz" --config "$T/config")
head=("image $rel" "version #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-9 (2026-12-01)"
	"build-id 6a2b4ac7")

# ---- a validated build: its tier, kfp not run ----
kfp_says 0
rm -f "$T/kfp.argv"
run 0 check-kernel "$full"
out_is "validated, kfp not run" "$full: validated (full tier)"
[[ ! -e $T/kfp.argv ]]
res $? "  ... kfp was not run"
run 0 check-kernel "$full" --json
json "validated" "true\n\"full\"\nnull\n\"$full\"\nnull\n[]\nnull" \
	.validated .tier .equivalent_to .nearest .build_id .differs .error

# ---- equivalent ----
kfp_says 0 "${head[@]}" "ref 6.1.0-56-amd64 differs 1 func:copy_vma" \
	"ref 6.1.0-57-amd64 identical 46 20 31" "equivalent 6.1.0-57-amd64"
run 0 check-kernel "$rel" "${img[@]}"
out_is "equivalent, with what is identical" \
	"$rel: equivalent to 6.1.0-57-amd64: 46 functions, 20 structs, 31 config options identical"
[[ $(cat "$T/kfp.argv") == "$(printf '%s\n' check "$T/vmlinuz" --config "$T/config" \
	--release "$rel" "$T/fp/6.1.0-56-amd64.kfp" "$T/fp/6.1.0-57-amd64.kfp")" ]]
res $? "  ... kfp check IMAGE --config CONFIG --release REL and every *.kfp, sorted" \
	"argv: $(tr '\n' ' ' <"$T/kfp.argv")"
run 0 check-kernel --json "${img[@]}" "$rel"
json "equivalent" "\"$rel\"\nfalse\n\"equivalent\"\n\"6.1.0-57-amd64\"\n\"6.1.0-57-amd64\"\n\"6a2b4ac7\"\n[]\nnull" \
	.kernel .validated .tier .equivalent_to .nearest .build_id .differs .error
# paths that look like options reach kfp as paths
cp "$T/vmlinuz" ./-vmlinuz.$$ 2>/dev/null &&
	run 0 check-kernel "$rel" --image "-vmlinuz.$$" --config "$T/config" &&
	grep -qx -- "./-vmlinuz.$$" "$T/kfp.argv"
res $? "  ... an image path starting with '-' is given to kfp as ./-..."
rm -f ./-vmlinuz.$$
# kfp filling its stderr while it prints its records: read both at once
fake kfp "head -c 300000 /dev/zero | tr '\\0' x >&2; cat '$T/kfp.out'"
run 0 check-kernel "$rel" "${img[@]}"

# ---- refused ----
kfp_says 1 "${head[@]}" "ref 6.1.0-56-amd64 differs 3 func:copy_vma struct:mm_struct option:CONFIG_KSM" \
	"ref 6.1.0-57-amd64 differs 2 func:copy_vma struct:mm_struct" "refused 6.1.0-57-amd64"
run 1 check-kernel "$rel" "${img[@]}"
out_is "refused: what differs from the nearest, what to do" \
	"$rel: refused: differs from the nearest validated build 6.1.0-57-amd64 in: func:copy_vma struct:mm_struct
to support it, port it in the vmamerge source tree: make port KVER=$rel (docs/testing.md, \"Porting to a new build\")"
run 1 check-kernel "$rel" "${img[@]}" --json
json "refused" "false\n\"refused\"\nnull\n\"6.1.0-57-amd64\"\n[\"func:copy_vma\", \"struct:mm_struct\"]\nnull" \
	.validated .tier .equivalent_to .nearest .differs .error
kfp_says 1 "${head[@]}" "ref 6.12.117+deb12-amd64 other-series" "ref 6.12.118+deb13-amd64 other-series" \
	"refused none"
run 1 check-kernel "$rel" "${img[@]}" --json
json "refused, no build of its series" "\"refused\"\nnull\n[]" .tier .nearest .differs

# ---- kfp's own errors ----
fake kfp "echo 'kfp: $T/vmlinuz: not a bzImage' >&2; exit 2"
run 2 check-kernel "$rel" "${img[@]}"
err_has "kfp's message passed on" "vmamerge: check-kernel: kfp: $T/vmlinuz: not a bzImage"
[[ ! -s $T/out ]]
res $? "  ... nothing on stdout"
run 2 check-kernel "$rel" "${img[@]}" --json
json "kfp's message as the error" "null\n\"check-kernel: kfp: $T/vmlinuz: not a bzImage\"" .tier .error
fake kfp "exit 2"
run 2 check-kernel "$rel" "${img[@]}"
err_has "exit 2 without a message" "failed (exit status 2) without its 'kfp: ...' message"
fake kfp "exit 3"
run 2 check-kernel "$rel" "${img[@]}"
err_has "an exit status kfp never has" "exited with status 3 (kfp check exits 0, 1 or 2)"
fake kfp 'kill -SEGV $$'
run 2 check-kernel "$rel" "${img[@]}"
err_has "killed by a signal" "was killed by signal 11"
run 2 check-kernel "$rel" "${img[@]}" --json
json "killed by a signal" "null" .tier
grep -qF '"error": "check-kernel: '"$T"'/kfp was killed by signal 11' "$T/out"
res $? "  ... the error in the object" "$(cat "$T/out")"
fake kfp "head -c 1100000 /dev/zero | tr '\\0' x; echo"
run 2 check-kernel "$rel" "${img[@]}"
err_has "more output than any kfp prints" "printed more than 1048576 bytes"
printf '#!/nonexistent/interpreter\n' >"$T/kfp"
run 2 check-kernel "$rel" "${img[@]}"
err_has "a kfp that cannot be executed" "check-kernel: cannot run $T/kfp:"

# ---- garbage from kfp: each a specific error, exit 2 ----
garbage() { # STATUS WHY LINES...
	local status=$1 why=$2
	shift 2
	kfp_says "$status" "$@"
	run 2 check-kernel "$rel" "${img[@]}"
	err_has "garbage: $why" "$why"
}
fake kfp "exit 0"
run 2 check-kernel "$rel" "${img[@]}"
err_has "garbage: nothing at all" "kfp printed nothing (exit status 0)"
garbage 1 "without the verdict" "${head[@]}" "ref 6.1.0-56-amd64 other-series"
garbage 1 "expected 'image RELEASE'" "hello"
garbage 1 "kfp checked kernel 6.1.0-57-amd64, not $rel" "image 6.1.0-57-amd64"
garbage 1 "3 items announced, 1 given" "${head[@]}" "ref 6.1.0-56-amd64 differs 3 func:x"
garbage 1 "unknown comparison" "${head[@]}" "ref 6.1.0-56-amd64 similar"
garbage 1 "kfp reported on 1 of the 2 fingerprints given" "${head[@]}" \
	"ref 6.1.0-56-amd64 differs 1 func:x" "refused 6.1.0-56-amd64"
garbage 0 "exited with status 0 after 'refused'" "${head[@]}" "ref 6.1.0-56-amd64 differs 1 func:x" \
	"ref 6.1.0-57-amd64 other-series" "refused 6.1.0-56-amd64"
garbage 0 "a line after the verdict" "${head[@]}" "ref 6.1.0-56-amd64 identical 1 2 3" \
	"ref 6.1.0-57-amd64 other-series" "equivalent 6.1.0-56-amd64" "equivalent 6.1.0-56-amd64"
fake kfp "printf 'image $rel'"
run 2 check-kernel "$rel" "${img[@]}"
err_has "garbage: a line cut short" "the output ends in the middle of a line"
fake kfp "printf 'image $rel\\n\\000\\n'"
run 2 check-kernel "$rel" "${img[@]}" --json
json "garbage: a NUL byte" "null" .tier
err_has "garbage: a NUL byte" "a NUL byte at offset"

# ---- what is missing: kfp, the fingerprints, the image ----
kfp_says 0
VMAMERGE_KFP=$T/nokfp run 2 check-kernel "$rel" "${img[@]}"
err_has "kfp missing: what to install" "kfp is not installed: no $T/nokfp (it comes with the CLI"
VMAMERGE_KFP=$T/nokfp run 2 check-kernel "$rel" "${img[@]}" --json
json "kfp missing" "false\nnull" .validated .tier
grep -qF '"error": "check-kernel: kfp is not installed' "$T/out"
res $? "  ... the error in the object" "$(cat "$T/out")"
VMAMERGE_FINGERPRINTS=$T/nofp run 2 check-kernel "$rel" "${img[@]}"
err_has "fingerprints missing: what to install" "no fingerprints: $T/nofp does not exist (they come with the module source"
VMAMERGE_FINGERPRINTS=$T/empty run 2 check-kernel "$rel" "${img[@]}"
err_has "no fingerprint in the directory" "no fingerprint (*.kfp) in $T/empty"
run 2 check-kernel "$rel"
err_has "no image: both places named" "no kernel image of $rel: neither /boot/vmlinuz-$rel nor /usr/lib/modules/$rel/vmlinuz exists (give one with --image PATH)"
run 2 check-kernel "$rel" --image "$T/vmlinuz"
err_has "no config: both places named" "no kernel config of $rel: neither /boot/config-$rel nor /usr/lib/modules/$rel/config exists (give one with --config PATH)"
run 2 check-kernel "$rel" --image "$T/none" --config "$T/config"
err_has "an image that is not there" "cannot read $T/none: No such file or directory"

# ---- bad options: usage errors, exit 2, JSON when asked ----
for args in "a b" "../x" "--image" "--bogus" "-p 1" "--image a --image b" "--config="; do
	# shellcheck disable=SC2086 # the words of each case
	run 2 check-kernel $args
	err_has "a usage error" "see 'vmamerge help check-kernel'"
done
run 2 check-kernel --json a b
json "a usage error" "\"check-kernel takes at most one release; see 'vmamerge help check-kernel'\"" .error
run 0 check-kernel --help
grep -q '^usage: vmamerge check-kernel \[RELEASE\] \[--image PATH\] \[--config PATH\] \[--json\]$' "$T/out"
res $? "  ... the usage line"
run 0 --help
grep -q '^  check-kernel \[RELEASE\]' "$T/out"
res $? "  ... vmamerge --help lists check-kernel"

# ---- status: the tier of a build not in the list, from modinfo ----
if [[ -e /sys/module/vmamerge ]] || awk -v r="$(uname -r)" '$2 == r { f = 1 } END { exit !f }' "$list"; then
	res 0 "status from modinfo # SKIP the module is loaded, or $(uname -r) is listed"
else
	mkdir -p "$T/bin"
	printf '#!/bin/sh\n[ "$*" = "-k %s -F tier vmamerge" ] || exit 1\necho "equivalent %s"\n' \
		"$(uname -r)" "$full" >"$T/bin/modinfo"
	chmod 755 "$T/bin/modinfo"
	PATH=$T/bin:$PATH run 1 status
	grep -qx "build:        equivalent (to $full)" "$T/out"
	res $? "  ... an equivalent build's module installed: equivalent (to REF)" "$(cat "$T/out")"
	err_has "  and load it" "load it with 'sudo modprobe vmamerge'"
	PATH=$T/bin:$PATH run 1 status --json
	json "status: the build equivalent" "false\n\"equivalent\"\n\"$full\"\n\"$full\"" \
		.build.validated .build.tier .build.equivalent_to .build.nearest
	printf '#!/bin/sh\necho "equivalent ../x"\n' >"$T/bin/modinfo"
	PATH=$T/bin:$PATH run 1 status --json
	json "status: a tier line that is none: refused" "\"refused\"\nnull" \
		.build.tier .build.equivalent_to
	printf '#!/bin/sh\necho "modinfo: ERROR: Module vmamerge not found." >&2\nexit 1\n' >"$T/bin/modinfo"
	PATH=$T/bin:$PATH run 1 status
	grep -q "^build:        not validated (.*; whether it is equivalent to a validated build: vmamerge check-kernel$" "$T/out"
	res $? "  ... no module: not validated, and the hint to check-kernel" "$(cat "$T/out")"
	err_has "  the reason" "'vmamerge check-kernel' says whether it is equivalent to a validated build"
	grep -q ERROR "$T/err"
	res $((!$?)) "  ... modinfo's own error is not shown"
fi

echo "1..$n"
echo "$((n - failed)) passed, $failed failed"
((failed == 0))
