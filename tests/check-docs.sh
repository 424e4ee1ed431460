#!/bin/bash
# The documentation of the counters and trace events cannot go stale.
# Against the lists the module is built from:
#   - every counter of VMAMERGE_COUNTERS (module/uapi/vmamerge.h) has its
#     entry (".TP" then ".B name") in vmamerge(8)'s COUNTERS section, and
#     every entry there is a counter;
#   - every refusal of VMAMERGE_REFUSALS (module/page_rewrite.h) is named
#     as its counter: X(ID, "name") has X(REFUSED_ID, "refused_name");
#   - every name the trace events print for path, cause and reason
#     (VMAMERGE_PATHS, VMAMERGE_CAUSES in module/vmamerge.h,
#     VMAMERGE_REFUSALS) is in vmamerge(8)'s TRACE EVENTS section.
# Then the same check on a copy of the man page without one counter's
# entry must fail and name it.  And README.md and docs/*.md refer only to
# what the repository has and name no tracker: every path of ours they name
# (its directory is one of the repository's) exists, every NAME.md they
# name is a file of the repository, no "issue N"; a copy with a bad
# reference must be caught.  TAP-like lines; exit 1 on a failure.
#   tests/check-docs.sh [MANPAGE]
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
uapi=$repo/module/uapi/vmamerge.h
man=${1:-$repo/userspace/vmamerge.8}
failed=0 n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

res() { # RC DESC
	n=$((n + 1))
	if (($1 == 0)); then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=1
	fi
}

# xlist MACRO FILE: "ID name" for each X(ID, "name") of "#define MACRO(X)"
xlist() {
	awk -v m="$1" '
		$0 ~ "^#define " m "\\(X\\)" { on = 1; next }
		on {
			if (match($0, /X\([A-Z_0-9]+,[ \t]*"[a-z_0-9]+"\)/)) {
				s = substr($0, RSTART + 2, RLENGTH - 3)
				gsub(/[ \t"]/, "", s)
				sub(/,/, " ", s)
				print s
			}
			if ($0 !~ /\\$/)
				exit
		}' "$2"
}

# section NAME MANPAGE: the lines of the man page's section NAME
section() {
	awk -v s=".SH $1" '$0 == s { on = 1; next } /^\.SH / { on = 0 } on' "$2"
}

# entries MANPAGE: the ".B name" right after each ".TP" of COUNTERS
entries() {
	section COUNTERS "$1" | awk 'tp && /^\.B / { print $2 } { tp = ($0 == ".TP") }'
}

xlist VMAMERGE_COUNTERS "$uapi" >"$tmp/counters"
xlist VMAMERGE_REFUSALS "$repo/module/page_rewrite.h" >"$tmp/refusals"
{
	xlist VMAMERGE_PATHS "$repo/module/vmamerge.h"
	xlist VMAMERGE_CAUSES "$repo/module/vmamerge.h"
	cat "$tmp/refusals"
} >"$tmp/values"
# the lists themselves: a parser that finds nothing checks nothing
[[ $(wc -l <"$tmp/counters") -ge 30 && $(wc -l <"$tmp/refusals") -ge 10 &&
	$(wc -l <"$tmp/values") -ge 25 ]]
res $? "the lists read: $(wc -l <"$tmp/counters") counters, $(wc -l <"$tmp/refusals") refusals, $(wc -l <"$tmp/values") trace values"

# check_man MANPAGE: the counters' entries, both ways; prints the names
# missing as "missing NAME", the extra ones as "extra NAME"
check_man() {
	entries "$1" | sort >"$tmp/documented"
	cut -d' ' -f2 "$tmp/counters" | sort >"$tmp/names"
	comm -23 "$tmp/names" "$tmp/documented" | sed 's/^/missing /'
	comm -13 "$tmp/names" "$tmp/documented" | sed 's/^/extra /'
}

check_man "$man" >"$tmp/diff"
while read -r _ name; do
	! grep -qx "missing $name" "$tmp/diff"
	res $? "counter $name has its entry in vmamerge(8) COUNTERS"
done <"$tmp/counters"
! grep -q '^extra ' "$tmp/diff"
res $? "every COUNTERS entry is a counter$(grep '^extra ' "$tmp/diff" | cut -d' ' -f2 | sed 's/^/ (not: /;s/$/)/' | tr -d '\n')"

while read -r id name; do
	grep -qE "X\(REFUSED_$id,[[:space:]]*\"refused_$name\"\)" "$uapi"
	res $? "refusal $id prints as '$name' and counts in refused_$name"
done <"$tmp/refusals"

section "TRACE EVENTS" "$man" | sed 's/\\-/-/g' >"$tmp/trace"
while read -r _ name; do
	grep -qw -- "$name" "$tmp/trace"
	res $? "trace value $name is in vmamerge(8) TRACE EVENTS"
done <"$tmp/values"

# the check can fail: a man page without refused_ksm's entry
sed '/^\.B refused_ksm$/,/^\.TP$/d' "$man" >"$tmp/broken.8"
check_man "$tmp/broken.8" >"$tmp/diff"
[[ $(cat "$tmp/diff") == "missing refused_ksm" ]]
res $? "a man page without refused_ksm's entry is caught (got: $(tr '\n' ' ' <"$tmp/diff"))"

# ---- module parameters: every one but the testing-only ones in vmamerge(8) ----
grep -ohE 'module_param(_cb|_named)?\([a-z_0-9]+' "$repo"/module/*.c |
	sed 's/.*(//' | grep -v '^test_' | sort -u >"$tmp/params"
section "MODULE PARAMETERS" "$man" | sed -n 's/^\.B[IR]* \([a-z_0-9]*\)=.*/\1/p' | sort -u >"$tmp/mparams"
[[ -s $tmp/params ]] && cmp -s "$tmp/params" "$tmp/mparams"
res $? "every module parameter is in vmamerge(8) MODULE PARAMETERS ($(tr '\n' ' ' <"$tmp/params"); the man page: $(tr '\n' ' ' <"$tmp/mparams"))"

# ---- references of the documentation ----

# bad_refs DOC: what DOC names that the repository does not have, one
# "DOC: REF" line each
bad_refs() {
	local p
	grep -oE '(^|[^A-Za-z0-9_/.$-])(module|tools|tests|docs|userspace|debian)/[A-Za-z0-9_./+-]*[A-Za-z0-9_+-]' "$1" |
		sed -E 's/^[^a-z]//' | sort -u | while read -r p; do
		# a path of ours: its directory exists here (not the kernel's
		# tools/testing/..., not a build's output directory)
		[[ -d $repo/$(dirname "$p") ]] || continue
		# a pattern (module/kernel-<series>/), a build's output
		[[ $p == *- || $p == debian/tmp ]] && continue
		[[ -e $repo/$p ]] || echo "$1: $p"
	done
	grep -oE '[A-Za-z0-9_-]+\.md\b' "$1" | sort -u | while read -r p; do
		[[ -n $(find "$repo" -path "$repo/.git" -prune -o -name "$p" -print -quit) ]] ||
			echo "$1: $p"
	done
	grep -inoE '\bissues? #?[0-9]+' "$1" | sed "s|^|$1: line |"
}

docs=("$repo/README.md" "$repo"/docs/*.md)
for d in "${docs[@]}"; do
	bad_refs "$d" >"$tmp/refs"
	[[ ! -s $tmp/refs ]]
	res $? "${d#"$repo"/}: every file it names is in the repository, no issue numbers$(sed "s|^$repo/||" "$tmp/refs" | head -5 | tr '\n' ';' | sed 's/^./ (not: &/;s/;$/)/')"
done
# the check can fail
{
	cat "$repo/README.md"
	echo 'See tools/no-such-tool.sh, kernel-notes.md and issue 99.'
} >"$tmp/README.md"
bad_refs "$tmp/README.md" | sed "s|^$tmp/||" >"$tmp/refs"
[[ $(grep -c . "$tmp/refs") == 3 ]]
res $? "a README naming a missing tool, a file outside the repository and an issue is caught (got: $(tr '\n' ' ' <"$tmp/refs"))"

echo "1..$n"
exit "$failed"
