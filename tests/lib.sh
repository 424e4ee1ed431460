# shellcheck shell=bash
# Shared helpers of the test scripts (sourced, not executed).
#
# Kernel header trees: tests/setup.sh downloads the pinned linux-headers-*
# and linux-kbuild-* packages of module/builds.list (never installs them) and
# unpacks them into one root per release, $VMAMERGE_CACHE/headers/<release>/;
# the tree to build against (KDIR) is usr/src/linux-headers-<release> there.
# Nothing uses /lib/modules/<release>/build of the host.

# kdir_of RELEASE: the unpacked header tree of RELEASE (it may not exist)
kdir_of() {
	printf '%s/headers/%s/usr/src/linux-headers-%s\n' \
		"${VMAMERGE_CACHE:-/var/cache/vmamerge}" "$1" "$1"
}

# kdir_ready RELEASE: is the unpacked header tree of RELEASE there?
kdir_ready() {
	[[ -f $(kdir_of "$1")/Makefile ]]
}

# kdir_missing_msg RELEASE: what to tell the user when it is not
kdir_missing_msg() {
	printf 'no kernel headers of %s in %s: run tests/setup.sh first\n' \
		"$1" "$(kdir_of "$1")"
}

# debug_release_of DEBIAN_VERSION: the release of the debug twin that
# tests/debug-kernel/build.sh builds from the same linux-source
# (6.12.117-1~deb12u1 -> 6.12.117-vmamerge-debug)
debug_release_of() {
	printf '%s-vmamerge-debug\n' "${1%%-*}"
}

# The validated builds: module/builds.list is the one list (make check,
# tests/setup.sh, the module, dkms, the CLI and the README read it).
builds_list() {
	printf '%s/module/builds.list\n' "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
}

# builds_of [TIER...]: "SERIES RELEASE DEBIAN-VERSION TIER" of each build of
# those tiers (default: full), in list order, restricted to the series of
# VMAMERGE_KERNELS when set.
builds_of() {
	local tiers=" ${*:-full} "
	awk -v tiers="$tiers" -v only=" ${VMAMERGE_KERNELS:-} " '
		/^[ \t]*(#|$)/ { next }
		index(tiers, " " $4 " ") == 0 { next }
		only != "  " && index(only, " " $1 " ") == 0 { next }
		{ print $1, $2, $3, $4 }' "$(builds_list)"
}

# uts_version_of RELEASE: the UTS version builds.list gives RELEASE
uts_version_of() {
	awk -v r="$1" '!/^[ \t]*#/ && $2 == r {
		sub(/^[ \t]*[^ \t]+[ \t]+[^ \t]+[ \t]+[^ \t]+[ \t]+[^ \t]+[ \t]+/, ""); print; exit }' \
		"$(builds_list)"
}
