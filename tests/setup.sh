#!/bin/bash
# Idempotent machine setup for `make check` (Debian 12, run as root).
#
# Installs the build/test packages and the pinned kernel headers and sources
# from tests/matrix, downloads the pinned kernel images and unpacks them (and
# the kernel sources) into the cache:
#
#   $VMAMERGE_CACHE (default /var/cache/vmamerge)
#     debs/                         downloaded linux-image-*.deb
#     kernels/<release>/            dpkg-deb -x of each image (+ depmod)
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
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
matrix=$here/matrix

base_pkgs=(gcc make libc6-dev bc kmod cpio xz-utils zstd qemu-system-x86
	busybox-static sparse dkms perl python3)

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
	[[ $(installed_version "linux-headers-$r") == "$v" ]] || want+=("linux-headers-$r=$v")
	[[ $(installed_version "linux-source-$s") == "$v" ]] || want+=("linux-source-$s=$v")
done

need_download=()
for i in "${!series[@]}"; do
	r=${releases[$i]} v=${versions[$i]}
	[[ -f $cache/debs/linux-image-${r}_${v}_amd64.deb ]] || need_download+=("linux-image-$r=$v")
done

# ---- apt ----------------------------------------------------------------------
if ((${#want[@]} + ${#need_download[@]})) || [[ ${VMAMERGE_APT_UPDATE:-0} == 1 ]]; then
	timed "apt-get update" apt-get update -qq

	# Every pinned version must still be in the archive.
	for pv in "${need_download[@]}" "${want[@]}"; do
		[[ $pv == *=* ]] || continue
		p=${pv%%=*} v=${pv#*=}
		if ! apt-cache madison "$p" 2>/dev/null | awk -F'|' -v v="$v" '{ gsub(/ /, "", $2) } $2 == v { f = 1 } END { exit !f }'; then
			die "matrix: $p=$v is no longer in the Debian archive; update tests/matrix and module/validated_builds.c (README: \"Adding a kernel build\")"
		fi
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

# ---- kernel images -----------------------------------------------------------
download_into() { # DIR PKG=VER
	(cd "$1" && apt-get download -q=2 "$2")
	compgen -G "$1/*.deb" >/dev/null || die "apt-get download $2 produced no .deb"
}

mkdir -p "$cache/debs" "$cache/kernels" "$cache/src"
for pv in "${need_download[@]}"; do
	tmp=$cache/debs/.download
	rm -rf "$tmp"
	mkdir -p "$tmp"
	chmod 755 "$tmp"
	# apt-get download runs as _apt when it can; keep the dir writable for it.
	chown _apt "$tmp" 2>/dev/null || true
	timed "download $pv" download_into "$tmp" "$pv"
	mv "$tmp"/*.deb "$cache/debs/"
	rm -rf "$tmp"
done

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
	[[ -f /lib/modules/$r/build/Makefile ]] || die "/lib/modules/$r/build is not a kernel header tree"
done
[[ -x /bin/busybox ]] || die "/bin/busybox missing (busybox-static)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing"

log "done in $(($(date +%s) - t_start))s (cache: $cache)"
