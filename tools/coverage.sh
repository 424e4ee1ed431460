#!/bin/bash
# coverage.sh [--offline] [--check] - docs/coverage.md: what the module
# does with every amd64 kernel build of its series in the Debian archive.
#
# The builds: every linux-image-SERIES.*-amd64, -cloud-amd64 and
# -rt-amd64 package of series 6.1 and 6.12, at each version the private
# apt configuration (tools/debian-apt.sh: bookworm, trixie, -security,
# -backports) lists.  Each one is
#   listed      a build of module/builds.list (its tier),
#   equivalent  to a listed build: the check module/admit.sh runs, `kfp
#               check` of its image and config with the fingerprints of
#               the listed full and smoke builds (module/fingerprints/),
#   refused     with the reason: the nearest listed build and what
#               differs from it, PREEMPT_RT (admit.sh refuses it before
#               comparing), a kfp error, or not in the archive any more
#               (the package cannot be downloaded).
# Only ./boot of a package is kept, in $VMAMERGE_CACHE/coverage/RELEASE/boot;
# a .deb downloaded for it is deleted (one already in $VMAMERGE_CACHE/debs
# stays).  Each build's kfp result is cached in
# $VMAMERGE_CACHE/coverage/RELEASE/verdict, keyed by the sha256 of the
# fingerprint set and of tools/kfp/kfp: a rerun checks again only what
# that changes, and downloads only what it has no boot directory of.
# The archive's list of builds is kept as $VMAMERGE_CACHE/coverage/archive.
#   (no option)  refresh the apt lists (at most 6 h old), check what is
#                not cached, write docs/coverage.md
#   --offline    no network: the cached archive list and boot directories;
#                a build with neither a current verdict nor its boot
#                directory is "not checked"
#   --check      --offline into a temporary file; exit 1 when docs/coverage.md
#                differs from it (the "Generated" line aside)
# An interrupted run keeps what it checked: `--offline` writes the report.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# the list's own builds, never the test harness's resolved matrix (tests/matrix.sh)
unset VMAMERGE_MATRIX
# shellcheck source-path=SCRIPTDIR source=../tests/lib.sh
source "$repo/tests/lib.sh"
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
# shellcheck source-path=SCRIPTDIR source=debian-apt.sh
source "$repo/tools/debian-apt.sh"
cov=$cache/coverage
doc=$repo/docs/coverage.md
kfp=${KFP:-$repo/tools/kfp/kfp}
offline=0 check=0
for a; do
	case $a in
	--offline) offline=1 ;;
	--check) offline=1 check=1 ;;
	*) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//p}' "$0" >&2; exit 2 ;;
	esac
done
say() { echo "coverage: $*" >&2; }
die() { say "$*"; exit 1; }
mkdir -p "$cov"

[[ -x $kfp ]] || make -s -C "$repo/tools/kfp" >/dev/null || die "cannot build $kfp"
# The references, as module/admit.sh passes them (builds.list order);
# release -> tier and Debian version of the listed builds.
fps=()
declare -A tier=() listver=()
while read -r _ r v t; do
	tier[$r]=$t listver[$r]=$v
	[[ -e $repo/module/fingerprints/$r.kfp ]] && fps+=("$repo/module/fingerprints/$r.kfp")
done < <(VMAMERGE_KERNELS='' builds_of full smoke)
((${#fps[@]})) || die "no fingerprints of listed builds in module/fingerprints"
key=$({
	for f in "${fps[@]}"; do printf '%s %s\n' "${f##*/}" "$(sha256sum <"$f")"; done
	printf 'kfp %s\n' "$(sha256sum <"$kfp")"
} | sha256sum | cut -d' ' -f1)

# ---- the archive: "RELEASE VERSION SUITE,SUITE" a line ----
if ((!offline)); then
	papt_update 21600 || die "apt-get update of the private lists failed"
	mapfile -t pkgs < <(papt apt-cache search --names-only '^linux-image-6\.(1|12)\.[0-9].*-amd64$' |
		awk '{ print $1 }')
	((${#pkgs[@]})) || die "the apt lists have no 6.1 or 6.12 amd64 kernel images"
	papt apt-cache madison "${pkgs[@]}" | awk -F'|' '{
		gsub(/ /, "", $1); gsub(/ /, "", $2); split($3, a, " "); sub(/\/.*/, "", a[2])
		r = substr($1, 13); k = r " " $2
		if (k in s) s[k] = s[k] "," a[2]
		else { order[++n] = k; s[k] = a[2] }
	} END { for (i = 1; i <= n; i++) print order[i], s[order[i]] }' |
		grep -E '^6\.(1|12)\.[0-9]+[-+][^ ]*-(amd64|cloud-amd64|rt-amd64) ' | sort -V >"$cov/archive.tmp"
	[[ -s $cov/archive.tmp ]] || die "the apt lists have no 6.1 or 6.12 amd64 kernel images"
	# shellcheck disable=SC2154 # papt_root: tools/debian-apt.sh
	date -u -r "$papt_root/lists/.updated" '+%-d %b %Y %H:%M UTC' >"$cov/archive.date"
	mv "$cov/archive.tmp" "$cov/archive"
fi
[[ -s $cov/archive ]] || die "no $cov/archive: run tools/coverage.sh without --offline first"

flavour_of() { # RELEASE: its flavour into $fl (no subshell: 138 builds)
	case $1 in
	*-cloud-amd64) fl='cloud-amd64' ;;
	*-rt-amd64) fl='rt-amd64' ;;
	*) fl=amd64 ;;
	esac
}

# load VERDICT-FILE: its records into vf_* (empty when there is none)
load() {
	local k rest name what
	vf_key='' vf_version='' vf_rc='' vf_rt='' vf_seconds='' vf_result='' vf_err=''
	vf_ref=()
	[[ -f $1 ]] || return 0
	while read -r k rest; do
		case $k in
		key) vf_key=$rest ;;
		version) vf_version=$rest ;;
		rc) vf_rc=$rest ;;
		preempt-rt) vf_rt=$rest ;;
		seconds) vf_seconds=$rest ;;
		err) vf_err=$rest ;;
		out)
			case $rest in
			"equivalent "* | "refused "*) vf_result=$rest ;;
			"ref "*)
				read -r _ name what <<<"$rest"
				vf_ref[$name]=$what ;;
			esac ;;
		esac
	done <"$1"
}
declare -A vf_ref=()

# fetch_boot RELEASE VERSION: $cov/RELEASE/boot from the package; 1 when
# it cannot be downloaded
fetch_boot() {
	local r=$1 v=$2 d=$cov/$1 deb had=0
	deb_of "linux-image-$r=$v" >/dev/null && had=1
	papt_download "linux-image-$r=$v" 2>"$d/download.err" || return 1
	deb=$(deb_of "linux-image-$r=$v") || return 1
	rm -rf "${d:?}/boot" "$d/boot.tmp"
	mkdir -p "$d/boot.tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$d/boot.tmp" ./boot
	local rc=$?
	((had)) || rm -f "$deb"
	if ((rc != 0)) || [[ ! -s $d/boot.tmp/boot/vmlinuz-$r || ! -s $d/boot.tmp/boot/config-$r ]]; then
		rm -rf "$d/boot.tmp"
		say "linux-image-$r=$v: no boot/vmlinuz-$r and config-$r in it"
		return 2
	fi
	mv "$d/boot.tmp/boot" "$d/boot"
	rmdir "$d/boot.tmp"
	echo "$v" >"$d/boot/.vmamerge-version"
	rm -f "$d/download.err"
}

# verdict RELEASE VERSION: $cov/RELEASE/verdict current, if it can be
verdict() {
	local r=$1 v=$2 d=$cov/$1 t0 t1 rc rt=no
	local vf=$d/verdict
	mkdir -p "$d"
	load "$vf"
	if [[ $vf_version == "$v" ]]; then
		[[ $vf_key == "$key" ]] && return 0
		# gone: looked for again online, kept offline
		[[ $vf_rc == gone ]] && ((offline)) && return 0
	fi
	if [[ ! -s $d/boot/vmlinuz-$r || $(cat "$d/boot/.vmamerge-version" 2>/dev/null) != "$v" ]]; then
		((offline)) && return 0
		say "$r $v: download"
		fetch_boot "$r" "$v"
		rc=$?
		if ((rc == 1)); then
			{
				echo "version $v"
				echo "rc gone"
				sed 's/^/err /' "$d/download.err"
			} >"$vf.tmp"
			mv "$vf.tmp" "$vf"
			return 0
		fi
		((rc == 0)) || return 0
	fi
	grep -q '^CONFIG_PREEMPT_RT=y' "$d/boot/config-$r" && rt=yes
	t0=$(date +%s.%N)
	"$kfp" check "$d/boot/vmlinuz-$r" --config "$d/boot/config-$r" --release "$r" \
		"${fps[@]}" >"$d/kfp.out" 2>"$d/kfp.err"
	rc=$?
	t1=$(date +%s.%N)
	{
		echo "key $key"
		echo "version $v"
		echo "rc $rc"
		echo "preempt-rt $rt"
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "seconds %.2f\n", b - a }'
		sed 's/^/out /' "$d/kfp.out"
		sed 's/^/err /' "$d/kfp.err"
	} >"$vf.tmp"
	mv "$vf.tmp" "$vf"
	rm -f "$d/kfp.out" "$d/kfp.err"
	load "$vf"
	say "$r $v: kfp check exit $rc ($vf_seconds s)"
}

# items KIND:NAME... (kfp's) -> "`f`, struct `s`, ... and N more" into
# $items: the first 6, functions by their name alone
items() {
	local i=0 it
	items=''
	for it; do
		((++i > 6)) && break
		[[ $it == func:* ]] && it=\`${it#func:}\` || it="${it%%:*} \`${it#*:}\`"
		items+=${items:+, }$it
	done
	(($# > 6)) && items+=" and $(($# - 6)) more"
}

# classify RELEASE VERSION: into $verdict and $reason
classify() {
	local r=$1 v=$2 ref n nf ns no why
	reason=''
	if [[ -n ${tier[$r]:-} ]]; then
		verdict="listed (${tier[$r]})"
		[[ ${listver[$r]} == "$v" ]] || reason="module/builds.list has it at ${listver[$r]}"
		return
	fi
	load "$cov/$r/verdict"
	if [[ $vf_version != "$v" ]] || [[ $vf_rc != gone && $vf_key != "$key" ]]; then
		verdict="not checked" reason="no verdict of the current fingerprints and kfp in the cache"
		return
	fi
	verdict=refused
	ref=${vf_result#* }
	case $vf_rc in
	gone)
		reason="not in the archive any more (apt-get download fails)"
		return ;;
	0)
		# "identical NFUNC NSTRUCT NOPTION"
		read -r _ nf ns no <<<"${vf_ref[$ref]:-}"
		n="$nf functions, $ns structs, $no options identical"
		why="equivalent to $ref: $n" ;;
	1)
		if [[ ${vf_ref[$ref]:-} != differs* ]]; then
			why="no listed build of its series to compare with"
		else
			# "differs N ITEM..."
			# shellcheck disable=SC2086 # the items, one word each
			set -- ${vf_ref[$ref]}
			why="nearest $ref differs in $2"
			shift 2
			items "$@"
			why+=": $items"
		fi ;;
	*) why="kfp error: ${vf_err#kfp: }" ;;
	esac
	if [[ $vf_rt == yes ]]; then
		reason="PREEMPT_RT: module/admit.sh refuses it before comparing (kfp: $why)"
	elif [[ $vf_rc == 0 ]]; then
		verdict="equivalent to $ref" reason=$n
	else
		reason=$why
	fi
}

# ---- check what is not cached: generic builds first, rt last ----
for want in amd64 cloud-amd64 rt-amd64; do
	while read -r r v _; do
		flavour_of "$r"
		[[ $fl == "$want" && -z ${tier[$r]:-} ]] || continue
		verdict "$r" "$v"
	done <"$cov/archive"
done

# ---- the report ----
report() {
	local s fl r v suites c verdict reason
	declare -A cnt=()
	: >"$cov/report.rows"
	while read -r r v suites; do
		[[ $r =~ ^([0-9]+\.[0-9]+) ]] && s=${BASH_REMATCH[1]}
		flavour_of "$r"
		classify "$r" "$v"
		case $verdict in
		listed*) cnt[$s $fl listed]=$((${cnt[$s $fl listed]:-0} + 1)) ;;
		equivalent*) cnt[$s $fl equivalent]=$((${cnt[$s $fl equivalent]:-0} + 1)) ;;
		refused) cnt[$s $fl refused]=$((${cnt[$s $fl refused]:-0} + 1)) ;;
		*) cnt[$s $fl unchecked]=$((${cnt[$s $fl unchecked]:-0} + 1)) ;;
		esac
		cnt[$s $fl all]=$((${cnt[$s $fl all]:-0} + 1))
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$fl" "$r" "$v" "${suites//,/, }" "$verdict" "$reason" \
			>>"$cov/report.rows"
	done <"$cov/archive"
	local unchecked=0
	for c in "${!cnt[@]}"; do [[ $c == *" unchecked" ]] && unchecked=1; done
	cat <<EOF
# Coverage of the Debian archive

What the module does with every amd64 kernel build of its series (6.1,
6.12) that Debian's bookworm, trixie, -security and -backports suites
have, in the generic (-amd64), cloud (-cloud-amd64) and PREEMPT_RT
(-rt-amd64) flavours. A build is *listed* (a build of module/builds.list,
with its tier), *equivalent* to a listed build (module/admit.sh's check:
\`kfp check\` of the build's own image and config against the fingerprints
in module/fingerprints/, every compared function, struct and config
option identical; the module builds and loads for it), or *refused*, with
the reason: the nearest listed build and the items that differ from it
(the first six; functions by name, other items with their kind),
PREEMPT_RT (refused before any comparison, docs/flavours.md), a kfp
error, or a package the archive no longer has. A refused build needs a
port (\`make port KVER=RELEASE\`, docs/testing.md). How the check works:
docs/design.md, "Admitting a build by equivalence".

Generated by \`bash tools/coverage.sh\` on $(date -u '+%-d %b %Y') from module/builds.list and module/fingerprints/ (the archive's package lists of $(cat "$cov/archive.date" 2>/dev/null || echo '?')); \`bash tools/coverage.sh --check\` compares this file with what the cache gives.

## Summary

EOF
	if ((unchecked)); then
		echo '| series | flavour | builds | listed | equivalent | refused | not checked |'
		echo '|--------|---------|-------:|-------:|-----------:|--------:|------------:|'
	else
		echo '| series | flavour | builds | listed | equivalent | refused |'
		echo '|--------|---------|-------:|-------:|-----------:|--------:|'
	fi
	for s in 6.1 6.12; do
		for fl in amd64 cloud-amd64 rt-amd64; do
			printf '| %s | -%s | %d | %d | %d | %d |' "$s" "$fl" "${cnt[$s $fl all]:-0}" \
				"${cnt[$s $fl listed]:-0}" "${cnt[$s $fl equivalent]:-0}" "${cnt[$s $fl refused]:-0}"
			((unchecked)) && printf ' %d |' "${cnt[$s $fl unchecked]:-0}"
			echo
		done
	done
	for s in 6.1 6.12; do
		for fl in amd64 cloud-amd64 rt-amd64; do
			printf '\n## %s -%s\n\n' "$s" "$fl"
			echo '| release | Debian version | suites | verdict | reason |'
			echo '|---------|----------------|--------|---------|--------|'
			awk -F'\t' -v s="$s" -v fl="$fl" '$1 == s && $2 == fl {
				printf "| %s | %s | %s | %s | %s |\n", $3, $4, $5, $6, ($7 == "" ? "-" : $7) }' \
				"$cov/report.rows"
		done
	done
	rm -f "$cov/report.rows"
}

tmp=$(mktemp "${TMPDIR:-/tmp}/vmamerge-coverage.XXXXXX")
trap 'rm -f "$tmp"' EXIT
report >"$tmp" || die "the report failed"
if ((check)); then
	if ! diff -u -I '^Generated by ' "$doc" "$tmp"; then
		say "docs/coverage.md is not what the cache gives: run tools/coverage.sh"
		exit 1
	fi
	say "docs/coverage.md is what the cache gives"
	exit 0
fi
cp "$tmp" "$doc.tmp" && mv "$doc.tmp" "$doc"
# the time of each kfp check cached
sed -n 's/^seconds //p' "$cov"/*/verdict 2>/dev/null | sort -n |
	awk '{ a[NR] = $1 } END { if (NR) printf "coverage: kfp check: %d builds, %.2f / %.2f / %.2f s (min / median / max)\n",
		NR, a[1], (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2), a[NR] }' >&2
say "wrote docs/coverage.md"
