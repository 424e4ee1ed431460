# shellcheck shell=sh
# cli_lib.sh: the TAP helpers of the CLI tests (t_cli.sh, t_compact_cli.sh),
# sourced by them; they set DIR (their directory) and CLI before, and T
# (a scratch directory) before they call res, check or stderr_is.

# cli_on_path: "vmamerge" on PATH is $CLI - through a link $LINK in $DIR
# when the one found first is another (LINK empty otherwise)
cli_on_path() {
	PATH=$(dirname "$CLI"):$DIR:$PATH
	export PATH
	LINK=
	if [ "$(command -v vmamerge)" != "$CLI" ]; then
		LINK=$DIR/vmamerge
		ln -sf "$CLI" "$LINK"
	fi
}

# res RC DESC [DIAG...]
res() {
	if [ "$1" -eq 0 ]; then
		echo "ok - $2"
	else
		echo "not ok - $2"
		shift 2
		for _l in "$@"; do
			[ -n "$_l" ] && printf '%s\n' "$_l" | sed 's/^/# /'
		done
	fi
}

# check DESC RC STDOUT CMD...: CMD exits with RC and prints exactly STDOUT
# (byte for byte; "\n" in STDOUT is a newline; a newline is expected at
# the end unless STDOUT ends in "\c"; '\c' alone: no output)
check() {
	_d=$1
	_wr=$2
	case $3 in
	*'\c') printf '%b' "${3%\\c}" > "$T/want" ;;
	*) printf '%b\n' "$3" > "$T/want" ;;
	esac
	shift 3
	"$@" > "$T/out" 2> "$T/err"
	_r=$?
	[ "$_r" -eq "$_wr" ] && cmp -s "$T/want" "$T/out"
	res $? "$_d" "exit status $_r (want $_wr)" "stdout: $(od -c "$T/out" | head -5)" \
		"want:   $(od -c "$T/want" | head -5)" "stderr: $(cat "$T/err")"
}

# stderr_is TEXT: the last check's stderr was exactly TEXT (one line)
stderr_is() {
	printf '%s\n' "$1" > "$T/want"
	cmp -s "$T/want" "$T/err"
	res $? "  ... stderr is '$1'" "stderr: $(cat "$T/err")"
}
