#!/bin/bash
# port-survey.sh [SERIES...] - the comparison part of tools/port.sh (steps
# 1-5: find, download, nearest build, mirror-diff, config) over every
# generic amd64 build of SERIES (default: 6.1 6.12) in the Debian archive
# (bookworm, trixie, -security, -backports), without building, booting or
# adding anything.  Prints one line per build:
#   RELEASE VERSION SUITE RESULT [details]
# RESULT: same (every item identical, config equal), differs (items
# listed), not-in-archive (no headers or linux-source at that version:
# nothing to build or compare), error (e.g. no linux-kbuild at that
# version); then, per compared item, how many builds have it identical to
# the nearest validated build.  Logs: $VMAMERGE_CACHE/port/survey/.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
# shellcheck source-path=SCRIPTDIR source=debian-apt.sh
source "$here/debian-apt.sh"
out=$cache/port/survey
mkdir -p "$out"
papt_update 21600 || exit 1
series=("$@")
((${#series[@]})) || series=(6.1 6.12)
declare -A same=() total=()
nbuilds=0
for s in "${series[@]}"; do
	while read -r pkg; do
		rel=${pkg#linux-image-}
		[[ $rel =~ ^${s//./\\.}\.[0-9]+[-+] ]] || continue
		[[ $rel == *-cloud-amd64 || $rel == *-rt-amd64 ]] && continue
		m=$(papt apt-cache madison "$pkg" | head -n1)
		ver=$(awk -F'|' '{ gsub(/ /, "", $2); print $2 }' <<<"$m")
		suite=$(awk -F'|' '{ split($3, a, " "); sub(/\/.*/, "", a[2]); print a[2] }' <<<"$m")
		# what the port needs at exactly that version (apt-cache show
		# pkg=ver is no test: it exits 0 for a missing version)
		miss=""
		for p in "linux-headers-$rel" "linux-source-$s"; do
			papt apt-cache madison "$p" 2>/dev/null | awk -F'|' -v v="$ver" \
				'{ gsub(/ /, "", $2) } $2 == v { f = 1 } END { exit !f }' || miss+=" $p"
		done
		if [[ -n $miss ]]; then
			echo "$rel $ver $suite not-in-archive:$miss (only the image is left at $ver)"
			continue
		fi
		log=$out/$rel.log
		rm -f "$cache/port/$rel/mirror-diff.txt"
		PORT_COMPARE_ONLY=1 bash "$here/port.sh" "$rel" >"$log" 2>&1
		rc=$?
		md=$cache/port/$rel/mirror-diff.txt
		nbuilds=$((nbuilds + 1))
		if [[ -f $md ]]; then
			while read -r res kind name _; do
				[[ $res == identical || $res == DIFFERENT || $res == missing ]] || continue
				total[$kind:$name]=$((${total[$kind:$name]:-0} + 1))
				[[ $res == identical ]] && same[$kind:$name]=$((${same[$kind:$name]:-0} + 1))
			done <"$md"
		fi
		ref=$(sed -n 's/.*nearest validated build: \([^ ]*\) .*/\1/p' "$log" | head -n1)
		if ((rc == 0)); then
			echo "$rel $ver $suite same (as $ref)"
		elif [[ -f $md ]] && grep -q '^DIFFERENT\|^missing' "$md"; then
			echo "$rel $ver $suite differs from $ref: $(grep -E '^(DIFFERENT|missing)' "$md" | awk '{ printf "%s%s", sep, $3; sep = "," }')"
		else
			echo "$rel $ver $suite error: $(grep -m1 'REFUSED' "$log" | sed 's/.*REFUSED: //')"
		fi
	done < <(papt apt-cache search --names-only "^linux-image-${s//./\\.}\.[0-9].*-amd64\$" | awk '{ print $1 }' | sort -V)
done
echo "# per item: builds with it identical to the nearest validated build (of $nbuilds compared)"
for k in $(printf '%s\n' "${!total[@]}" | sort); do
	printf '%-60s %s/%s\n' "$k" "${same[$k]:-0}" "${total[$k]}"
done
