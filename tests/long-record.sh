#!/bin/bash
# The record of the last passing `make check-long` (tests/long-check.record)
# and the digest of the module it tested.
#
# `make check` (the landing run) leaves out what `make check-long` runs:
# the debug twins (their builds and guest suites) and the SMP set.  So that
# no change to the module lands without them, make check refuses a module
# whose digest is not the one of the record; check-long writes the record
# when it passes, and the developer commits it with the change.
#
# The digest covers what decides the code the twins and the SMP set run:
# every file under module/ but the smoke builds' entries (module/builds.list
# lines of tier smoke) and the fingerprints of the builds (module/fingerprints/,
# generated from the images and checked by make check itself), plus Kbuild.
# Adding or removing a smoke-tier build therefore needs no long run;
# a change to a full-tier build's line does.
#
#   tests/long-record.sh digest          print the digest of this checkout
#   tests/long-record.sh check           exit 0 if the record names it
#   tests/long-record.sh write PASSED SECONDS
#                                        write the record for this checkout
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
record=$repo/tests/long-check.record

# covered_files: the tracked files the digest covers (git's list, so that
# build products in the tree never count; a tree without git: every file
# but the products .gitignore names).
covered_files() {
	if git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$repo" ls-files -- module Kbuild
	else
		find module Kbuild -type f ! -name '*.o' ! -name '*.ko' ! -name '*.mod' \
			! -name '*.mod.c' ! -name '.*' ! -name '*.order' ! -name '*.symvers' \
			! -path module/klp-convert/klp-convert ! -name hook_offsets.s
	fi | grep -v -e '^module/fingerprints/' -e '^module/builds\.list$' | LC_ALL=C sort
}

# module_digest: SHA-256 over the path and contents of each covered file,
# in byte order of the paths, and the full-tier lines of builds.list.
module_digest() {
	local f
	(
		cd "$repo"
		covered_files | while IFS= read -r f; do
			printf '%s %s\n' "$(sha256sum <"$f" | cut -d' ' -f1)" "$f"
		done
		printf '%s %s\n' "$(awk '!/^#/ && NF && $4 != "smoke"' module/builds.list |
			sha256sum | cut -d' ' -f1)" "module/builds.list (full tier)"
	) | sha256sum | cut -d' ' -f1
}

recorded_digest() {
	awk '$1 == "module" { print $2 }' "$record" 2>/dev/null || true
}

case ${1:-} in
digest)
	module_digest
	;;
check)
	want=$(module_digest)
	have=$(recorded_digest)
	if [[ -z $have ]]; then
		echo "no record of a passing make check-long in ${record#"$repo"/}"
		exit 1
	fi
	if [[ $have != "$want" ]]; then
		echo "module/ changed since the last passing make check-long:"
		echo "  recorded $have ($(awk '$1 == "date" { print $2 }' "$record"))"
		echo "  this tree $want"
		echo "run 'sudo make check-long' and commit ${record#"$repo"/} with the change"
		exit 1
	fi
	echo "module digest $want: make check-long passed on it" \
		"($(awk '$1 == "passed" { print $2 }' "$record") passed," \
		"$(awk '$1 == "date" { print $2 }' "$record"))"
	;;
write)
	[[ ${2:-} =~ ^[0-9]+$ && ${3:-} =~ ^[0-9]+$ ]] || {
		echo "usage: $0 write PASSED SECONDS" >&2
		exit 2
	}
	{
		echo "# written by make check-long when it passed (tests/long-record.sh);"
		echo "# make check refuses a module whose digest differs"
		echo "module $(module_digest)"
		echo "passed $2"
		echo "seconds $3"
		echo "date $(date -u +%Y-%m-%dT%H:%MZ)"
		echo "commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo none)"
	} >"$record.tmp"
	mv "$record.tmp" "$record"
	echo "wrote ${record#"$repo"/}"
	;;
*)
	echo "usage: $0 digest|check|write PASSED SECONDS" >&2
	exit 2
	;;
esac
