#!/bin/bash
# tests/long-record.sh on a copy of the checkout: the digest follows the
# module's code and full-tier builds, not the smoke builds or fingerprints;
# check refuses a changed module with the command that fixes it.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tap.sh
source "$repo/tests/tap.sh"

git clone -q "$repo" "$tmp/r" || exit 1
cp "$repo/tests/long-record.sh" "$tmp/r/tests/"
lr=$tmp/r/tests/long-record.sh
d0=$(bash "$lr" digest)
t "digest is a SHA-256" test "${#d0}" = 64
t "the same digest without git (a source tarball)" \
	test "$(cp -a "$tmp/r" "$tmp/nogit" && rm -rf "$tmp/nogit/.git" && bash "$tmp/nogit/tests/long-record.sh" digest)" = "$d0"
rm -f "$tmp/r/tests/long-check.record"
out=$(bash "$lr" check 2>&1)
rc=$?
t "check without a record: exit 1" test $rc = 1
t "check without a record says so" grep -q "no record of a passing make check-long" <<<"$out"
t "write: bad arguments exit 2" test "$(bash "$lr" write x 1 >/dev/null 2>&1; echo $?)" = 2
t "write then check: exit 0" bash -c "bash '$lr' write 10 20 >/dev/null && bash '$lr' check >/dev/null"
t "the record names the digest" grep -qx "module $d0" "$tmp/r/tests/long-check.record"
echo 'x' >>"$tmp/r/module/fingerprints/6.1.0-57-amd64.kfp"
t "a fingerprint changed: same digest" test "$(bash "$lr" digest)" = "$d0"
sed -i '/ smoke /{/6.1.0-56-amd64/d}' "$tmp/r/module/builds.list"
t "a smoke build removed: same digest" test "$(bash "$lr" digest)" = "$d0"
touch "$tmp/r/module/core.o" "$tmp/r/vmamerge.ko"
t "build products in the tree: same digest" test "$(bash "$lr" digest)" = "$d0"
echo '/* */' >>"$tmp/r/module/core.c"
out=$(bash "$lr" check 2>&1)
rc=$?
t "module/core.c changed: check exits 1" test $rc = 1
t "and names the command and the file to commit" grep -q "run 'sudo make check-long' and commit tests/long-check.record" <<<"$out"
git -C "$tmp/r" checkout -q module/core.c
t "core.c restored: check exits 0" bash "$lr" check
sed -i 's/^6.1 6.1.0-57-amd64 6.1.192-3 full/6.1 6.1.0-57-amd64 6.1.192-4 full/' "$tmp/r/module/builds.list"
t "a full-tier build's line changed: digest changes" test "$(bash "$lr" digest)" != "$d0"
t "unknown subcommand: exit 2" test "$(bash "$lr" frob >/dev/null 2>&1; echo $?)" = 2
tap_end
