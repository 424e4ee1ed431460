#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# admit.sh KDIR OUT - may the module be built for the kernel of KDIR?
# admit.sh --release RELEASE - the same question, for the kernel hook
#                               (tools/kernel-postinst); nothing written
#
# The Makefile's "module" target (hence dkms) runs it before Kbuild.
#   - A build of module/builds.list: OUT is emptied; exit 0.
#   - Any other build: the equivalence check (docs/design.md, "Admitting
#     a build by equivalence").  `kfp check` fingerprints the build's own
#     image with the lists of each validated build's fingerprint
#     (module/fingerprints/*.kfp) and compares: every mirrored, replaced,
#     called or relied-on function, every struct layout and every config
#     option the module depends on, and the compiler.  Identical to one:
#     OUT gets the line
#       admitted SERIES RELEASE DEBIAN-VERSION REFERENCE BUILD-ID UTS-VERSION
#     (Kbuild adds it to the module's table, module/builds.awk); exit 0.
#     Otherwise, or when the check cannot run: why, on stderr; exit 1.
# It reads only what the machine has: the image (VMLINUZ, else
# /boot/vmlinuz-RELEASE, else /usr/lib/modules/RELEASE/vmlinuz) and the
# config (KCONFIG, else /boot/config-RELEASE, else
# /usr/lib/modules/RELEASE/config, else KDIR/.config); never the network.
# kfp: KFP, else the checkout's tools/kfp (built when missing), else the
# installed /usr/lib/vmamerge/kfp or /usr/local/lib/vmamerge/kfp.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "vmamerge: $*" >&2; }
usage() { say "usage: admit.sh KDIR OUT | admit.sh --release RELEASE"; exit 1; }

if [ "${1:-}" = --release ]; then
	rel=${2:-}
	[ -n "$rel" ] || usage
	kdir=/lib/modules/$rel/build out=
else
	kdir=${1:-}
	out=${2:-}
	[ -n "$kdir" ] && [ -n "$out" ] || usage
	rel=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$kdir/include/generated/utsrelease.h" 2>/dev/null)
	[ -n "$rel" ] || { say "cannot read the release of $kdir"; exit 1; }
fi
if awk -v series=all -v out=releases -f "$top/module/builds.awk" "$top/module/builds.list" |
	grep -qxF "$rel"; then
	[ -z "$out" ] || : >"$out"
	exit 0
fi

series=$(printf '%s\n' "$rel" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
if [ ! -d "$top/module/kernel-$series" ]; then
	say "kernel $rel is of a series vmamerge does not support ($(cd "$top/module" && ls -d kernel-* | sed 's/^kernel-//' | paste -sd, - | sed 's/,/, /g')): not building the module for it"
	exit 1
fi

first() { # the first of the paths that is a non-empty file
	for f; do
		[ -s "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}
image=${VMLINUZ:-}
[ -n "$image" ] || image=$(first "/boot/vmlinuz-$rel" "/usr/lib/modules/$rel/vmlinuz") || {
	say "kernel $rel is not a validated build, and its image is not here (/boot/vmlinuz-$rel, /usr/lib/modules/$rel/vmlinuz) to check it for equivalence: install linux-image-$rel, or name it with VMLINUZ=PATH"
	exit 1
}
config=${KCONFIG:-}
[ -n "$config" ] || config=$(first "/boot/config-$rel" "/usr/lib/modules/$rel/config" "$kdir/.config") || {
	say "kernel $rel: no config (/boot/config-$rel, $kdir/.config) to check it for equivalence"
	exit 1
}
# PREEMPT_RT (-rt-amd64): refused whatever the code comparison would say
# (docs/flavours.md).
if grep -q '^CONFIG_PREEMPT_RT=y' "$config"; then
	say "kernel $rel is a PREEMPT_RT kernel: vmamerge does not support them (their page-table, anon_vma, i_mmap and mmap locks are sleeping rt_mutex locks, transparent hugepages are off, and the merge code the module mirrors differs from every validated build): not building the module for it"
	exit 1
fi
kfp=${KFP:-}
if [ -z "$kfp" ] && [ -f "$top/tools/kfp/Makefile" ]; then
	if [ -x "$top/tools/kfp/kfp" ] || make -s -C "$top/tools/kfp" >/dev/null 2>&1; then
		kfp=$top/tools/kfp/kfp
	fi
fi
if [ -n "$kfp" ] && [ ! -x "$kfp" ]; then
	say "kernel $rel: kfp $kfp is not an executable: cannot check it for equivalence"
	exit 1
fi
[ -n "$kfp" ] || kfp=$(first /usr/lib/vmamerge/kfp /usr/local/lib/vmamerge/kfp) || {
	say "kernel $rel is not a validated build, and kfp, which checks it for equivalence, is not installed (install the vmamerge package, or 'sudo make install'; building it needs liblzma-dev libzstd-dev liblz4-dev libelf-dev libbpf-dev binutils-dev)"
	exit 1
}
# The references: the fingerprints of the full and smoke builds listed
# (a file of a build the list does not name is no reference).
set --
for r in $(awk '!/^[ \t]*(#|$)/ && ($4 == "full" || $4 == "smoke") { print $2 }' \
	"$top/module/builds.list"); do
	f=$top/module/fingerprints/$r.kfp
	[ -e "$f" ] && set -- "$@" "$f"
done
[ $# -gt 0 ] || { say "no fingerprints of listed builds in $top/module/fingerprints: cannot check $rel"; exit 1; }

res=$("$kfp" check "$image" --config "$config" --release "$rel" "$@")
rc=$?
if [ $rc -eq 2 ]; then
	say "kernel $rel: the equivalence check could not run (the kfp error above): not building"
	exit 1
fi
ref=$(printf '%s\n' "$res" | sed -n 's/^equivalent \([^ ]*\)$/\1/p')
if [ $rc -ne 0 ] || [ -z "$ref" ]; then
	near=$(printf '%s\n' "$res" | sed -n 's/^refused \([^ ]*\)$/\1/p')
	what=$(printf '%s\n' "$res" | awk -v n="$near" '$1 == "ref" && $2 == n && $3 == "differs" {
		for (i = 5; i <= NF; i++) printf "%s%s", (i > 5 ? " " : ""), $i }')
	say "kernel $rel is not a validated build and not equivalent to one: refused"
	[ -z "$what" ] || say "  it differs from the nearest validated build $near in: $what"
	say "  a port is needed: make port KVER=$rel in the vmamerge source (docs/testing.md, \"Porting to a new build\")"
	exit 1
fi
uts=$(printf '%s\n' "$res" | sed -n 's/^version //p')
bid=$(printf '%s\n' "$res" | sed -n 's/^build-id \([0-9a-f]*\)$/\1/p')
debver=$(printf '%s\n' "$uts" | sed -n 's/.*Debian \([^ ]*\).*/\1/p')
[ -n "$uts" ] && [ -n "$bid" ] && [ -n "$debver" ] || {
	say "kernel $rel: kfp check gave no UTS version, build id or Debian version: not building"
	exit 1
}
n=$(printf '%s\n' "$res" | awk -v r="$ref" '$1 == "ref" && $2 == r && $3 == "identical" {
	print $4 " functions, " $5 " structs, " $6 " config options" }')
say "kernel $rel is equivalent to the validated build $ref ($n identical; build id $bid)"
[ -z "$out" ] ||
	printf 'admitted %s %s %s %s %s %s\n' "$series" "$rel" "$debver" "$ref" "$bid" "$uts" >"$out"
