#!/bin/bash
# mkinitramfs.sh RELEASE OUT.cpio.gz STAGEDIR
#
# Builds the guest's busybox initramfs:
#   /bin/busybox (busybox-static) + a symlink for each applet
#   /init                       tests/qemu/init
#   STAGEDIR/*                  copied to / (the caller stages
#                               /lib/vmamerge/vmamerge.ko, /bin/vmamerge,
#                               /tests/..., /demo/...)
#   /lib/modules/RELEASE/...    the kernel modules listed in
#                               $VMAMERGE_GUEST_MODULES (default: zram) and
#                               their dependencies, decompressed (Debian 6.12
#                               ships .ko.xz; busybox insmod may not read xz),
#                               a modules.dep for them, and boot.order: the
#                               paths /init insmods, in dependency order.
set -euo pipefail

usage() { echo "usage: $0 RELEASE OUT.cpio.gz STAGEDIR" >&2; exit 2; }
die() { echo "mkinitramfs: ERROR: $*" >&2; exit 1; }
(($# == 3)) || usage
rel=$1 out=$2 stage=$3

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
kroot=$cache/kernels/$rel
moddir=$kroot/lib/modules/$rel
modules=${VMAMERGE_GUEST_MODULES-zram}

[[ -d $stage ]] || die "stage dir $stage does not exist"
[[ -f $moddir/modules.dep ]] || die "$moddir/modules.dep missing: run tests/setup.sh"
[[ -x /bin/busybox ]] || die "/bin/busybox missing (apt-get install busybox-static)"

root=$(mktemp -d "${TMPDIR:-/tmp}/vmamerge-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT

# ---- skeleton + busybox ------------------------------------------------------
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,run,root,etc,mnt,lib/modules/"$rel"}
chmod 1777 "$root/tmp"
cp /bin/busybox "$root/bin/busybox"
while read -r applet; do
	# --list-full gives e.g. usr/bin/awk
	[[ -e $root/$applet ]] || ln -s /bin/busybox "$root/$applet"
done < <(/bin/busybox --list-full)
# A console node in case the kernel's built-in initramfs lacks one.
mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null || true
mknod -m 666 "$root/dev/null" c 1 3 2>/dev/null || true
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
install -m 755 "$here/init" "$root/init"

# ---- kernel modules ------------------------------------------------------------
# modules.dep lines: "kernel/a/b.ko.xz: kernel/dep1.ko.xz kernel/dep2.ko.xz"
declare -A deps=() byname=()
while IFS= read -r line; do
	m=${line%%:*}
	deps[$m]=${line#*:}
	n=${m##*/}
	n=${n%%.ko*}
	byname[${n//-/_}]=$m
done <"$moddir/modules.dep"

order=()
declare -A seen=()
visit() {
	local m=$1 d
	[[ -n ${seen[$m]:-} ]] && return 0
	seen[$m]=1
	for d in ${deps[$m]}; do visit "$d"; done
	order+=("$m")
}
for n in $modules; do
	m=${byname[${n//-/_}]:-}
	[[ -n $m ]] || die "module $n not found in $moddir/modules.dep"
	visit "$m"
done

: >"$root/lib/modules/$rel/boot.order"
for m in "${order[@]}"; do
	src=$moddir/$m
	dst=$root/lib/modules/$rel/${m%.xz}
	dst=${dst%.zst}
	dst=${dst%.gz}
	mkdir -p "$(dirname "$dst")"
	case $src in
	*.xz) xz -dc "$src" >"$dst" ;;
	*.zst) zstd -qdc "$src" >"$dst" ;;
	*.gz) gzip -dc "$src" >"$dst" ;;
	*) cp "$src" "$dst" ;;
	esac
	echo "/lib/modules/$rel/${dst#"$root/lib/modules/$rel/"}" >>"$root/lib/modules/$rel/boot.order"
done
if ((${#order[@]})); then
	depmod -b "$root" "$rel" 2>/dev/null || true
fi

# ---- the caller's files ----------------------------------------------------------
cp -a "$stage/." "$root/"

# ---- pack --------------------------------------------------------------------------
mkdir -p "$(dirname "$out")"
(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
	gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
