#!/bin/bash
# Idempotent machine setup for `make check` (Debian 12, run as root).
#
# Installs the build/test packages and the pinned kernel sources of the
# full-tier builds of module/builds.list, downloads the pinned kernel images and header packages and
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
#     qemu/current/qemu-system-x86_64  QEMU 10.0 from bookworm-backports,
#                                   unpacked (tests/qemu/install-qemu.sh)
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
# papt: the private apt configuration of the smoke-tier builds' suites
# shellcheck source=../tools/debian-apt.sh
source "$here/../tools/debian-apt.sh"
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}

# gcc-12 .. zlib1g: what the unpacked linux-headers-*/linux-kbuild-* need
# (their Depends; Debian's kbuild calls gcc-12 / x86_64-linux-gnu-gcc-12).
base_pkgs=(gcc make libc6-dev bc kmod cpio xz-utils zstd qemu-system-x86
	busybox-static sparse dkms perl python3
	gcc-12 pahole libelf1 libssl3 zlib1g
	flex bison libelf-dev libssl-dev	# debug kernels
	libnuma-dev libcap-dev liburing-dev file	# static mm selftests
	debootstrap	# build roots: Debian 13's kernels (gcc-14), the Debian packages
	dpkg-dev	# tests/deb-test.sh --static: debian/rules reads /usr/share/dpkg/default.mk
	liblzma-dev libzstd-dev liblz4-dev libelf-dev libbpf-dev binutils-dev)	# tools/kfp

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
[[ -r $(builds_list) ]] || die "no $(builds_list)"

# ---- the matrix: the full tier as the archive has it (tests/matrix.sh) -------
# kfp (tools/kfp, its libraries among base_pkgs) checks a newer build's
# image, so the base packages come first.
# shellcheck source=matrix.sh
source "$here/matrix.sh"
installed_version() { # PKG -> installed version or empty
	dpkg-query -W -f='${db:Status-Status} ${Version}\n' "$1" 2>/dev/null |
		awk '$1 == "installed" { print $2 }'
}
base_missing=()
for p in "${base_pkgs[@]}"; do
	[[ -n $(installed_version "$p") ]] || base_missing+=("$p")
done
if ((${#base_missing[@]})); then
	timed "apt-get update" apt-get update -qq
	apt_updated=1
	timed "apt-get install (${#base_missing[@]} packages)" \
		env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends -o Dpkg::Use-Pty=0 "${base_missing[@]}"
fi
export VMAMERGE_MATRIX=${VMAMERGE_MATRIX:-$cache/matrix/full}
timed "the full tier in the archive (tests/matrix.sh)" matrix_resolve "$VMAMERGE_MATRIX"

# ---- read the matrix --------------------------------------------------------
series=() releases=() versions=()
while read -r s r v _; do
	series+=("$s") releases+=("$r") versions+=("$v")
done < <(builds_of full)
((${#series[@]})) || die "no full-tier build of module/builds.list selected (VMAMERGE_KERNELS='${VMAMERGE_KERNELS:-}')"
log "kernels: ${releases[*]}"

# ---- what is missing? -------------------------------------------------------
# (the base packages are installed above, before the matrix)
want=() # pkg=version
for i in "${!series[@]}"; do
	s=${series[$i]} r=${releases[$i]} v=${versions[$i]}
	[[ $(installed_version "linux-source-$s") == "$v" ]] || want+=("linux-source-$s=$v")
done

need_download=()
for i in "${!series[@]}"; do
	r=${releases[$i]} v=${versions[$i]}
	[[ -f $cache/debs/linux-image-${r}_${v}_amd64.deb ]] || need_download+=("linux-image-$r=$v")
done

# (headers_stamp: tests/lib.sh)
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
# (header_pkgs: tests/lib.sh)


in_archive() { # PKG=VER: is that version in the apt lists?
	local p=${1%%=*} v=${1#*=}
	apt-cache madison "$p" 2>/dev/null | awk -F'|' -v v="$v" '{ gsub(/ /, "", $2) } $2 == v { f = 1 } END { exit !f }'
}
not_in_archive() { # PKG=VER
	die "matrix: $1 is no longer in the Debian archive; port a newer build (make port KVER=...) and drop this one from module/builds.list (docs/testing.md, \"Porting to a new build\")"
}

declare -A hdr_pkgs=() # release -> "pkg=ver pkg=ver ..."
if ((${#want[@]} + ${#need_download[@]} + ${#need_headers[@]})) || [[ ${VMAMERGE_APT_UPDATE:-0} == 1 ]]; then
	[[ -n ${apt_updated:-} ]] || timed "apt-get update" apt-get update -qq

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
	timed "linux-image-${releases[$i]}" unpack_image "${releases[$i]}" "${versions[$i]}"
done

# ---- kernel headers ------------------------------------------------------------
# (unpack_headers: tests/lib.sh)
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

# ---- the newest Debian kernel source: upstream's newest mm selftests --------------
# The newest linux-source-X.Y any suite of the private apt configuration has
# (today trixie-backports'), whichever version the archive has now: its
# tools/testing/selftests/mm/merge.c runs on every kernel of the matrix
# (tests/selftests/build-newest.sh).  $cache/src/newest names it.
newest_source() {
	local pkg v dest tmp
	papt_update 21600 || die "apt-get update of $papt_root failed"
	pkg=$(papt apt-cache pkgnames linux-source- | grep -E '^linux-source-[0-9]+\.[0-9]+$' | sort -V | tail -n 1)
	[[ -n $pkg ]] || die "no linux-source-X.Y in the private apt lists"
	v=$(papt apt-cache policy "$pkg" | awk '$1 == "Candidate:" { print $2 }')
	dest=$cache/src/$pkg
	if [[ ! -f $dest/Makefile || $(cat "$dest.version" 2>/dev/null) != "$v" ]]; then
		papt_download "$pkg=$v" || die "$pkg=$v: download failed"
		rm -rf "$dest" "$dest.version" "$cache/src/.extract-newest"
		tmp=$cache/src/.extract-newest
		mkdir -p "$tmp"
		dpkg-deb --fsys-tarfile "$(deb_of "$pkg=$v")" | tar -x -C "$tmp" ./usr/src
		tar -xJf "$tmp/usr/src/$pkg.tar.xz" -C "$tmp"
		[[ -f $tmp/$pkg/Makefile ]] || die "$pkg=$v: unexpected layout"
		mv "$tmp/$pkg" "$dest"
		rm -rf "$tmp"
		echo "$v" >"$dest.version"
	fi
	echo "$pkg" >"$cache/src/newest"
}
timed "newest Debian kernel source" newest_source

# ---- QEMU for the guests --------------------------------------------------------
# QEMU 10.0 from bookworm-backports, unpacked into $cache/qemu (private apt
# lists; the host keeps Debian 12's QEMU 7.2, whose multi-threaded TCG broke
# livepatch transitions): tests/qemu/install-qemu.sh.  Before the symbol
# tables: their guest boots run it.
timed "QEMU for the guests" bash "$here/qemu/install-qemu.sh" >/dev/null

# ---- symbol tables -------------------------------------------------------------
# (kallsyms_map: tests/lib.sh)
for i in "${!series[@]}"; do
	r=${releases[$i]}
	[[ -s $cache/symbols/System.map-$r ]] || timed "symbol table of $r (guest boot)" kallsyms_map "$r"
done

# ---- smoke-tier builds ---------------------------------------------------------
# Ported by tools/port.sh (make port): image and headers only - the port
# compared their sources and checked their symbols - from whichever suite
# has them, through the private apt configuration (tools/debian-apt.sh:
# $cache/apt, never the host's), and the build root of their compiler
# (tools/build-root.sh: Debian 13's gcc-14 in a debootstrapped trixie root,
# $cache/roots/).
smoke_setup() { # SERIES RELEASE VERSION
	local r=$2 v=$3 pkgs
	if [[ ! -f $cache/kernels/$r/.vmamerge-version ||
		$(<"$cache/kernels/$r/.vmamerge-version") != "$v" ||
		! -f $cache/headers/$r/.vmamerge-version ||
		$(<"$cache/headers/$r/.vmamerge-version") != "$(headers_stamp "$r" "$v")" ]]; then
		papt_update 21600 || die "apt-get update of $papt_root failed"
		pkgs=$(header_pkgs "$r" "$v" papt apt-cache)
		# shellcheck disable=SC2086 # PKG=VER words
		papt_download "linux-image-$r=$v" $pkgs ||
			die "$r ($v) is no longer in the Debian archive: drop it from module/builds.list"
		unpack_image "$r" "$v"
		# shellcheck disable=SC2086
		unpack_headers "$r" "$v" $pkgs
	fi
	build_root_of "$r" >/dev/null || die "no build root for $r"
}
while read -r s r v _; do
	timed "smoke-tier build $r" smoke_setup "$s" "$r" "$v"
done < <(builds_of smoke)

# ---- the Debian packages' build roots ------------------------------------------
# tools/build-root.sh SUITE deb: debootstrap, then the suite's
# build-essential, debhelper, dh-dkms and lintian (tests/deb-test.sh).
for ds in ${VMAMERGE_DEB_SUITES:-bookworm}; do
	timed "Debian package build root $ds" bash "$here/../tools/build-root.sh" "$ds" deb >/dev/null ||
		die "the $ds build root of the Debian packages"
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
"$cache/qemu/current/qemu-system-x86_64" --version >/dev/null || die "$cache/qemu/current/qemu-system-x86_64 does not run"

log "done in $(($(date +%s) - t_start))s (cache: $cache)"
