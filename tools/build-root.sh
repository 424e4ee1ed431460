#!/bin/bash
# build-root.sh SUITE [SET]: a debootstrapped build root of Debian SUITE
# with a package set:
#   kbuild (default; trixie)  the toolchain that suite's kernels are built
#         with (Debian 13: gcc-14), for building the module against that
#         suite's kernel headers (whose kbuild tools need the suite's libc);
#   deb (bookworm, trixie)  what `dpkg-buildpackage -b` of debian/ needs
#         (build-essential, debhelper, dh-dkms) and lintian, for
#         tests/deb-test.sh.
# Cached as
#   $VMAMERGE_CACHE/roots/<suite>-<key>/  (key: suite + package set)
# and printed on stdout.  Idempotent; a warm call prints the path at once.
# Root only (debootstrap).  Never touches the host's apt configuration.
#
#   build-root.sh SUITE [SET]           make sure it is there, print its path
#   build-root.sh --run ROOT CMD...     run CMD in ROOT with $VMAMERGE_CACHE
#                                       bind-mounted at the same path
set -euo pipefail

cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
mirror=${VMAMERGE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# What a module build needs: the compiler, make, the libraries of the
# suite's linux-kbuild-* (libelf, libssl, zlib; pahole for BTF), kmod; gcc
# (cc), binutils and gawk for tests/layout-check.sh run inside the root,
# perl for W=1 (kernel-doc).
pkgs=(gcc-14 gcc make libc6-dev bc kmod pahole libelf1t64 libssl3t64 zlib1g
	binutils gawk perl)

die() { printf 'build-root: %s\n' "$*" >&2; exit 1; }

if [[ ${1:-} == --run ]]; then
	root=${2:?usage: $0 --run ROOT CMD...}
	shift 2
	# A private mount namespace: the binds vanish with the command.
	# shellcheck disable=SC2016 # expanded by the inner shell
	exec unshare --mount --propagation private -- /bin/sh -c '
		root=$1 cache=$2; shift 2
		mkdir -p "$root$cache" "$root/proc" &&
		mount --rbind "$cache" "$root$cache" &&
		mount -t proc proc "$root/proc" &&
		exec chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin \
			HOME=/root LANG=C.UTF-8 "$@"' sh "$root" "$cache" "$@"
fi

suite=${1:?usage: $0 SUITE [kbuild|deb]}
set_name=${2:-kbuild}
case $set_name-$suite in
kbuild-trixie) ;;
deb-bookworm | deb-trixie)
	# debian/control's Build-Depends (dpkg-buildpackage checks them: a
	# missing one fails the build, it does not go unnoticed), the
	# implied build-essential, and lintian.  Key: suite + this set.
	pkgs=(build-essential debhelper dh-dkms lintian
		liblzma-dev libzstd-dev liblz4-dev libelf-dev libbpf-dev binutils-dev)
	;;
kbuild-*) die "no build root recipe for suite $suite (the host builds bookworm's kernels)" ;;
*) die "no build root recipe for set $set_name of suite $suite" ;;
esac
[[ $(id -u) == 0 ]] || die "must run as root (debootstrap, chroot)"
key=$(printf '%s\n' "$suite" "${pkgs[@]}" "$mirror" | sha256sum | cut -c1-12)
root=$cache/roots/$suite-$key
if [[ -f $root/.vmamerge-ready ]]; then
	echo "$root"
	exit 0
fi
command -v debootstrap >/dev/null || die "debootstrap missing (tests/setup.sh installs it)"
mkdir -p "$cache/roots"
rm -rf "$root.tmp"
t0=$(date +%s)
rlog=$cache/roots/$suite-$key.log
case $set_name in
kbuild)
	include=$(IFS=,; echo "${pkgs[*]}")
	debootstrap --variant=minbase --include="$include" \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		"$suite" "$root.tmp" "$mirror" >"$rlog" 2>&1 ||
		{ tail -n 20 "$rlog" >&2; die "debootstrap $suite failed"; }
	;;
deb)
	# debootstrap's --include does not resolve virtual packages
	# (lintian's perl-openssl-abi-3): the root's own apt installs the set.
	debootstrap --variant=minbase \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		"$suite" "$root.tmp" "$mirror" >"$rlog" 2>&1 ||
		{ tail -n 20 "$rlog" >&2; die "debootstrap $suite failed"; }
	cp /etc/resolv.conf "$root.tmp/etc/resolv.conf"
	{
		chroot "$root.tmp" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
			chroot "$root.tmp" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
				DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends -o Dpkg::Use-Pty=0 "${pkgs[@]}"
	} >>"$rlog" 2>&1 || { tail -n 20 "$rlog" >&2; die "apt-get install in the $suite root failed"; }
	chroot "$root.tmp" apt-get clean
	: >"$root.tmp/etc/resolv.conf"
	;;
esac
case $set_name in
kbuild) chroot "$root.tmp" gcc-14 --version >/dev/null || die "no gcc-14 in the $suite root" ;;
deb) chroot "$root.tmp" dpkg-buildpackage --version >/dev/null || die "no dpkg-buildpackage in the $suite root" ;;
esac
rm -rf "$root.tmp/var/cache/apt/archives/"*.deb
echo "$(($(date +%s) - t0))" >"$root.tmp/.vmamerge-seconds"
touch "$root.tmp/.vmamerge-ready"
mv "$root.tmp" "$root"
echo "$root"
