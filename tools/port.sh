#!/bin/bash
# port.sh RELEASE - validate the Debian kernel build RELEASE for vmamerge and
# add it to module/builds.list at the smoke tier (`make port KVER=RELEASE`).
#
# Steps (each timed; the first failure stops the port and says why):
#   1. find RELEASE in the Debian archive: bookworm, trixie and their
#      -security and -backports suites, through a private apt configuration
#      (tools/debian-apt.sh; the host's apt is never touched)
#   2. download its image, headers (+ -common, linux-kbuild) and
#      linux-source into $VMAMERGE_CACHE/debs, unpack them into kernels/,
#      headers/ and src/RELEASE/ (mm, kernel, include, arch/x86)
#   3. the nearest validated build (module/builds.h's rule) and its source
#   4. tools/mirror-diff.sh: every function the module mirrors, replaces,
#      calls or relies on and every private declaration it copies, cut out
#      of both trees and compared; any difference: the per-function diff,
#      and stop
#   5. the config options the module depends on, against the nearest build
#   6. the toolchain the build was made with (CONFIG_CC_VERSION_TEXT):
#      gcc-12 on the host, gcc-14 in the cached trixie root
#   7. the module, built with W=1 against the headers (warnings fail)
#   8. the symbol table (a guest boot, nokaslr) and tests/layout-check.sh
#      for this build alone (private declarations, symbols, sympos)
#   9. a QEMU guest boots it with the smoke set (tests/guest/run.sh
#      VMAMERGE_SUITE=smoke): load, opt-in, one renumber and one transplant
#      merge with data and rmap checks, unload, no splat
#  10. module/builds.list gets the build (tier smoke), README.md's table
#      and its fingerprint (tools/fingerprints.sh) too
#
# Environment: VMAMERGE_CACHE, PORT_NO_ADD=1 (validate only),
# PORT_COMPARE_ONLY=1 (steps 1-5 only: tools/port-survey.sh),
# VMAMERGE_APT_UPDATE=1 (refresh the private apt lists now).
# Work and logs: $VMAMERGE_CACHE/port/RELEASE/.  Root only.
set -euo pipefail
rel=${1:?usage: tools/port.sh RELEASE   (e.g. 6.12.118+deb13-amd64)}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# check.sh's helpers (stage_module_src, own_warnings, stage_guest, ...)
# shellcheck source-path=SCRIPTDIR source=../tests/check.sh
source "$here/../tests/check.sh"
# the list's own builds, never the test harness's resolved matrix (tests/matrix.sh)
unset VMAMERGE_MATRIX
# shellcheck source-path=SCRIPTDIR source=debian-apt.sh
source "$here/debian-apt.sh"
work=$cache/port/$rel
guest_bin=$work/bin
build_dir() { echo "$work/src"; }

say() { printf '[port %s] %s\n' "$rel" "$*"; }
die() { say "REFUSED: $*" >&2; exit 1; }
t_port=$(now)
step() { # NAME CMD...: run and time one step
	local name=$1 t0
	shift
	t0=$(now)
	say "--- $name"
	"$@"
	say "    $name: $(since "$t0") s"
	printf '%8ss  %s\n' "$(since "$t0")" "$name" >>"$work/timings"
}

[[ $(id -u) == 0 ]] || die "must run as root (downloads into $cache, chroot, QEMU)"
[[ $rel =~ ^([0-9]+\.[0-9]+)\.[0-9]+.*-amd64$ ]] || die "not a Debian amd64 release: $rel"
pseries=${BASH_REMATCH[1]}
[[ $pseries == 6.1 && $rel != 6.1.0-* ]] && die "unexpected 6.1 release name $rel"
[[ -d $repo/module/kernel-$pseries ]] ||
	die "series $pseries has no glue (module/kernel-$pseries/): a new series needs its own mirrors (docs/design.md)"
mkdir -p "$work" "$cache/debs"
: >"$work/timings"

resolve() {
	papt_update 21600
	local m
	m=$(papt apt-cache madison "linux-image-$rel" 2>/dev/null | head -n1)
	[[ -n $m ]] || die "linux-image-$rel is in none of: ${papt_suites[*]}"
	ver=$(awk -F'|' '{ gsub(/ /, "", $2); print $2 }' <<<"$m")
	suite=$(awk -F'|' '{ split($3, a, " "); sub(/\/.*/, "", a[2]); print a[2] }' <<<"$m")
	say "linux-image-$rel $ver from $suite"
	papt apt-cache show "linux-source-$pseries=$ver" >/dev/null 2>&1 ||
		die "linux-source-$pseries=$ver is not in the archive: without the source nothing can be compared"
}

unpack_source() { # RELEASE VERSION: src/RELEASE from linux-source-SERIES
	local r=$1 v=$2 s=${1%.*} dest=$cache/src/$1 deb tmp=$cache/src/.port-$1
	s=$(sed -E 's/^([0-9]+\.[0-9]+).*/\1/' <<<"$r")
	# (a tree unpacked before fs/, ipc/ and security/ were needed: again)
	[[ -f $dest/.vmamerge-version && $(<"$dest/.vmamerge-version") == "$v" &&
		-d $dest/ipc ]] && return 0
	deb=$(deb_of "linux-source-$s=$v") || die "no linux-source-$s=$v deb"
	rm -rf "$tmp" "$dest"
	mkdir -p "$tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" "./usr/src/linux-source-$s.tar.xz"
	# What the comparison and the layout check read; the rest stays packed.
	# (fs/, ipc/, security/: callees of 6.1's do_mmap() mirror)
	tar -xJf "$tmp/usr/src/linux-source-$s.tar.xz" -C "$tmp" \
		"linux-source-$s/Makefile" "linux-source-$s/mm" "linux-source-$s/kernel" \
		"linux-source-$s/include" "linux-source-$s/arch/x86" \
		"linux-source-$s/fs" "linux-source-$s/ipc" "linux-source-$s/security"
	mv "$tmp/linux-source-$s" "$dest"
	rm -rf "$tmp"
	echo "$v" >"$dest/.vmamerge-version"
}

fetch() {
	local hdr
	hdr=$(header_pkgs "$rel" "$ver" papt apt-cache)
	# shellcheck disable=SC2086 # PKG=VER words
	papt_download "linux-image-$rel=$ver" "linux-source-$pseries=$ver" $hdr ||
		die "could not download the packages of $rel"
	local dest=$cache/kernels/$rel
	unpack_image "$rel" "$ver"
	if [[ ! -f $cache/headers/$rel/.vmamerge-version ||
		$(<"$cache/headers/$rel/.vmamerge-version") != "$(headers_stamp "$rel" "$ver")" ]]; then
		# shellcheck disable=SC2086
		unpack_headers "$rel" "$ver" $hdr
	fi
	unpack_source "$rel" "$ver"
	uts=$(file -b "$dest/boot/vmlinuz-$rel" | sed -n 's/.*version [^ ]* ([^)]*) \(#[^,]*\),.*/\1/p')
	[[ $uts == "#1 "* ]] || die "could not read the UTS version from $dest/boot/vmlinuz-$rel"
	say "UTS version: $uts"
}

nearest() {
	local gen=$work/nearest
	mkdir -p "$gen"
	awk -v series=all -v out=cli -f "$repo/module/builds.awk" "$repo/module/builds.list" >"$gen/validated-builds.h"
	cc -O2 -Wall -I"$repo/module" -I"$gen" -o "$gen/nearest" "$here/nearest.c"
	ref=$("$gen/nearest" "$rel" "$uts") || die "no validated build of series $pseries to port from"
	read -r _ _ refver reftier < <(builds_of full smoke | awk -v r="$ref" '$2 == r')
	if [[ $reftier == full ]]; then
		refsrc=$cache/src/linux-source-$pseries
		[[ $(cat "$cache/src/linux-source-$pseries.version" 2>/dev/null) == "$refver" ]] ||
			die "the source of $ref ($refsrc) is not there at $refver: run tests/setup.sh"
	else
		papt_download "linux-source-$pseries=$refver" || die "could not download linux-source-$pseries=$refver"
		unpack_source "$ref" "$refver"
		refsrc=$cache/src/$ref
	fi
	say "nearest validated build: $ref ($refver, $reftier), source $refsrc"
	[[ $ref != "$rel" ]] || say "(already validated: checking it again)"
}

compare() {
	if ! MIRROR_DIFF_VARIANTS=$work/variants bash "$here/mirror-diff.sh" "$pseries" "$refsrc" \
		"$cache/src/$rel" >"$work/mirror-diff.txt"; then
		cat "$work/mirror-diff.txt"
		die "the module's mirrored or copied kernel code differs from $ref's (above): $rel needs its own mirror (docs/testing.md, \"Porting to a new build\")"
	fi
	grep -v '^identical' "$work/mirror-diff.txt" || true
	say "$(tail -n1 "$work/mirror-diff.txt")"
	variants=$(tr '\n' ' ' <"$work/variants" | sed 's/ $//')
	[[ -z $variants ]] || say "variants of the mirrors this build needs: $variants (module/variants.list)"
}

# the build's line of module/variants.list, if it needs any variant
variants_line() {
	[[ -z ${variants:-} ]] || printf 'build %s %s\n' "$rel" "$variants"
}

# The options that decide what the mirrors and the module compile to or
# how the merge paths behave (docs/design.md, "Tiers of validation"): the
# one list the equivalence check compares too.
mapfile -t config_opts < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$repo/module/fingerprints/options")
config() {
	local o a b bad=0 refcfg newcfg
	refcfg=$(kdir_of "$ref")/.config newcfg=$(kdir_of "$rel")/.config
	for o in "${config_opts[@]}"; do
		a=$(grep -E "^(# )?CONFIG_${o}[= ]" "$refcfg" || echo "CONFIG_$o absent")
		b=$(grep -E "^(# )?CONFIG_${o}[= ]" "$newcfg" || echo "CONFIG_$o absent")
		if [[ $a != "$b" ]]; then
			say "config differs: $ref: $a; $rel: $b"
			bad=1
		fi
	done
	grep -q '^CONFIG_LIVEPATCH=y' "$newcfg" || die "$rel is built without CONFIG_LIVEPATCH"
	((bad == 0)) || die "config options the module depends on differ from $ref's"
	say "${#config_opts[@]} config options as in $ref"
}

toolchain() {
	local cctext rcc
	cctext=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\(.*\)"/\1/p' "$(kdir_of "$rel")/.config")
	root=$(build_root_of "$rel") || die "no build root for the compiler '$cctext'"
	rcc=$(in_build_root "$root" "${cctext%% *}" --version | head -n1)
	[[ $rcc == "$cctext" ]] || die "$rel was built with '$cctext'; the build root has '$rcc'"
	say "compiler: $cctext (${root:-the host})"
}

build() {
	local src=$work/src log=$work/build.log warn
	stage_module_src "$src"
	# This build is validated here: the staged list names it as a
	# candidate so that the module built for the guest accepts it.
	printf '%s %s %s smoke %s\n' "$pseries" "$rel" "$ver" "$uts" >>"$src/module/builds.list"
	sed -i "/^build $rel /d" "$src/module/variants.list"
	variants_line >>"$src/module/variants.list"
	if ! in_build_root "$root" make -C "$src" KDIR="$(kdir_of "$rel")" KVER="$rel" \
		W=1 module >"$log" 2>&1; then
		tail -n 40 "$log"
		die "the module does not build for $rel (log: $log)"
	fi
	warn=$(own_warnings "$log" "$src")
	[[ -z $warn ]] || { printf '%s\n' "$warn"; die "W=1 warnings in the project's files"; }
	grep 'klp-convert:' "$log" | sed "s/^/[port $rel] /"
}

layout() {
	local out=$work/layout.txt stage=$work/repo
	[[ -s $cache/symbols/System.map-$rel ]] || kallsyms_map "$rel"
	# The check runs where the build's compiler is: stage what it reads.
	rm -rf "$stage"
	mkdir -p "$stage/tests"
	cp -a "$repo/module" "$stage/"
	cp "$repo/tests/layout-check.sh" "$repo/tests/lib.sh" "$stage/tests/"
	if ! in_build_root "$root" env VMAMERGE_CACHE="$cache" VMAMERGE_DEBUG=0 \
		VMAMERGE_LAYOUT_BUILD="$pseries $rel $ver $cache/src/$rel" \
		bash "$stage/tests/layout-check.sh" >"$out" 2>&1; then
		grep -A8 '^not ok' "$out" | head -60
		die "tests/layout-check.sh fails for $rel (log: $out)"
	fi
	say "$(tail -n1 "$out")"
}

smoke() {
	local stage=$work/stage initrd=$work/initrd.cpio.gz log=$work/guest.log rc
	rm -rf "$guest_bin"
	make -s -C "$repo/tests/guest" OUT="$guest_bin" >/dev/null
	[[ -x $repo/userspace/vmamerge.static ]] || make -s -C "$repo/userspace" static >/dev/null
	stage_guest "$rel" "$stage"
	VMAMERGE_GUEST_MODULES=zram bash "$repo/tests/qemu/mkinitramfs.sh" "$rel" "$initrd" "$stage"
	set +e
	VMAMERGE_GUEST_APPEND="VMAMERGE_SUITE=smoke" VMAMERGE_STREAM=0 \
		bash "$repo/tests/qemu/run-guest.sh" "$rel" "$initrd" "$log" 600
	rc=$?
	set -e
	tr -d '\r' <"$log.results" | grep -aE '^(not )?ok|^GUEST-RESULT' | sed "s/^/[port $rel]   /"
	{ grep -aq 'GUEST-RESULT: [0-9]* passed, 0 failed' "$log.results" && ((rc == 0)); } ||
		die "the smoke set failed in the guest (log: $log)"
}

add() {
	if [[ ${PORT_NO_ADD:-0} == 1 ]]; then
		say "validated; not added (PORT_NO_ADD=1)"
		return
	fi
	if builds_of full | awk -v r="$rel" '$2 == r { f = 1 } END { exit !f }'; then
		say "validated; $rel is a full-tier build already: the list stays"
		return
	fi
	bash "$here/builds.sh" add "$pseries" "$rel" "$ver" smoke "$uts"
	bash "$here/builds.sh" readme --write
	# its fingerprint: the reference of the equivalence check
	bash "$here/fingerprints.sh" "$rel"
	sed -i "/^build $rel /d" "$repo/module/variants.list"
	variants_line >>"$repo/module/variants.list"
	say "added to module/builds.list (smoke), module/variants.list, module/fingerprints/$rel.kfp and README.md: commit them"
}

step "find $rel in the archive" resolve
step "download and unpack" fetch
step "nearest validated build" nearest
step "mirrored functions and copied declarations against $ref" compare
step "config options" config
if [[ ${PORT_COMPARE_ONLY:-0} == 1 ]]; then
	say "sources and config as in $ref (PORT_COMPARE_ONLY=1: not built, booted or added)"
	exit 0
fi
step "toolchain" toolchain
step "module build (W=1)" build
step "symbol table, layout check" layout
step "smoke boot" smoke
step "add to the list" add
say "ported in $(since "$t_port") s; timings in $work/timings"
