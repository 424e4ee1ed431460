#!/bin/bash
# tests/lab/lab.sh SUITE: the end-to-end lab test on a real Debian system
# The cached root of tests/lab/mkroot.sh boots under QEMU (TCG,
# one vCPU, no network) with systemd as init, four times - the host plays
# the boot loader and picks kernel and initrd from the guest's own /boot:
#   install   validated kernel: prerequisites with apt from the local
#             repository, README's install commands, a failing install
#   use       validated kernel: boot-time load and defaults, CLI, upgrade
#   upgraded  the newer unvalidated kernel the upgrade installed
#   back      validated kernel: uninstall, file lists before/after
# tests/lab/guest.sh is the guest's side.  Prints the guest's TAP lines
# as "ok - lab SUITE PHASE: ..." and exits 1 if any failed.
#
# Logs: $VMAMERGE_CACHE/lab/run-SUITE/ (console-PHASE.log: kernel and
# systemd; results-PHASE.log: the transcript).  The disk is a fresh copy
# of the cached image every run.
#
# Environment: VMAMERGE_CACHE, VMAMERGE_LAB_TIMEOUT (seconds per boot,
# default 3600), VMAMERGE_LAB_PHASES (default "install use upgraded back"),
# VMAMERGE_LAB_INSTALL (make|deb: how the guest installs; suites.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
# shellcheck source-path=SCRIPTDIR source=suites.sh
source "$here/suites.sh"
suite=${1:?usage: $0 SUITE}
lab_suite "$suite" || { echo "lab: unknown suite $suite (or VMAMERGE_LAB_INSTALL)" >&2; exit 2; }
timeout_s=${VMAMERGE_LAB_TIMEOUT:-3600}
phases=${VMAMERGE_LAB_PHASES:-install use upgraded back}
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$repo/dkms.conf")

fails=0
say() { printf '# lab %s: %s\n' "$suite" "$*"; }
result() { # ok|not ok, DESC
	printf '%s - lab %s %s\n' "$1" "$suite" "$2"
	[[ $1 == ok ]] || fails=$((fails + 1))
}

t0=$SECONDS
dir=$(bash "$here/mkroot.sh" "$suite")
say "root $dir ($((SECONDS - t0)) s); installs with: $lab_install"
work=$cache/lab/run-$suite
rm -rf "$work"
mkdir -p "$work/h"
cp --sparse=always "$dir/disk.img" "$work/disk.img"

# The harness disk: the local repository, the release tarball, the guest
# scripts.
cp -al "$dir/repo" "$work/h/repo" 2>/dev/null || cp -a "$dir/repo" "$work/h/repo"
cp "$here/guest.sh" "$here/realloc-loop.c" "$work/h/"
echo 'exec bash /srv/vmlab/guest.sh' >"$work/h/phase.sh"
printf 'VER=%s\nREL=%s\nNEW=%s\nINSTALL=%s\nNEWTIER=%s\n' "$ver" "$lab_rel" "$lab_upgrade" \
	"$lab_install" "$lab_upgrade_tier" >"$work/h/lab.env"
# A release tarball: the tracked files as they are in the working tree
# (or, unpacked from a tarball already, everything), no .git.
if git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$repo" ls-files -z | (cd "$repo" && tar --null -T - \
		--transform "s,^,vmamerge-$ver/," -czf "$work/h/vmamerge-$ver.tar.gz")
else
	tar -C "$(dirname "$repo")" --exclude=.git --transform "s,^$(basename "$repo"),vmamerge-$ver," \
		-czf "$work/h/vmamerge-$ver.tar.gz" "$(basename "$repo")"
fi
# A build Debian publishes after the release: out of the tarball's list.
if [[ -n $lab_unlist ]]; then
	mkdir "$work/t"
	tar -xzf "$work/h/vmamerge-$ver.tar.gz" -C "$work/t"
	awk -v r="$lab_unlist" '$2 != r' "$repo/module/builds.list" >"$work/t/vmamerge-$ver/module/builds.list"
	tar -C "$work/t" -czf "$work/h/vmamerge-$ver.tar.gz" "vmamerge-$ver"
	rm -rf "$work/t"
	say "the lab's source leaves $lab_unlist out of module/builds.list"
fi
mkfs.ext4 -q -L vmlab -d "$work/h" "$work/harness.img" "$(($(du -sm "$work/h" | cut -f1) + 64))M" >/dev/null

# boot PHASE RELEASE: boot the disk with the kernel RELEASE from its /boot
boot() {
	local phase=$1 rel=$2 con=$work/console-$1.log res=$work/results-$1.log t=$SECONDS rc line \
		wall user sys
	: >"$res"
	for f in "vmlinuz-$rel" "initrd.img-$rel"; do
		debugfs -R "dump -p /boot/$f $work/$f" "$work/disk.img" >/dev/null 2>&1
		if [[ ! -s $work/$f ]]; then
			result "not ok" "$phase: /boot/$f in the guest"
			return 1
		fi
	done
	say "boot $phase ($rel), log $res"
	set +e
	# (the CPU time says what the phase costs on an idle machine)
	local TIMEFORMAT="%R %U %S"
	{ time timeout -k 10 "$timeout_s" qemu-system-x86_64 -nodefaults -no-user-config \
		-accel tcg -smp 1 -cpu max,la57=off -m 2G -display none -monitor none -no-reboot \
		-serial "file:$con" -serial "file:$res" \
		-kernel "$work/vmlinuz-$rel" -initrd "$work/initrd.img-$rel" \
		-append "root=/dev/vda ro console=ttyS0,115200 quiet loglevel=4 panic=-1 vmlab.phase=$phase" \
		-drive "file=$work/disk.img,format=raw,if=virtio" \
		-drive "file=$work/harness.img,format=raw,if=virtio,readonly=on" \
		>"$work/qemu-$phase.stderr" 2>&1; } 2>"$work/time-$phase"
	rc=$?
	set -e
	read -r wall user sys <"$work/time-$phase" || true
	say "phase $phase: ${wall:-?} s wall, QEMU's CPU ${user:-?} s user + ${sys:-?} s sys"
	while IFS= read -r line; do
		line=${line%$'\r'}
		case $line in
		"ok - "*) result ok "$phase: ${line#ok - }" ;;
		"not ok - "*) result "not ok" "$phase: ${line#not ok - }" ;;
		esac
	done <"$res"
	if ((rc != 0)); then
		result "not ok" "$phase: QEMU exit status $rc (124: timeout after $timeout_s s)"
		tail -n 20 "$con" | tr -d '\r' | sed 's/^/#   console| /'
	fi
	if grep -aq "^LAB-PHASE-END $phase" "$res"; then
		result ok "$phase: guest finished the phase ($((SECONDS - t)) s)"
	else
		result "not ok" "$phase: guest finished the phase ($((SECONDS - t)) s)"
		return 1
	fi
}

for p in $phases; do
	case $p in
	upgraded) k=$lab_upgrade ;;
	*) k=$lab_rel ;;
	esac
	boot "$p" "$k" || break
done
say "$fails failed, $((SECONDS - t0)) s in all"
((fails == 0))
