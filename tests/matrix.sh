# shellcheck shell=bash disable=SC2154 # $cache (the caller) and $vmamerge_tests (tests/lib.sh)
# The full tier under test follows the archive (sourced by tests/setup.sh
# and tests/matrix-test.sh; needs tests/lib.sh, $cache and die).
#
# Debian keeps one version of its same-named packages: when a kernel
# upload supersedes a full-tier build of module/builds.list, that build's
# linux-source-<series> (and so its debug twin, its selftests and its
# private declarations) disappears from the archive at once, and a fresh
# machine could no longer test it.  So the kernels make check tests are
# resolved against the archive, per full-tier build S R V of the list:
#   - R itself while linux-source-S=V is in the archive and no newer build
#     of R's flavour is proven equivalent to it;
#   - else the newest build R' (version V') of the same series, flavour and
#     Debian release whose linux-source-S=V' is in the archive, when its
#     own image is equivalent to R's (`kfp check` against
#     module/fingerprints/R.kfp: the check a user's machine runs);
#   - else the run stops, naming the builds and what differs: a port is due.
# A newer build that is not equivalent while R's source is still there is
# reported and R stays.
#
# The result, in $VMAMERGE_MATRIX (builds.list's format, full tier only),
# and $VMAMERGE_MATRIX.followed ("R' R" per followed build), is what
# builds_of full (tests/lib.sh) reads in the test harness; the module,
# dkms, the CLI and tools/ read module/builds.list only.

# flavour_regex RELEASE: the extended regex of every build of RELEASE's
# series, flavour and Debian release (6.1.0-57-amd64 -> 6.1.0-N-amd64,
# 6.12.117+deb12-amd64 -> 6.12.N+deb12[.M]-amd64)
flavour_regex() {
	local r=$1
	if [[ $r =~ ^([0-9]+\.[0-9]+)\.0-[0-9]+-(.+)$ ]]; then
		printf '^%s\\.0-[0-9]+-%s$\n' "${BASH_REMATCH[1]//./\\.}" "${BASH_REMATCH[2]}"
	elif [[ $r =~ ^([0-9]+\.[0-9]+)\.[0-9]+\+deb([0-9]+)(\.[0-9]+)?-(.+)$ ]]; then
		printf '^%s\\.[0-9]+\\+deb%s(\\.[0-9]+)?-%s$\n' "${BASH_REMATCH[1]//./\\.}" \
			"${BASH_REMATCH[2]}" "${BASH_REMATCH[4]}"
	else
		return 1
	fi
}

# archive_has PKG VERSION: the host's apt lists have that version
archive_has() {
	apt-cache madison "$1" 2>/dev/null |
		awk -F'|' -v v="$2" '{ gsub(/ /, "", $2) } $2 == v { f = 1 } END { exit !f }'
}

# newest_build SERIES RELEASE: "RELEASE' VERSION'" of the newest image of
# RELEASE's flavour whose linux-source-SERIES at the same version is in
# the archive (empty if none)
newest_build() {
	local s=$1 re names
	re=$(flavour_regex "$2") || return 0
	mapfile -t names < <(apt-cache pkgnames "linux-image-$s." 2>/dev/null | sed 's/^linux-image-//' | grep -E -- "$re")
	((${#names[@]})) || return 0
	# (one apt-cache call for the sources, one for every image: madison
	# prints "PACKAGE | VERSION | SOURCE")
	{
		apt-cache madison "linux-source-$s" 2>/dev/null | awk -F'|' '{ gsub(/ /, ""); print "src", $2 }'
		apt-cache madison "${names[@]/#/linux-image-}" 2>/dev/null | awk -F'|' '{ gsub(/ /, ""); print "img", $2, $1 }'
	} | awk '$1 == "src" { src[$2] = 1; next } ($2 in src) { sub(/^linux-image-/, "", $3); print $2, $3 }' |
		sort -V -k1,1 | tail -n 1 | awk '{ print $2, $1 }'
	return 0
}

# image_of RELEASE VERSION: download and unpack linux-image-RELEASE into
# the cache (tests/lib.sh: unpack_image), print its kernels/ directory
image_of() {
	local r=$1 v=$2 tmp=$cache/debs/.matrix-download
	if ! deb_of "linux-image-$r=$v" >/dev/null; then
		rm -rf "$tmp"
		mkdir -p "$tmp"
		chown _apt "$tmp" 2>/dev/null || true
		(cd "$tmp" && apt-get download -q=2 "linux-image-$r=$v") ||
			die "apt-get download linux-image-$r=$v failed"
		mv "$tmp"/*.deb "$cache/debs/"
		rm -rf "$tmp"
	fi
	unpack_image "$r" "$v"
	echo "$cache/kernels/$r/boot"
}

# follow_check LISTED CANDIDATE VERSION: kfp check of CANDIDATE's image
# against LISTED's fingerprint; prints kfp's records, exit status kfp's
follow_check() {
	local listed=$1 r=$2 v=$3 boot kfp=$vmamerge_tests/../tools/kfp/kfp
	[[ -x $kfp ]] || make -s -C "$vmamerge_tests/../tools/kfp" >&2 ||
		die "tools/kfp does not build (its libraries: tests/setup.sh base_pkgs)"
	boot=$(image_of "$r" "$v")
	"$kfp" check "$boot/vmlinuz-$r" --config "$boot/config-$r" --release "$r" \
		"$vmamerge_tests/../module/fingerprints/$listed.kfp"
}

# matrix_resolve OUT: write OUT and OUT.followed (above); messages on stderr
matrix_resolve() {
	local out=$1 s r v rest nr nv res uts
	mkdir -p "$(dirname "$out")"
	: >"$out.tmp"
	: >"$out.followed.tmp"
	while read -r s r v _; do
		rest=$(VMAMERGE_MATRIX='' uts_version_of "$r")
		read -r nr nv < <(newest_build "$s" "$r"; echo)
		if [[ -z $nr || $nr == "$r" ]]; then
			archive_has "linux-source-$s" "$v" ||
				die "matrix: linux-source-$s=$v of $r is no longer in the Debian archive and no build of $r's flavour has its source there: port a newer build (make port KVER=...)"
			printf '%s %s %s full %s\n' "$s" "$r" "$v" "$rest" >>"$out.tmp"
			continue
		fi
		if res=$(follow_check "$r" "$nr" "$nv" 2>&1); then
			uts=$(awk '$1 == "version" { sub(/^version /, ""); print; exit }' <<<"$res")
			[[ -n $uts ]] || die "matrix: kfp check of $nr printed no version: $res"
			echo "matrix: $nr ($nv) is the newest build of $r's flavour and equivalent to it (kfp check): the full tier of $s follows it" >&2
			printf '%s %s %s full %s\n' "$s" "$nr" "$nv" "$uts" >>"$out.tmp"
			printf '%s %s\n' "$nr" "$r" >>"$out.followed.tmp"
		elif archive_has "linux-source-$s" "$v"; then
			echo "matrix: $nr ($nv) is newer than $r and not equivalent to it ($(tail -n 1 <<<"$res")): $r stays; port $nr (make port KVER=$nr)" >&2
			printf '%s %s %s full %s\n' "$s" "$r" "$v" "$rest" >>"$out.tmp"
		else
			die "matrix: linux-source-$s=$v of $r is no longer in the Debian archive and the newest build $nr ($nv) is not equivalent to it: port it (make port KVER=$nr); kfp check said:
$res"
		fi
	done < <(VMAMERGE_MATRIX='' builds_of full)
	mv "$out.tmp" "$out"
	mv "$out.followed.tmp" "$out.followed"
}
