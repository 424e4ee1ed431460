#!/bin/bash
# mkroot.sh SUITE: the cached Debian root and local package repository of
# the lab test (tests/lab/lab.sh); prints the directory.
#
#   $VMAMERGE_CACHE/lab/<suite>-<key>/
#     root/        debootstrap --variant=minbase SUITE, systemd as init, the
#                  stock kernel of the suite installed with dpkg (so
#                  /boot/initrd.img-<release> exists and `uname -r` has its
#                  package), initrds made in the guest with MODULES=dep,
#                  an administrator `admin` (sudo) and the
#                  unprivileged `user`, the harness unit (vmlab.service)
#     repo/        the .debs an administrator fetches later with apt (dkms,
#                  linux-headers of the running kernel, the newer kernel of
#                  the upgrade step, their dependencies) and a Packages
#                  index: the guest has no network, its only apt source is
#                  `file:` this directory (on a second disk)
#     disk.img     root/ as an ext4 image (mkfs.ext4 -d: nothing is mounted
#                  on the host)
#     ok           written last; its presence means the above is complete
#
# key: a hash of the suite, the package set, the kernel and the recipe
# version below.  The downloads use the chroot's own apt (its own
# sources.list, lists and cache inside the root): the host's apt
# configuration is never read or changed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
# shellcheck source-path=SCRIPTDIR source=suites.sh
source "$here/suites.sh"

suite=${1:?usage: $0 SUITE}
lab_suite "$suite" || { echo "mkroot: unknown suite $suite" >&2; exit 2; }
recipe=4
key=$(printf '%s\n' "$recipe" "$suite" "$lab_rel" "$lab_kver" "$lab_upgrade" \
	"${lab_pkgs[*]}" "${lab_repo_pkgs[*]}" | sha256sum | cut -c1-12)
dir=$cache/lab/$suite-$key
if [[ -f $dir/ok ]]; then
	echo "$dir"
	exit 0
fi

log() { printf '[lab mkroot %s] %s\n' "$suite" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
[[ $(id -u) == 0 ]] || die "must run as root (debootstrap)"
command -v debootstrap >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >&2
kdeb=$cache/debs/linux-image-${lab_rel}_${lab_kver}_amd64.deb
[[ -f $kdeb ]] || die "$kdeb missing: run tests/setup.sh"

rm -rf "$dir"
mkdir -p "$dir"
root=$dir/root
t0=$SECONDS
log "debootstrap $suite (log: $dir/debootstrap.log)"
if ! debootstrap --variant=minbase --include="$(
	IFS=,
	echo "${lab_pkgs[*]}"
)" "$suite" "$root" "$lab_mirror" >"$dir/debootstrap.log" 2>&1; then
	tail -n 20 "$dir/debootstrap.log" >&2
	die "debootstrap failed"
fi
log "debootstrap: $((SECONDS - t0)) s"

# chroot CMD...: run CMD in the root, no daemons started, no host mounts.
inroot() {
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
		LANG=C.UTF-8 chroot "$root" "$@"
}
printf '%s\n' "${lab_sources[@]}" >"$root/etc/apt/sources.list"
cp /etc/resolv.conf "$root/etc/resolv.conf"
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
inroot apt-get update -qq

# The stock kernel, the same .deb as the busybox guests boot.
cp "$kdeb" "$root/tmp/"
inroot apt-get install -y -qq -o Dpkg::Use-Pty=0 "/tmp/${kdeb##*/}" >"$dir/kernel.log" 2>&1 ||
	{ tail -n 20 "$dir/kernel.log" >&2; die "installing $kdeb in the root failed"; }
rm -f "$root/tmp/${kdeb##*/}"
[[ -f $root/boot/initrd.img-$lab_rel ]] || die "no initrd.img-$lab_rel in the root"
# The initrds the guest itself makes later (the upgrade kernel) hold only
# what this machine boots from (MODULES=dep, a documented initramfs-tools
# setting): with Debian's MODULES=most, bookworm's initramfs-tools runs
# modinfo once per module, each decompressing a .ko.xz - 982 s of TCG for
# the 4228 modules of 6.12.95+deb12 (dpkg.log of the lab disk, 28 Nov
# 2026; trixie's initramfs-tools took 149 s for 7.3.4). Set after
# the install above: dep reads the running machine's root device, which
# in this chroot is the host's (the suite's own initrd keeps MODULES=most).
mkdir -p "$root/etc/initramfs-tools/conf.d"
echo MODULES=dep >"$root/etc/initramfs-tools/conf.d/vmlab.conf"

# The local repository: what `apt-get install dkms linux-headers-REL` and
# the upgrade will fetch, resolved by the root's apt as the guest's would,
# recommends included (apt's default).
mkdir -p "$dir/repo"
for req in "dkms linux-headers-$lab_rel" "${lab_repo_pkgs[@]}"; do
	# shellcheck disable=SC2086 # a list of package names
	inroot apt-get install -y -qq --download-only $req >>"$dir/repo.log" 2>&1 ||
		{ tail -n 20 "$dir/repo.log" >&2; die "apt-get --download-only $req failed"; }
	mv "$root"/var/cache/apt/archives/*.deb "$dir/repo/" 2>/dev/null || true
done
(cd "$dir/repo" && dpkg-scanpackages -m . /dev/null >Packages 2>/dev/null)
log "repository: $(grep -c '^Package:' "$dir/repo/Packages") packages, $(du -sh "$dir/repo" | cut -f1)"

# The guest's view: no network, one apt source.
echo "deb [trusted=yes] file:/srv/vmlab/repo ./" >"$root/etc/apt/sources.list"
inroot apt-get clean
rm -rf "$root"/var/lib/apt/lists/* "$root/usr/sbin/policy-rc.d"
: >"$root/etc/resolv.conf"
echo "vmlab-$suite" >"$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tvmlab-%s\n' "$suite" >"$root/etc/hosts"
echo 'LABEL=vmlab-root / ext4 errors=remount-ro 0 1' >"$root/etc/fstab"
inroot passwd -d root >/dev/null
inroot useradd -m -s /bin/bash -G sudo admin
inroot useradd -m -s /bin/bash user
echo 'admin ALL=(ALL) NOPASSWD: ALL' >"$root/etc/sudoers.d/admin"
chmod 440 "$root/etc/sudoers.d/admin"
# The harness: a unit that runs the phase script the host put on the second
# disk, its output on the second serial port (the results channel).
mkdir -p "$root/opt/vmlab"
install -m 755 "$here/guest-boot.sh" "$root/opt/vmlab/boot.sh"
cat >"$root/etc/systemd/system/vmlab.service" <<'EOF'
[Unit]
Description=vmamerge lab harness
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/opt/vmlab/boot.sh
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS1
[Install]
WantedBy=multi-user.target
EOF
ln -sf /etc/systemd/system/vmlab.service "$root/etc/systemd/system/multi-user.target.wants/vmlab.service"
# Nothing that would run by itself at a random time during a test.
for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer man-db.timer \
	dpkg-db-backup.timer systemd-tmpfiles-clean.timer; do
	ln -sf /dev/null "$root/etc/systemd/system/$u"
done
ln -sf /dev/null "$root/etc/systemd/system/getty@tty1.service"

log "disk image"
size=$(($(du -sm "$root" | cut -f1) + 3072))
mkfs.ext4 -q -L vmlab-root -d "$root" "$dir/disk.img" "${size}M" >&2 # stdout is the answer
echo "$suite $lab_rel $key $(date -u +%FT%TZ) $((SECONDS - t0))s" >"$dir/ok"
log "done in $((SECONDS - t0)) s: $dir"
echo "$dir"
