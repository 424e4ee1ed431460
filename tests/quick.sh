#!/bin/bash
# Developer shortcut: build the module from this working tree for one
# release of the matrix (or a debug twin), boot it in QEMU and run a few
# guest commands - seconds instead of a whole `make check`.  Needs the
# caches of a previous `make check` (kernels, headers, initramfs tools).
#
#   bash tests/quick.sh RELEASE 'GUEST COMMANDS'
#   e.g. bash tests/quick.sh 6.12.117+deb12-amd64 'load; run t_renumber'
#
# QUICK_TAG=name keeps this run's work directory apart from others', so
# that several developers (or worktrees) can boot the same release at once;
# QUICK_TIMEOUT_S (default 1200) bounds the guest's run; QUICK_EXTRA="FILE..."
# copies more programs into the guest's /tests (e.g. a bench binary from
# $VMAMERGE_CACHE/bench/*/bin for a profile).
#
# The guest commands run in a shell that has run.sh's helpers: load,
# unload, run PROG ARGS (TAP through), wr VALUE FILE, tap RC NAME.  The
# output and the log path are printed; exit status 0 when the guest
# reported no failure.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=check.sh
source "$(dirname "${BASH_SOURCE[0]}")/check.sh"

rel=${1:?usage: $0 RELEASE 'GUEST COMMANDS'}
cmds=${2:?usage: $0 RELEASE 'GUEST COMMANDS'}
work=$cache/quick/${QUICK_TAG:+$QUICK_TAG-}$rel
kdir=$cache/headers/$rel/usr/src/linux-headers-$rel
guest_bin=$work/bin
build_dir() { echo "$work/src"; }

mkdir -p "$logdir" "$work"
# the tag keeps two quick runs started in the same second apart
log=$logdir/quick-${QUICK_TAG:+$QUICK_TAG-}$rel.log
# (a followed full-tier build and its twin as make check builds them:
# admitted by equivalence, the twin's list with the followed build's line)
stage_module_src "$work/src" "$rel"
mapfile -t adm < <(admission_env "$rel")
# (in the build root of the release's compiler: tests/lib.sh)
in_build_root "$(build_root_of "$rel")" make -s -C "$work/src" module KDIR="$kdir" "${adm[@]}" >"$work/build.log" 2>&1 ||
	{ tail -30 "$work/build.log"; exit 1; }
rm -rf "$guest_bin"
make -s -C "$repo/tests/guest" OUT="$guest_bin" >/dev/null
stage_guest "$rel" "$work/stage"
for f in ${QUICK_EXTRA:-}; do cp "$f" "$work/stage/tests/"; done
# run.sh's helpers without its main part: everything above "T0="
sed -n '1,/^T0=/p' "$repo/tests/guest/run.sh" | sed '$d' >"$work/stage/tests/run.sh"
cat >>"$work/stage/tests/run.sh" <<EOS
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
$cmds
echo "GUEST-RESULT: \$P passed, \$F failed"
[ "\$F" -eq 0 ]
EOS
chmod 755 "$work/stage/tests/run.sh"
gmods=zram
[[ $rel == *-vmamerge-* ]] && gmods=""	# a debug twin: everything built in
VMAMERGE_GUEST_MODULES=$gmods bash "$repo/tests/qemu/mkinitramfs.sh" "$rel" "$work/initrd.cpio.gz" "$work/stage"
set +e
bash "$repo/tests/qemu/run-guest.sh" "$rel" "$work/initrd.cpio.gz" "$log" "${QUICK_TIMEOUT_S:-1200}"
rc=$?
set -e
tr -d '\r' <"$log.results" | grep -av '^ok ' || true
echo "log: $log (run-guest exit $rc)"
grep -aq 'GUEST-RESULT: [0-9]* passed, 0 failed' "$log.results" && ((rc == 0))
