#!/bin/bash
# record-expected.sh GUESTLOG...: write tests/selftests/expected-RELEASE.txt
# from the results without the module that /selftests/corpus.sh printed in
# guest logs (the results channel, e.g. $VMAMERGE_CACHE/logs/<run>/
# guest-RELEASE.log.results): "NAME RESULT" lines, timings dropped.  With
# several logs of the same release, they must agree line for line (a test
# whose result differs between runs is flaky: fix or exclude it in the run
# list rather than record it).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
(($# >= 1)) || { echo "usage: $0 GUESTLOG..." >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rel="" n=0
for log in "$@"; do
	n=$((n + 1))
	tr -d '\r' <"$log" | awk -v out="$tmp/$n" '
		/^# selftests-results-begin / { f = 1; print $3 > (out ".rel"); next }
		/^# selftests-results-end/ { f = 0 }
		f { sub(/^# /, ""); print $1, $2 > out }'
	[[ -s $tmp/$n ]] || { echo "record-expected: no results block in $log" >&2; exit 1; }
	r=$(<"$tmp/$n.rel")
	[[ -z $rel || $r == "$rel" ]] || { echo "record-expected: $log is of $r, not $rel" >&2; exit 1; }
	rel=$r
	if ((n > 1)) && ! diff -u "$tmp/1" "$tmp/$n" >&2; then
		echo "record-expected: $log differs from $1 (above): flaky tests" >&2
		exit 1
	fi
done
{
	echo "# Results of the mm selftests without the module on $rel"
	echo "# (tests/selftests/record-expected.sh from $n guest run(s))."
	cat "$tmp/1"
} >"$here/expected-$rel.txt"
echo "wrote $here/expected-$rel.txt ($(wc -l <"$tmp/1") results)"
