#!/bin/bash
# dkms-policy-test.sh - what dkms does with vmamerge on listed and unlisted
# kernels (docs/design.md, "dkms"), in a private dkms tree, without
# building anything: on a kernel of a series without glue, `dkms
# autoinstall` (what a kernel package's postinst runs) exits 0 and builds
# nothing, an explicit `dkms build` stops with BUILD_EXCLUSIVE (77), as it
# does for an unlisted build of a supported series that is not equivalent
# (dkms.conf runs module/admit.sh); the
# kernel hook (tools/kernel-postinst) always exits 0: for a listed kernel
# it calls `dkms install`, for an unlisted one whose image is equivalent
# to a listed build's too (module/admit.sh), for one without an image or
# with a changed one it prints why and does not call dkms.
# TAP-like; the last line "dkms-policy: N passed, N failed".
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# the list's builds (the validated ones), not make check's resolved matrix (tests/matrix.sh)
unset VMAMERGE_MATRIX
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$repo/tests/lib.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmamerge-dkms.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
np=0 nf=0
t() { # t DESCRIPTION CMD...: ok when CMD succeeds
	local d=$1
	shift
	if "$@"; then np=$((np + 1)); echo "ok - $d"; else nf=$((nf + 1)); echo "not ok - $d"; fi
}
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$repo/dkms.conf")
src=$tmp/src/vmamerge-$ver
mkdir -p "$src" "$tmp/tree"
cp -a "$repo/Kbuild" "$repo/Makefile" "$repo/dkms.conf" "$repo/module" "$src/"
listed=$(builds_of full | awk 'NR == 1 { print $2 }')
unlisted=7.3.99+deb13-amd64	# a series without glue
noimage=6.12.99+deb13-amd64	# a series with glue, no image here
kdir=$(kdir_of "$listed")
dk=(dkms --dkmstree "$tmp/tree" --sourcetree "$tmp/src")

"${dk[@]}" add -m vmamerge -v "$ver" >"$tmp/add.log" 2>&1
t "dkms add" [ $? = 0 ]
if kdir_ready "$listed"; then
	KDIR=$kdir "${dk[@]}" autoinstall --kernelsourcedir "$kdir" -k "$unlisted" >"$tmp/auto.log" 2>&1
	t "dkms autoinstall -k $unlisted (no glue): exit 0" [ $? = 0 ]
	t "  ... built nothing" [ ! -e "$tmp/tree/vmamerge/$ver/$unlisted" ]
	KDIR=$kdir "${dk[@]}" build --kernelsourcedir "$kdir" -m vmamerge -v "$ver" -k "$unlisted" >"$tmp/build.log" 2>&1
	t "dkms build -k $unlisted (no glue): BUILD_EXCLUSIVE, exit 77" [ $? = 77 ]
	t "  ... built nothing" [ ! -e "$tmp/tree/vmamerge/$ver/$unlisted/x86_64/module" ]
	KDIR=$kdir "${dk[@]}" build --kernelsourcedir "$kdir" -m vmamerge -v "$ver" -k "$noimage" >"$tmp/build.log" 2>&1
	t "dkms build -k $noimage (unlisted, no image to check): BUILD_EXCLUSIVE, exit 77" [ $? = 77 ]
	t "  ... says why (dkms.conf runs the equivalence check)" grep -q "its image is not here" "$tmp/build.log"
else
	echo "ok - dkms autoinstall/build on an unlisted kernel # SKIP $(kdir_missing_msg "$listed")"
fi
hook() { VMAMERGE_SRC=$src VMAMERGE_DKMS="echo CALLED dkms" KFP=$repo/tools/kfp/kfp \
	sh "$repo/tools/kernel-postinst" "$@"; }
out=$(hook "$unlisted" 2>"$tmp/hook.err")
t "kernel hook, $unlisted (no glue): exit 0" [ $? = 0 ]
t "  ... does not call dkms" [ -z "$out" ]
t "  ... says the series is not supported" grep -q "series vmamerge does not support" "$tmp/hook.err"
out=$(hook "$noimage" 2>"$tmp/hook.err")
t "kernel hook, $noimage (unlisted, no image): exit 0" [ $? = 0 ]
t "  ... does not call dkms" [ -z "$out" ]
t "  ... says the image is missing and what to install" grep -q "install linux-image-$noimage" "$tmp/hook.err"
out=$(hook "$listed" 2>/dev/null)
t "kernel hook, listed $listed: exit 0" [ $? = 0 ]
t "  ... calls dkms install" [ "$out" = "CALLED dkms install vmamerge/$ver -k $listed" ]
# an equivalent build: a smoke build left out of the source's list
eq=$(builds_of smoke | awk -v s="${listed%%.[0-9]-*}" 'NR == 1 { print $2 }')
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
boot=$cache/kernels/$eq/boot
if [[ -n $eq && -s $boot/vmlinuz-$eq && -x $repo/tools/kfp/kfp ]]; then
	awk -v r="$eq" '$2 != r' "$repo/module/builds.list" >"$src/module/builds.list"
	out=$(VMLINUZ=$boot/vmlinuz-$eq KCONFIG=$boot/config-$eq hook "$eq" 2>"$tmp/hook.err")
	t "kernel hook, $eq left out of the list: exit 0" [ $? = 0 ]
	t "  ... says it is equivalent to a validated build" \
		grep -q "kernel $eq is equivalent to the validated build " "$tmp/hook.err"
	t "  ... calls dkms install" [ "$out" = "CALLED dkms install vmamerge/$ver -k $eq" ]
	cp "$repo/module/builds.list" "$src/module/builds.list"
else
	echo "ok - kernel hook on an equivalent build # SKIP no smoke build image or tools/kfp/kfp"
fi
echo "dkms-policy: $np passed, $nf failed"
((nf == 0))
