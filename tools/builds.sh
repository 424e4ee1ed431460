#!/bin/bash
# builds.sh - module/builds.list, the one list of validated builds, for
# the places that show it.
#
#   tools/builds.sh table            the README's table (markdown)
#   tools/builds.sh readme --check   is README.md's table the generated one?
#   tools/builds.sh readme --write   regenerate it (tools/port.sh does)
#   tools/builds.sh add SERIES RELEASE DEBVER TIER UTS-VERSION
#                                    add or replace a build (tools/port.sh)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
list=$repo/module/builds.list
readme=$repo/README.md
begin='<!-- generated from module/builds.list by tools/builds.sh: do not edit -->'
end='<!-- end of generated table -->'

table() {
	echo '| series | release | Debian version | tier |'
	echo '|--------|---------|----------------|------|'
	awk '/^[ \t]*(#|$)/ { next }
	     { printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' "$list"
}

readme_with_table() { # README.md with the table between the markers
	local t
	t=$(table)
	awk -v b="$begin" -v e="$end" -v t="$t" '
		$0 == b { print; print t; skip = 1; found++; next }
		$0 == e { skip = 0 }
		!skip { print }
		END { if (found != 1) exit 1 }' "$readme"
}

case ${1:-} in
table) table ;;
readme)
	new=$(readme_with_table) || { echo "builds.sh: no table markers in $readme" >&2; exit 1; }
	case ${2:-} in
	--check)
		if ! diff -u "$readme" <(printf '%s\n' "$new"); then
			echo "README.md's table differs from module/builds.list: run tools/builds.sh readme --write" >&2
			exit 1
		fi ;;
	--write) printf '%s\n' "$new" >"$readme.tmp" && mv "$readme.tmp" "$readme" ;;
	*) echo "usage: $0 readme --check|--write" >&2; exit 2 ;;
	esac ;;
add)
	(($# == 6)) || { echo "usage: $0 add SERIES RELEASE DEBVER TIER UTS-VERSION" >&2; exit 2; }
	# Replace a line of the same release, else append; keep the list
	# sorted by series, then by version within a tier group (sort -V).
	{
		grep -E '^[[:space:]]*(#|$)' "$list"
		{
			awk -v r="$3" '!/^[ \t]*(#|$)/ && $2 != r' "$list"
			printf '%s %s %s %s %s\n' "$2" "$3" "$4" "$5" "$6"
		} | sort -t' ' -k4,4 -k1,1V -k3,3V
	} >"$list.tmp"
	mv "$list.tmp" "$list" ;;
*) sed -n '2,10s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac
