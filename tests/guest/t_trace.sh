#!/bin/sh
# The trace events print names, not numbers.  Runs as root in
# the busybox guest with the module loaded; leaves the events off and the
# trace buffer empty.  Output: "ok - ..."/"not ok - ..." lines for run.sh.
#
# 6.12: the format files of vmamerge_merge and vmamerge_refuse carry the
# symbol tables of path, cause and reason with numbers where the source
# has the enum names (TRACE_DEFINE_ENUM: what trace-cmd and perf parse);
# then t_trace runs opted in with the events on, and every event it
# announces ("want EVENT FIELDS") must be in the buffer exactly, and no
# path=, cause= or reason= in the buffer may be anything but a name.
# 6.1 creates no trace events for a livepatch module (docs/tracing.md,
# "Trace events"): there the test checks that this is why they are missing.

DIR=$(cd "$(dirname "$0")" && pwd)
# res
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$DIR/cli_lib.sh"
TR=/sys/kernel/tracing
EV=$TR/events/vmamerge
T=$(mktemp -d /tmp/t_trace.XXXXXX) || exit 1

: > "$T/err"
[ -e "$TR/trace" ] || mount -t tracefs tracefs "$TR" 2> "$T/err"
[ -e "$TR/trace" ]
res $? "tracefs at $TR" "$(cat "$T/err")"

if [ ! -d "$EV" ]; then
	case $(uname -r) in
	6.1.*)
		dmesg | grep -qF 'vmamerge: module has bad taint, not creating trace events'
		res $? "6.1: no vmamerge trace events, because the kernel refuses them for a livepatch module" \
			"$(dmesg | grep vmamerge | tail -5)"
		echo "ok - trace events print names # SKIP 6.1 creates no trace events of livepatch modules"
		;;
	*)
		res 1 "$EV exists" "$(dmesg | grep vmamerge | tail -5)"
		;;
	esac
	rm -rf "$T"
	exit 0
fi

# ---- the format files ----

# fmt EVENT FIELD NAME: in EVENT's print format, FIELD's symbol table
# (from "__print_symbolic(REC->FIELD ," to the next ")") has NAME, with a
# number for its value
fmt() {
	sed -n 's/^print fmt: //p' "$EV/$1/format" | tr ')' '\n' |
		grep -F "__print_symbolic(REC->$2 ," > "$T/fmt"
	grep -qE "\\{ [0-9]+, \"$3\" \\}" "$T/fmt"
	res $? "$1 format: $2 prints as a name from a table of numbers ($3)" \
		"$(cat "$EV/$1/format")"
}
fmt vmamerge_merge path mremap_move
fmt vmamerge_merge cause renumber
fmt vmamerge_merge cause av_null
fmt vmamerge_merge path modify
fmt vmamerge_refuse path mremap_move
fmt vmamerge_refuse reason shared
# layout EVENT: EVENT's own fields are exactly those on stdin: the raw
# record that tools read stays as it was (ints), only the print changed
layout() {
	cat > "$T/want"
	grep -v 'field:.*common_' "$EV/$1/format" | grep 'field:' |
		tr -s '\t' ' ' | sed 's/^ //' > "$T/got"
	cmp -s "$T/want" "$T/got"
	res $? "$1 format: the raw fields are as before (path, cause, reason: int)" \
		"$(diff "$T/want" "$T/got")"
}
layout vmamerge_merge <<EOS
field:struct mm_struct * mm; offset:8; size:8; signed:0;
field:int path; offset:16; size:4; signed:1;
field:unsigned long start; offset:24; size:8; signed:0;
field:unsigned long end; offset:32; size:8; signed:0;
field:unsigned long pgoff; offset:40; size:8; signed:0;
field:int cause; offset:48; size:4; signed:1;
field:bool merged; offset:52; size:1; signed:0;
EOS
layout vmamerge_refuse <<EOS
field:struct mm_struct * mm; offset:8; size:8; signed:0;
field:int path; offset:16; size:4; signed:1;
field:unsigned long start; offset:24; size:8; signed:0;
field:unsigned long end; offset:32; size:8; signed:0;
field:int reason; offset:40; size:4; signed:1;
EOS
cat "$EV"/*/format > "$T/fmt"
! grep -q 'VMAMERGE_' "$T/fmt"
res $? "the format files have no enum names left (each value is TRACE_DEFINE_ENUM'd)" \
	"$(grep -o 'VMAMERGE_[A-Z_]*' "$T/fmt" | sort -u | head -20)"

# ---- the events of t_trace ----

echo 0 > "$TR/tracing_on"
: > "$TR/trace"
echo 1 > "$EV/enable"
echo 1 > "$TR/tracing_on"
"$DIR/t_trace" > "$T/out" 2>&1
_rc=$?
echo 0 > "$EV/enable"
cat "$TR/trace" > "$T/trace"
: > "$TR/trace"
grep -v '^want ' "$T/out"
[ "$_rc" -eq 0 ]
res $? "t_trace exit status $_rc"

# every line announced, exactly, after the mm pointer
_n=0
while read -r _w _ev _f; do
	_n=$((_n + 1))
	awk -v ev=" $_ev: mm=" -v f="$_f" '
		index($0, ev) {
			rest = substr($0, index($0, ev) + length(ev))
			if (substr(rest, index(rest, " ") + 1) == f)
				found = 1
		}
		END { exit !found }' "$T/trace"
	res $? "trace: $_ev $_f" "the buffer's vmamerge lines:" \
		"$(grep -E 'vmamerge_(merge|refuse):' "$T/trace" | sed 's/^.*: vmamerge_/vmamerge_/' | head -20)"
done <<EOS
$(grep '^want ' "$T/out")
EOS
[ "$_n" -ge 5 ]
res $? "t_trace announced $_n events (want 5)"

# no number in a symbolic field, on any line of the buffer
grep -E 'vmamerge_(merge|refuse):' "$T/trace" > "$T/ev"
_bad=$(awk '{ for (i = 1; i <= NF; i++)
		if ($i ~ /^(path|cause|reason)=/ && $i !~ /^[a-z]+=[a-z][a-z_]*$/)
			print }' "$T/ev")
[ -s "$T/ev" ] && [ -z "$_bad" ]
res $? "trace: path, cause and reason are names on all $(wc -l < "$T/ev") merge/refuse lines" \
	"$(printf '%s\n' "$_bad" | head -10)"
rm -rf "$T"
