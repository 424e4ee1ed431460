#!/bin/bash
# prepare-workloads.sh DEST: what the workload benchmarks need in the guest,
# from Debian's archive (downloaded with apt, unpacked, never installed):
#   DEST/root/        files copied into the guest's root: tcc and its
#                     runtime (libc6, libc6-dev, linux-libc-dev: headers,
#                     crt files, the dynamic libc), the Lua 5.4 source
#                     (source package lua5.4) in /work/lua
#   DEST/libjemalloc.a  jemalloc 5.3 (libjemalloc-dev), for alloc-stress
# Downloads are kept in DEST/debs and DEST/src; a second run reuses them.
# The Lua source comes through a private deb-src list (apt's options
# Dir::Etc::sourcelist and Dir::State::Lists): the system's apt
# configuration is not touched.
set -euo pipefail

dest=${1:?usage: prepare-workloads.sh DEST}
debs=$dest/debs srcd=$dest/src root=$dest/root
mkdir -p "$debs" "$srcd"
pkgs=(tcc libc6 libc6-dev linux-libc-dev libjemalloc-dev)

# apt-get download writes into the current directory
need=()
for p in "${pkgs[@]}"; do
	compgen -G "$debs/${p}_*.deb" >/dev/null || need+=("$p")
done
if ((${#need[@]})); then
	echo "prepare-workloads: apt-get download ${need[*]}"
	(cd "$debs" && apt-get download "${need[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
fi
for p in "${pkgs[@]}"; do
	compgen -G "$debs/${p}_*.deb" >/dev/null || { echo "prepare-workloads: could not download $p" >&2; exit 1; }
done

if ! compgen -G "$srcd/lua5.4_*.orig.tar.*" >/dev/null; then
	echo "prepare-workloads: apt-get source --download-only lua5.4 (private deb-src list)"
	mkdir -p "$srcd/apt/lists/partial"
	line=$(grep -hE '^(deb|URIs:)' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null |
		grep -oE 'https?://[^ ]*debian/?' | grep -v security | head -n1 || true)
	mirror=${line:-http://deb.debian.org/debian}
	echo "deb-src $mirror bookworm main" >"$srcd/apt/sources.list"
	aptopt=(-o "Dir::Etc::sourcelist=$srcd/apt/sources.list" -o "Dir::Etc::sourceparts=/nonexistent"
		-o "Dir::State::Lists=$srcd/apt/lists")
	apt-get "${aptopt[@]}" update >/dev/null
	(cd "$srcd" && apt-get "${aptopt[@]}" source --download-only lua5.4 2>&1 |
		grep -v '^W: Download is performed unsandboxed' || true)
	compgen -G "$srcd/lua5.4_*.orig.tar.*" >/dev/null || { echo "prepare-workloads: no Lua source" >&2; exit 1; }
fi

rm -rf "$root" "$dest/x"
mkdir -p "$root" "$dest/x"
for p in tcc libc6 libc6-dev linux-libc-dev; do
	dpkg-deb -x "$(compgen -G "$debs/${p}_*.deb" | head -n1)" "$root"
done
# what a dynamically linked tcc and its output need, nothing more
rm -rf "$root/usr/share" "$root/usr/lib/x86_64-linux-gnu/gconv" "$root/usr/bin/i386-tcc" \
	"$root/sbin" "$root/usr/sbin" "$root/usr/libexec" "$root/etc"
find "$root/usr/lib/x86_64-linux-gnu" -maxdepth 1 -name '*.a' ! -name libc_nonshared.a -delete
find "$root/usr/bin" -mindepth 1 ! -name tcc -delete
dpkg-deb -x "$(compgen -G "$debs/libjemalloc-dev_*.deb" | head -n1)" "$dest/x"
cp "$dest/x/usr/lib/x86_64-linux-gnu/libjemalloc.a" "$dest/libjemalloc.a"
rm -rf "$dest/x"

mkdir -p "$root/work"
tar -C "$root/work" -xf "$(compgen -G "$srcd/lua5.4_*.orig.tar.*" | head -n1)"
mv "$root/work"/lua-* "$root/work/lua"
rm -rf "$root/work/lua/doc"
# versions, for the report
{
	for p in tcc libc6 libjemalloc-dev; do
		f=$(compgen -G "$debs/${p}_*.deb" | head -n1)
		echo "$p $(dpkg-deb -f "$f" Version)"
	done
	echo "lua5.4-source $(basename "$(compgen -G "$srcd/lua5.4_*.dsc" | head -n1)" .dsc | sed 's/^lua5.4_//')"
} >"$dest/versions"
du -sh "$root" | sed 's/^/prepare-workloads: guest files /'
