#!/bin/bash
# Idempotent machine setup for `make check` (Debian 12, run as root).
#
# Installs the build/test packages and the pinned kernel sources from
# tests/matrix, downloads the pinned kernel images and header packages and
# unpacks them (and the kernel sources) into the cache. Kernel images and
# headers are never installed on the host: Debian's 6.12 headers depend on
# the image, and installing that runs update-initramfs into the host's /boot.
#
#   $VMAMERGE_CACHE (default /var/cache/vmamerge)
#     debs/                         downloaded linux-image-*, linux-headers-*,
#                                   linux-kbuild-* .debs
#     kernels/<release>/            dpkg-deb -x of each image (+ depmod)
#     headers/<release>/            dpkg-deb -x of linux-headers-<release> and
#                                   the -common and linux-kbuild-* packages it
#                                   depends on; KDIR is
#                                   usr/src/linux-headers-<release> there
#                                   (kdir_of in tests/lib.sh)
#     src/linux-source-<series>/    full kernel source (checkpatch, mm/*.h, ...)
#     symbols/System.map-<release>  the kernel's /proc/kallsyms (nokaslr)
#
# A warm run (everything present at the pinned versions) does not touch apt
# and takes a few seconds.
#
# Environment:
#   VMAMERGE_CACHE      cache directory (outside the repo)
#   VMAMERGE_KERNELS    restrict to these series, e.g. "6.12" (default: all)
#   VMAMERGE_APT_UPDATE=1  force `apt-get update` even on a warm machine
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$here/lib.sh"
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
matrix=$here/matrix

# gcc-12 .. zlib1g: what the unpacked linux-headers-*/linux-kbuild-* need
# (their Depends; Debian's kbuild calls gcc-12 / x86_64-linux-gnu-gcc-12).
base_pkgs=(gcc make libc6-dev bc kmod cpio xz-utils zstd qemu-system-x86
	busybox-static sparse dkms perl python3
	gcc-12 pahole libelf1 libssl3 zlib1g
	flex bison libelf-dev libssl-dev	# debug kernels
	libnuma-dev libcap-dev liburing-dev file)	# static mm selftests

log() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

t_start=$(date +%s)
timed() { # timed NAME CMD... - run CMD, print its duration
	local name=$1 t0 t1
	shift
	t0=$EPOCHREALTIME
	"$@"
	t1=$EPOCHREALTIME
	awk -v n="$name" -v a="$t0" -v b="$t1" 'BEGIN { printf "[setup] %-40s %6.1fs\n", n, b - a }'
}

[[ $(id -u) -eq 0 ]] || die "must run as root (installs packages, writes $cache)"
[[ -r $matrix ]] || die "no $matrix"

# ---- read the matrix --------------------------------------------------------
series=() releases=() versions=()
while read -r s r v _; do
	[[ -z ${s:-} || $s == \#* ]] && continue
	if [[ -n ${VMAMERGE_KERNELS:-} && " $VMAMERGE_KERNELS " != *" $s "* ]]; then
		continue
	fi
	series+=("$s") releases+=("$r") versions+=("$v")
done <"$matrix"
((${#series[@]})) || die "no kernel of tests/matrix selected (VMAMERGE_KERNELS='${VMAMERGE_KERNELS:-}')"
log "kernels: ${releases[*]}"

# ---- what is missing? -------------------------------------------------------
installed_version() { # PKG -> installed version or empty
	dpkg-query -W -f='${db:Status-Status} ${Version}\n' "$1" 2>/dev/null |
		awk '$1 == "installed" { print $2 }'
}

want=() # pkg or pkg=version
for p in "${base_pkgs[@]}"; do
	[[ -n $(installed_version "$p") ]] || want+=("$p")
done
for i in "${!series[@]}"; do
	s=${series[$i]} r=${releases[$i]} v=${versions[$i]}
	[[ $(installed_version "linux-source-$s") == "$v" ]] || want+=("linux-source-$s=$v")
done

need_download=()
for i in "${!series[@]}"; do
	r=${releases[$i]} v=${versions[$i]}
	[[ -f $cache/debs/linux-image-${r}_${v}_amd64.deb ]] || need_download+=("linux-image-$r=$v")
done

# Header trees: stamped with the version and their own path (the rewritten
# Makefiles name it).
headers_stamp() { printf '%s %s\n' "$2" "$cache/headers/$1"; } # RELEASE VERSION
need_headers=() # indices into series/releases/versions
for i in "${!series[@]}"; do
	r=${releases[$i]} v=${versions[$i]}
	st=$cache/headers/$r/.vmamerge-version
	if [[ -f $st && $(<"$st") == "$(headers_stamp "$r" "$v")" ]] && kdir_ready "$r"; then
		continue
	fi
	need_headers+=("$i")
done

# ---- apt ----------------------------------------------------------------------
# header_pkgs RELEASE VERSION: linux-headers-RELEASE=VERSION and the -common
# and linux-kbuild-* packages it depends on, each pinned to VERSION (one
# PKG=VER a line). Its other Depends (the kernel image, gcc-12, linux-base,
# ...) are not wanted: the image is never installed, the tools are base_pkgs.
header_pkgs() {
	local r=$1 v=$2 deps
	deps=$(apt-cache show "linux-headers-$r=$v" 2>/dev/null | sed -n 's/^Depends: //p' | head -n1)
	[[ -n $deps ]] || die "apt-cache show linux-headers-$r=$v: no Depends"
	echo "linux-headers-$r=$v"
	# "a (= 1), b (>= 2) | c, d" -> one name a line
	tr ',|' '\n' <<<"$deps" | sed -E 's/^ *//; s/[ (].*//' |
		{ grep -E '^(linux-headers-.*-common|linux-kbuild-.*)$' || true; } | sed "s/\$/=$v/"
}

# deb_of PKG=VER: where apt-get download puts it in $cache/debs (any arch)
deb_of() {
	local p=${1%%=*} v=${1#*=} f
	for f in "$cache/debs/${p}_${v//:/%3a}_"*.deb; do
		[[ -f $f ]] && { echo "$f"; return 0; }
	done
	return 1
}

in_archive() { # PKG=VER: is that version in the apt lists?
	local p=${1%%=*} v=${1#*=}
	apt-cache madison "$p" 2>/dev/null | awk -F'|' -v v="$v" '{ gsub(/ /, "", $2) } $2 == v { f = 1 } END { exit !f }'
}
not_in_archive() { # PKG=VER
	die "matrix: $1 is no longer in the Debian archive; update tests/matrix and module/validated_builds.c (README: \"Adding a kernel build\")"
}

declare -A hdr_pkgs=() # release -> "pkg=ver pkg=ver ..."
if ((${#want[@]} + ${#need_download[@]} + ${#need_headers[@]})) || [[ ${VMAMERGE_APT_UPDATE:-0} == 1 ]]; then
	timed "apt-get update" apt-get update -qq

	# Every pinned version must still be in the archive.
	for pv in "${need_download[@]}" "${want[@]}"; do
		[[ $pv == *=* ]] || continue
		in_archive "$pv" || not_in_archive "$pv"
	done
	for i in "${need_headers[@]}"; do
		r=${releases[$i]} v=${versions[$i]}
		in_archive "linux-headers-$r=$v" || not_in_archive "linux-headers-$r=$v"
		pkgs=$(header_pkgs "$r" "$v")
		(($(wc -l <<<"$pkgs") >= 3)) ||
			die "linux-headers-$r=$v: expected -common and linux-kbuild-* among its Depends, got: ${pkgs//$'\n'/ }"
		for pv in $pkgs; do
			in_archive "$pv" || not_in_archive "$pv"
			deb_of "$pv" >/dev/null || need_download+=("$pv")
		done
		hdr_pkgs[$r]=${pkgs//$'\n'/ }
	done
else
	log "all packages present at pinned versions: no apt-get update"
fi

if ((${#want[@]})); then
	log "installing: ${want[*]}"
	# --no-install-recommends: with recommends dkms pulls a kernel image into the
	# host and runs update-initramfs.
	timed "apt-get install (${#want[@]} packages)" \
		env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends --allow-downgrades -o Dpkg::Use-Pty=0 "${want[@]}"
fi

# ---- downloads (kernel images, header packages) --------------------------------
download_into() { # DIR PKG=VER...
	local dir=$1
	shift
	(cd "$dir" && apt-get download -q=2 "$@")
	(($(compgen -G "$dir/*.deb" | wc -l) == $#)) || die "apt-get download $* did not produce $# .debs"
}

mkdir -p "$cache/debs" "$cache/kernels" "$cache/src" "$cache/headers"
fetch() { # NAME PKG=VER...: download into $cache/debs
	local name=$1 tmp=$cache/debs/.download
	shift
	rm -rf "$tmp"
	mkdir -p "$tmp"
	chmod 755 "$tmp"
	# apt-get download runs as _apt when it can; keep the dir writable for it.
	chown _apt "$tmp" 2>/dev/null || true
	timed "$name" download_into "$tmp" "$@"
	mv "$tmp"/*.deb "$cache/debs/"
	rm -rf "$tmp"
}
dl_images=() dl_headers=()
for pv in "${need_download[@]}"; do
	if [[ $pv == linux-image-* ]]; then dl_images+=("$pv"); else dl_headers+=("$pv"); fi
done
for pv in "${dl_images[@]}"; do
	fetch "download $pv" "$pv"
done
((${#dl_headers[@]} == 0)) || fetch "download ${#dl_headers[@]} header packages" "${dl_headers[@]}"

# ---- kernel images -----------------------------------------------------------

for i in "${!series[@]}"; do
	r=${releases[$i]} v=${versions[$i]}
	deb=$cache/debs/linux-image-${r}_${v}_amd64.deb
	dest=$cache/kernels/$r
	[[ -f $deb ]] || die "missing $deb after download"
	if [[ -f $dest/.vmamerge-version && $(<"$dest/.vmamerge-version") == "$v" ]]; then
		continue
	fi
	rm -rf "$dest" "$dest.tmp"
	mkdir -p "$dest.tmp"
	timed "extract linux-image-$r" dpkg-deb -x "$deb" "$dest.tmp"
	[[ -f $dest.tmp/boot/vmlinuz-$r ]] || die "$deb has no boot/vmlinuz-$r"
	# The deb has no modules.dep (postinst runs depmod): generate it.
	timed "depmod $r" depmod -b "$dest.tmp" "$r"
	echo "$v" >"$dest.tmp/.vmamerge-version"
	mv "$dest.tmp" "$dest"
done

# ---- kernel headers ------------------------------------------------------------
# One root per release with linux-headers-<release>, -common and linux-kbuild-*
# unpacked together: their relative symlinks (scripts ->
# ../../lib/linux-kbuild-*/scripts) resolve inside it. Absolute references to
# the packages' install paths (the amd64 Makefile is just
# "include /usr/src/linux-headers-<abi>-common/Makefile") are rewritten to
# this root, absolute symlinks (lib/modules/<release>/build) made relative.
unpack_headers() { # RELEASE VERSION PKG=VER...
	local r=$1 v=$2 dest=$cache/headers/$1 tmp=$cache/headers/.unpack-$1 pv deb f l t
	shift 2
	rm -rf "$tmp"
	mkdir -p "$tmp"
	for pv in "$@"; do
		deb=$(deb_of "$pv") || die "missing $cache/debs/${pv%%=*}_${pv#*=}_*.deb after download"
		dpkg-deb -x "$deb" "$tmp"
	done
	# Text files kbuild may read (Makefiles, scripts/Makefile.*, .kernelvariables,
	# ...); not include/ (only comments name /usr/src there) nor docs.
	while IFS= read -r -d '' f; do
		sed -i -e "s#/usr/src/linux-headers-#$dest/usr/src/linux-headers-#g" \
			-e "s#/usr/lib/linux-kbuild-#$dest/usr/lib/linux-kbuild-#g" "$f"
	done < <(grep -rlIZ -e /usr/src/linux-headers- -e /usr/lib/linux-kbuild- \
		--exclude-dir=include "$tmp/usr/src" "$tmp"/usr/lib/linux-kbuild-* 2>/dev/null || true)
	while IFS= read -r -d '' l; do
		t=$(readlink "$l")
		if [[ -e $tmp$t ]]; then ln -sfnr "$tmp$t" "$l"; fi
	done < <(find "$tmp" -type l -lname '/*' -print0)
	[[ -f $tmp/usr/src/linux-headers-$r/Makefile && -f $tmp/usr/src/linux-headers-$r/.config ]] ||
		die "headers of $r: no usr/src/linux-headers-$r/{Makefile,.config} in $*"
	# (what is left: a reference not preceded by our root)
	local abs='(^|[^[:alnum:]_.+~-])/usr/(src/linux-headers|lib/linux-kbuild)'
	if grep -Eqs "$abs" "$tmp"/usr/src/*/Makefile; then
		die "headers of $r: absolute paths left in $(grep -Els "$abs" "$tmp"/usr/src/*/Makefile)"
	fi
	headers_stamp "$r" "$v" >"$tmp/.vmamerge-version"
	rm -rf "$dest"
	mv "$tmp" "$dest"
}
for i in "${need_headers[@]}"; do
	r=${releases[$i]} v=${versions[$i]}
	[[ -n ${hdr_pkgs[$r]:-} ]] || die "headers of $r: package list not resolved"
	# shellcheck disable=SC2086 # a list of PKG=VER words
	timed "unpack headers of $r" unpack_headers "$r" "$v" ${hdr_pkgs[$r]}
done

# ---- kernel sources ----------------------------------------------------------
# Full extraction: xz decompression dominates (~12 s for 6.12 here), extracting
# only some directories saves nothing measurable.
for i in "${!series[@]}"; do
	s=${series[$i]} v=${versions[$i]}
	dest=$cache/src/linux-source-$s
	stamp=$cache/src/linux-source-$s.version
	if [[ -f $dest/Makefile && ! -f $stamp ]]; then
		# Extracted by an older setup without a stamp: accept it if its
		# Makefile has the upstream version of the pinned package.
		mkver=$(awk -F' *= *' '$1 == "VERSION" { a = $2 } $1 == "PATCHLEVEL" { b = $2 }
			$1 == "SUBLEVEL" { c = $2 } END { print a "." b "." c }' "$dest/Makefile")
		[[ $mkver == "${v%%-*}" ]] && echo "$v" >"$stamp"
	fi
	if [[ -f $dest/Makefile && -f $stamp && $(<"$stamp") == "$v" ]]; then
		continue
	fi
	tarball=/usr/src/linux-source-$s.tar.xz
	[[ -f $tarball ]] || die "$tarball missing (package linux-source-$s=$v)"
	rm -rf "$dest" "$cache/src/.extract-$s" "$stamp"
	mkdir -p "$cache/src/.extract-$s"
	timed "extract linux-source-$s" tar -xJf "$tarball" -C "$cache/src/.extract-$s"
	[[ -f $cache/src/.extract-$s/linux-source-$s/Makefile ]] || die "$tarball: unexpected layout"
	mv "$cache/src/.extract-$s/linux-source-$s" "$dest"
	rmdir "$cache/src/.extract-$s"
	echo "$v" >"$stamp"
done

# ---- symbol tables -------------------------------------------------------------
# Debian's image carries a placeholder System.map (the real one is in the
# ~1 GB linux-image-*-dbg package). With CONFIG_KALLSYMS_ALL=y the kernel's
# /proc/kallsyms has the same text and data symbols: boot each kernel once
# (nokaslr, nothing loaded) and keep its table as
# $cache/symbols/System.map-<release> (tests/layout-check.sh reads it).
kallsyms_map() { # RELEASE
	local rel=$1 tmp map=$cache/symbols/System.map-$1
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmamerge-kallsyms.XXXXXX")
	mkdir -p "$tmp/stage" "$cache/symbols"
	VMAMERGE_GUEST_MODULES="" bash "$here/qemu/mkinitramfs.sh" "$rel" "$tmp/initrd.cpio.gz" "$tmp/stage"
	if ! VMAMERGE_GUEST_APPEND="vmamerge_test=kallsyms nokaslr" VMAMERGE_STREAM=0 \
		bash "$here/qemu/run-guest.sh" "$rel" "$tmp/initrd.cpio.gz" "$tmp/guest.log" 300; then
		tail -n 30 "$tmp/guest.log"
		rm -rf "$tmp"
		die "could not boot $rel to read its symbol table"
	fi
	tr -d '\r' <"$tmp/guest.log.results" |
		sed -n '/^KALLSYMS-BEGIN/,/^KALLSYMS-END/{/^KALLSYMS-/d;p}' |
		base64 -d | gzip -dc | awk 'NF == 3' >"$map.tmp"
	rm -rf "$tmp"
	if ! grep -q ' T start_kernel$' "$map.tmp" || (($(wc -l <"$map.tmp") < 50000)); then
		rm -f "$map.tmp"
		die "the symbol table read from $rel looks wrong"
	fi
	mv "$map.tmp" "$map"
}
for i in "${!series[@]}"; do
	r=${releases[$i]}
	[[ -s $cache/symbols/System.map-$r ]] || timed "symbol table of $r (guest boot)" kallsyms_map "$r"
done

# ---- sanity ------------------------------------------------------------------
for i in "${!series[@]}"; do
	r=${releases[$i]}
	kdir=$(kdir_of "$r")
	kdir_ready "$r" || die "$kdir is not a kernel header tree"
	# kbuild reads its Makefiles (and the rewritten include) and runs.
	make -s -C "$kdir" kernelrelease >/dev/null || die "make -C $kdir kernelrelease failed"
done
[[ -x /bin/busybox ]] || die "/bin/busybox missing (busybox-static)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing"

# The lab test's Debian root and local package repository (cached by suite
# and package set; tests/lab/mkroot.sh).
# Not fatal here: the lab step of make check tries again and says why.
[[ ${VMAMERGE_LAB:-1} == 0 ]] || timed "lab root bookworm" bash "$here/lab/mkroot.sh" bookworm >/dev/null ||
	log "lab root bookworm: failed (the lab step reports it)"

log "done in $(($(date +%s) - t_start))s (cache: $cache)"
