#!/bin/bash
# tests/deb-install.sh WORK VERSION RELEASE KDIR UNLISTED [PKGS [KO]]: the packages'
# installation and purge, run by tests/deb-test.sh inside a throwaway
# overlay of a package build root (chroot: nothing is loaded, no kernel
# is booted).  WORK holds the .debs; RELEASE is a validated build whose
# header tree KDIR the module is built against, UNLISTED a release that
# module/builds.list does not list (same tree); PKGS, what the tree's
# tools need (installed with dkms); KO, one module of RELEASE's image (a
# kernel without modules is not one dkms leaves as it found it: trixie's
# dkms deletes the depmod files its last module leaves empty).  Prints
# "ok - ..." /
# "not ok - ..." lines and "  | " output.
set -u
work=$1 ver=$2 rel=$3 kdir=$4 unlisted=$5 pkgs=${6:-} kmod=${7:-}
ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; }
check() { # DESC CMD...
	local d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
show() { sed 's/^/  | /'; }
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
# dkms from the suite's archive (the root's apt; kmod comes with it)
# shellcheck disable=SC2086 # a list of packages
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends -o Dpkg::Use-Pty=0 \
	dkms $pkgs; } >"$work/apt.log" 2>&1; then
	nok "apt-get install dkms $pkgs"
	tail -n 10 "$work/apt.log" | show
	exit 0
fi
# Two kernels as kernel packages leave them: /lib/modules/RELEASE/build,
# a module, the depmod files.
for k in "$rel" "$unlisted"; do
	mkdir -p "/lib/modules/$k"
	ln -s "$kdir" "/lib/modules/$k/build"
	if [[ -n $kmod ]]; then
		mkdir -p "/lib/modules/$k/kernel"
		cp "$kmod" "/lib/modules/$k/kernel/"
	fi
	depmod "$k"
done
# The file list: the package database and the trees the packages touch;
# not dkms's signing key, which dkms makes at its first build and keeps
# (docs/install.md, "Uninstall").
snapshot() { # OUT
	{
		dpkg-query -W -f='pkg ${db:Status-Abbrev} ${Package} ${Version}\n' | awk '$2 !~ /^.n/'
		find /etc /usr /lib/modules /var/lib/dkms -xdev -path '/var/lib/dkms/mok.*' -prune \
			-o -printf 'file %y %m %p\n' 2>/dev/null
	} | LC_ALL=C sort >"$1"
}
snapshot "$work/before"

# README's install line, from the source directory as there (its
# linux-headers-$(uname -r) aside: the stand-ins above), by apt
(cd "$work/vmamerge-$ver" && apt-get install -y -o Dpkg::Use-Pty=0 ../vmamerge-dkms_*_all.deb ../vmamerge_*_amd64.deb) \
	>"$work/dpkg-i.log" 2>&1
check "apt-get install ../vmamerge-dkms_*_all.deb ../vmamerge_*_amd64.deb: exit 0" test $? = 0
grep -vE '^(\(Reading|Selecting|Preparing|Unpacking|Processing|Get:|Building dependency|Reading|Note,|Need to|After this)|^ *$' \
	"$work/dpkg-i.log" | show
# (vmamerge.ko, or .ko.xz where dkms compresses as the kernel's modules are)
ko=$(find "/lib/modules/$rel/updates/dkms" -name 'vmamerge.ko*' 2>/dev/null | head -n1)
ko=${ko:-/lib/modules/$rel/updates/dkms/vmamerge.ko}
check "postinst: dkms built and installed the module for $rel ($ko)" test -f "$ko"
[[ -f $ko || ! -f /var/lib/dkms/vmamerge/$ver/build/make.log ]] ||
	tail -n 25 "/var/lib/dkms/vmamerge/$ver/build/make.log" | show
check "  ... at version $ver (modinfo)" test "$(modinfo -F version "$ko" 2>/dev/null)" = "$ver"
dkms status 2>&1 | show
check "  ... dkms status: vmamerge/$ver, $rel: installed" \
	grep -q "^vmamerge/$ver, $rel, [^:]*: installed" <(dkms status 2>&1)
check "postinst: nothing built for the unlisted $unlisted" \
	test ! -e "/lib/modules/$unlisted/updates" -a ! -e "/var/lib/dkms/vmamerge/$ver/$unlisted"
out=$(/etc/kernel/postinst.d/vmamerge "$unlisted" 2>&1)
check "kernel hook for $unlisted: exit 0" test $? = 0
printf '%s\n' "$out" | show
check "  ... says it does not build the module for it" grep -q "not building the module for $unlisted" <<<"$out"
check "vmamerge --version says $ver" grep -q "$ver" <(vmamerge --version 2>&1)

# README's uninstall line
apt-get purge -y -o Dpkg::Use-Pty=0 vmamerge vmamerge-dkms >"$work/dpkg-purge.log" 2>&1
check "apt-get purge vmamerge vmamerge-dkms: exit 0" test $? = 0
grep -vE '^(\(Reading|Processing|Building dependency|Reading|After this)|^ *$' "$work/dpkg-purge.log" | show
check "prerm (dh_dkms): no module, no dkms tree, no source left" \
	test ! -e "$ko" -a ! -e /var/lib/dkms/vmamerge -a ! -e "/usr/src/vmamerge-$ver"
snapshot "$work/after"
if diff -U0 "$work/before" "$work/after" >"$work/purge.diff"; then
	ok "file list after the purge equals the one before the install ($(wc -l <"$work/before") lines)"
else
	nok "file list after the purge equals the one before the install"
	grep -v '^@@' "$work/purge.diff" | head -n 30 | show
fi
echo "DEB-INSTALL-END"
