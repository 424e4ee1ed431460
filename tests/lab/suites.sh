# shellcheck shell=bash
# shellcheck disable=SC2034 # the variables are for the scripts that source this
# The lab guests (sourced by tests/lab/*.sh).  lab_suite SUITE sets:
#   lab_rel, lab_kver   the stock kernel the guest boots (a validated build;
#                       its .deb is in $VMAMERGE_CACHE/debs from tests/setup.sh)
#   lab_upgrade         the newer kernel of the upgrade step, not in the list
#                       (a real package of the suite's archive)
#   lab_upgrade_from    the release apt must take it (and linux-base) from
#   lab_upgrade_tier    what the upgrade kernel is to the module: "equivalent"
#                       (admitted by the equivalence check: loaded at boot,
#                       merging) or "refused" (the note, nothing built)
#   lab_unlist          a release the lab's vmamerge source leaves out of
#                       module/builds.list (it stands for a build Debian
#                       publishes after the release), or empty
#                       (apt-get install PKG/RELEASE), when not the default
#   lab_pkgs            debootstrap --include (minbase + these)
#   lab_repo_pkgs       further apt requests the local repository must serve
#                       (one request a word list; dkms and the headers of
#                       lab_rel always)
#   lab_sources         the root's sources.list while it is built
#   lab_install         how the guest installs vmamerge (README.md,
#                       "Install"): "make" (make install) or "deb" (the
#                       Debian packages, built in the guest with README's
#                       commands); one guest each;
#                       VMAMERGE_LAB_INSTALL=make|deb overrides
lab_mirror=http://deb.debian.org/debian

# lab_backports_kernel SUITE: the kernel release (e.g. 7.3.4+deb13-amd64)
# that SUITE's linux-image-amd64 depends on, from the private apt lists of
# tools/debian-apt.sh (updated here when older than six hours).
lab_backports_kernel() {
	local here ver dep
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	# shellcheck source-path=SCRIPTDIR source=../../tools/debian-apt.sh
	source "$here/../../tools/debian-apt.sh"
	papt_init
	papt_update 21600 >/dev/null 2>&1 # lists older than 6 h only
	ver=$(papt apt-cache madison linux-image-amd64 |
		awk -F' *[|] *' -v s="$1" '$3 ~ " "s"/" { print $2; exit }')
	[[ $ver ]] || { echo "lab: no linux-image-amd64 in $1" >&2; return 1; }
	dep=$(papt apt-cache depends "linux-image-amd64=$ver" |
		sed -n 's/^ *Depends: linux-image-\(.*-amd64\)$/\1/p' | head -n 1)
	[[ $dep ]] || { echo "lab: linux-image-amd64=$ver names no kernel" >&2; return 1; }
	echo "$dep"
}
lab_suite() {
	lab_upgrade_from= lab_unlist= lab_upgrade_tier=
	case $1 in
	bookworm)
		# The upgrade is a build Debian published after the vmamerge
		# release the machine has: 6.1.0-57, left out of the list of
		# that release's source (lab_unlist), from 6.1.0-56.  Its
		# kernel hook must admit it by equivalence (module/admit.sh),
		# so it boots with the module loaded and merging.
		lab_rel=6.1.0-56-amd64 lab_kver=6.1.192-2
		lab_upgrade=6.1.0-57-amd64
		lab_unlist=6.1.0-57-amd64
		lab_upgrade_tier=equivalent
		lab_install="make"
		lab_sources=("deb $lab_mirror bookworm main"
			"deb http://deb.debian.org/debian-security bookworm-security main"
			"deb $lab_mirror bookworm-updates main"
			"deb $lab_mirror bookworm-backports main")
		;;
	trixie)
		# a series without glue: the hook says so, nothing is built
		lab_upgrade_tier=refused
		# The upgrade is whatever kernel trixie-backports' metapackage
		# brings today (6.19.14 until November 2026, then 7.x: a
		# series the module does not support, Kbuild refuses it).
		# Backports drops old versions, so a fixed name stops
		# resolving; VMAMERGE_LAB_UPGRADE pins one.
		lab_rel=6.12.118+deb13-amd64 lab_kver=6.12.118-1
		lab_upgrade=${VMAMERGE_LAB_UPGRADE:-$(lab_backports_kernel trixie-backports)} ||
			return 1
		# and linux-base (>= 4.17~, needed by it) from backports, which
		# apt does not pick by itself (priority 100); only these - with
		# -t for the whole request apt also took linux-libc-dev 7.3.4
		# from there, which the kernel does not need
		lab_upgrade_from=trixie-backports
		lab_install="deb"
		lab_sources=("deb $lab_mirror trixie main"
			"deb http://deb.debian.org/debian-security trixie-security main"
			"deb $lab_mirror trixie-updates main"
			"deb $lab_mirror trixie-backports main")
		;;
	*) return 1 ;;
	esac
	# systemd as init, what the kernel package needs, the administrator's
	# tools; a compiler and make (a lab machine that builds modules has
	# them; dkms would pull them in anyway, this keeps the guest's part short).
	lab_pkgs=(systemd-sysv udev kmod initramfs-tools linux-base sudo procps
		gcc make libc6-dev xz-utils zstd)
	# what make install builds kfp with (README.md, "Install")
	[[ ${VMAMERGE_LAB_INSTALL:-$lab_install} != make ]] ||
		lab_pkgs+=(liblzma-dev libzstd-dev liblz4-dev libelf-dev libbpf-dev binutils-dev)
	local from=${lab_upgrade_from:+/$lab_upgrade_from}
	lab_repo_pkgs=("linux-image-$lab_upgrade$from linux-headers-$lab_upgrade$from${from:+ linux-base$from}")
	lab_install=${VMAMERGE_LAB_INSTALL:-$lab_install}
	case $lab_install in
	make) ;;
	# what README's `sudo apt-get build-dep ./` installs (debian/control)
	deb) lab_repo_pkgs+=("build-essential debhelper dh-dkms liblzma-dev libzstd-dev liblz4-dev libelf-dev libbpf-dev binutils-dev") ;;
	*) return 1 ;;
	esac
	return 0
}
