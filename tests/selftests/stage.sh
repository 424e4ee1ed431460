#!/bin/bash
# stage.sh RELEASE STAGEDIR: put the mm selftest corpus of RELEASE's series
# into STAGEDIR/selftests/ (the guest's /selftests/):
#   bin/                 the static selftest binaries the run list uses
#                        (tests/selftests/build.sh; cached, a warm call is
#                        instant)
#                        and those from the newest Debian source
#                        (build-newest.sh; newest-source.txt names it)
#   tests.txt            the run list of the series (tests-SERIES.txt)
#   deliberate.txt       deliberate.txt's lines for the series: the results
#                        the module changes on purpose
#   expected-RELEASE.txt the results recorded for RELEASE, when there are
#   run-selftests.sh corpus.sh
# The series is RELEASE's major.minor (6.1.0-57-amd64 -> 6.1,
# 6.12.117-vmamerge-debug -> 6.12).  In the guest: /selftests/corpus.sh.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
(($# == 2)) || { echo "usage: $0 RELEASE STAGEDIR" >&2; exit 2; }
rel=$1 stage=$2
[[ $rel =~ ^([0-9]+\.[0-9]+)[.-] ]] || { echo "stage.sh: cannot tell the series of $rel" >&2; exit 1; }
series=${BASH_REMATCH[1]}
dst=$stage/selftests

rm -rf "$dst"
mkdir -p "$dst/bin"
bash "$here/build.sh" "$series" "$dst/bin" >/dev/null
newest=$(bash "$here/build-newest.sh" "$dst/bin")
cp "$newest/source.txt" "$dst/newest-source.txt"
cp "$here/tests-$series.txt" "$dst/tests.txt"
awk -v s="$series" '!/^[ \t]*(#|$)/ && ($1 == s || $1 == "*") { print $2, $3, $4 }' \
	"$here/deliberate.txt" >"$dst/deliberate.txt"
install -m 755 "$here/run-selftests.sh" "$here/corpus.sh" "$dst/"
if [[ -f $here/expected-$rel.txt ]]; then
	cp "$here/expected-$rel.txt" "$dst/"
fi
