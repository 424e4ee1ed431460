#!/bin/bash
# install-qemu.sh: QEMU from bookworm-backports for the guests, unpacked into
# the cache, never installed (run as root; tests/setup.sh calls it).
#
# Debian 12's QEMU 7.2 oopsed guests in livepatch transitions under
# multi-threaded TCG (docs/testing.md, "Two vCPUs"); the backport
# (QEMU $series.x) does not.  The host's apt configuration is not touched: a
# private sources.list (bookworm + bookworm-security + bookworm-backports),
# lists and archive directories under $VMAMERGE_CACHE/qemu/apt, passed to apt
# with -o Dir::... options.  `apt-get -s install` of the backport against the
# host's dpkg status names exactly the packages the host lacks at the needed
# versions (qemu-system-x86, -common, -data, seabios; libraries too, if a
# later backport needs newer ones); those are downloaded and unpacked with
# dpkg-deb -x into
#
#   $VMAMERGE_CACHE/qemu/<version>/root/                 the unpacked packages
#   $VMAMERGE_CACHE/qemu/<version>/qemu-system-x86_64    wrapper: -L for the
#       firmware and data, QEMU_MODULE_DIR, LD_LIBRARY_PATH if libraries were
#       unpacked
#   $VMAMERGE_CACHE/qemu/current -> <version>            what run-guest.sh uses
#
# (<version> without the epoch: a ':' would end an LD_LIBRARY_PATH entry.)
# Idempotent: with a working current/ of the wanted series it does not touch
# apt and returns at once; VMAMERGE_APT_UPDATE=1 looks for a newer backport.
# Prints the wrapper's path on its last line.
set -euo pipefail

series=10.0 # the QEMU series validated for the guests (docs/testing.md)
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
top=$cache/qemu
aptd=$top/apt

log() { printf '[install-qemu] %s\n' "$*" >&2; }
die() { printf '[install-qemu] ERROR: %s\n' "$*" >&2; exit 1; }

# works WRAPPER: it runs and reports the wanted series
works() {
	[[ -x $1 ]] && "$1" --version 2>/dev/null | head -n1 | grep -q "version $series\."
}

if [[ ${VMAMERGE_APT_UPDATE:-0} != 1 ]] && works "$top/current/qemu-system-x86_64"; then
	log "cached: $("$top/current/qemu-system-x86_64" --version | head -n1)"
	echo "$top/current/qemu-system-x86_64"
	exit 0
fi
[[ $(id -u) -eq 0 ]] || die "must run as root (writes $top, runs apt-get)"

mkdir -p "$aptd/lists/partial" "$aptd/archives/partial"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
cat >"$aptd/sources.list" <<EOF
deb [signed-by=$keyring] http://deb.debian.org/debian bookworm main
deb [signed-by=$keyring] http://deb.debian.org/debian-security bookworm-security main
deb [signed-by=$keyring] http://deb.debian.org/debian bookworm-backports main
EOF
# Dir::Cache::pkgcache= and srcpkgcache=: no binary caches written into the
# host's /var/cache/apt for these lists.
apt_opts=(-o "Dir::Etc::sourcelist=$aptd/sources.list" -o Dir::Etc::sourceparts=-
	-o "Dir::State::Lists=$aptd/lists" -o "Dir::Cache::archives=$aptd/archives"
	-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o APT::Get::List-Cleanup=0)

log "apt-get update (private lists in $aptd)"
apt-get "${apt_opts[@]}" update -qq >/dev/null

# The newest qemu-system-x86 of the series in bookworm-backports.
ver=$(apt-cache "${apt_opts[@]}" madison qemu-system-x86 |
	awk -F' *[|] *' -v s="$series" '$3 ~ /bookworm-backports/ {
		v = $2; sub(/^[0-9]+:/, "", v); if (index(v, s ".") == 1) { print $2; exit } }')
[[ -n $ver ]] || die "no qemu-system-x86 $series.x in bookworm-backports; validate a newer series (docs/testing.md) and change \$series in $0"
dirver=${ver#*:}
dest=$top/$dirver

if ! works "$dest/qemu-system-x86_64"; then
	# What the host lacks for the backport, at the versions it needs.
	mapfile -t pkgs < <(apt-get "${apt_opts[@]}" -s install --no-install-recommends -t bookworm-backports \
		"qemu-system-x86=$ver" 2>/dev/null |
		sed -nE 's/^Inst ([^ ]+) (\[[^]]*\] )?\(([^ ]+) .*/\1=\3/p')
	printf '%s\n' "${pkgs[@]}" | grep -q "^qemu-system-x86=" ||
		die "apt-get -s install qemu-system-x86=$ver: cannot resolve (${pkgs[*]:-nothing to install})"
	log "download: ${pkgs[*]}"
	tmp=$top/.unpack-$dirver
	rm -rf "$tmp"
	mkdir -p "$tmp/debs" "$tmp/root"
	# apt-get download runs as _apt when it can; keep the dir writable for it.
	chown _apt "$tmp/debs" 2>/dev/null || true
	(cd "$tmp/debs" && apt-get "${apt_opts[@]}" download -q=2 "${pkgs[@]}") 2>&1 |
		{ grep -v 'Download is performed unsandboxed' || true; } >&2 ||
		die "apt-get download ${pkgs[*]} failed"
	(($(compgen -G "$tmp/debs/*.deb" | wc -l) == ${#pkgs[@]})) ||
		die "apt-get download ${pkgs[*]} did not produce ${#pkgs[@]} .debs"
	for deb in "$tmp/debs"/*.deb; do
		dpkg-deb -x "$deb" "$tmp/root"
	done
	rm -rf "$tmp/debs"
	r=$dest/root # its final place: the wrapper names it
	bin=$tmp/root/usr/bin/qemu-system-x86_64
	[[ -x $bin ]] || die "no usr/bin/qemu-system-x86_64 in ${pkgs[*]}"
	# Libraries of the host's Debian are used unless a package of the list
	# brought its own (a later backport might need newer ones).
	libs=
	for d in lib/x86_64-linux-gnu usr/lib/x86_64-linux-gnu; do
		compgen -G "$tmp/root/$d/*.so*" >/dev/null && libs+=${libs:+:}$r/$d
	done
	# -L: firmware and data dirs of the unpacked packages first (bios.bin
	# comes from seabios, linuxboot_dma.bin from qemu-system-data).
	{
		echo '#!/bin/bash'
		echo "# QEMU $ver from bookworm-backports, unpacked by tests/qemu/install-qemu.sh"
		printf 'export QEMU_MODULE_DIR=%q\n' "$r/usr/lib/x86_64-linux-gnu/qemu"
		# shellcheck disable=SC2016 # $LD_LIBRARY_PATH: the wrapper's
		[[ -z $libs ]] || printf 'export LD_LIBRARY_PATH=%q${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\n' "$libs"
		printf 'exec %q -L %q -L %q "$@"\n' "$r/usr/bin/qemu-system-x86_64" \
			"$r/usr/share/qemu" "$r/usr/share/seabios"
	} >"$tmp/qemu-system-x86_64"
	chmod 755 "$tmp/qemu-system-x86_64"
	printf '%s\n' "${pkgs[@]}" >"$tmp/packages"
	rm -rf "$dest"
	mv "$tmp" "$dest"
	works "$dest/qemu-system-x86_64" || die "$dest/qemu-system-x86_64 --version does not report QEMU $series"
fi
ln -sfn "$dirver" "$top/current"
log "$("$top/current/qemu-system-x86_64" --version | head -n1) in $dest"
echo "$top/current/qemu-system-x86_64"
