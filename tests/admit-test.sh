#!/bin/bash
# admit-test.sh - the equivalence check of unlisted builds (module/admit.sh,
# tools/kfp check) on real Debian images, on the host (nothing built or
# booted; the admitted module's build and boot are check.sh's
# step_build_unlisted and the smoke set).  What a user's machine has is
# staged as files: the image and config of each build, the module source
# with its list edited.
#   - a listed build left out of the list is admitted, equivalent to another
#     listed build, with its own build id;
#   - changed code is refused with the functions named: 6.1.0-54 (upstream
#     6.1.190, downloaded with the private apt configuration into
#     $VMAMERGE_CACHE/kfp/) and 6.12.118+deb13 left out of the list;
#   - every kind of bad input is a refusal naming what is wrong, never an
#     admission: a missing image, a config of another build or with other
#     options, a file that is
#     not a config, a truncated fingerprint, a fingerprint with a changed
#     hash, one of another format version, no fingerprints, no kfp.
# TAP-like; the last line "admit-test: N passed, N failed".
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
kfp=$repo/tools/kfp/kfp
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmamerge-admit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
np=0 nf=0
t() { # t DESCRIPTION CMD...: ok when CMD succeeds
	local d=$1
	shift
	if "$@"; then np=$((np + 1)); echo "ok - $d"; else nf=$((nf + 1)); echo "not ok - $d"; sed 's/^/# /' "$tmp/err" | head -8; fi
}
skip() { np=$((np + 1)); echo "ok - $* # SKIP"; }

[[ -x $kfp ]] || make -s -C "$repo/tools/kfp" >/dev/null || { echo "not ok - build tools/kfp"; exit 1; }
# stage SRC: the module source as dkms has it (module/ only matters)
stage() {
	rm -rf "$1"
	mkdir -p "$1"
	cp -a "$repo/module" "$1/"
}
# admit SRC RELEASE [IMAGE [CONFIG]]: admit.sh --release, stderr in $tmp/err
admit() {
	local boot=$cache/kernels/$2/boot
	[[ -d $boot ]] || boot=$cache/kfp/$2/boot
	VMLINUZ=${3:-$boot/vmlinuz-$2} KCONFIG=${4:-$boot/config-$2} KFP=${KFP_OVERRIDE:-$kfp} \
		sh "$1/module/admit.sh" --release "$2" 2>"$tmp/err"
}
unlist() { awk -v r="$2" '$2 != r' "$repo/module/builds.list" >"$1/module/builds.list"; }
has() { grep -qF -- "$1" "$tmp/err"; }

# ---- admitted ----
src=$tmp/eq
stage "$src"
eq=6.1.0-56-amd64
unlist "$src" "$eq"
if [[ -s $cache/kernels/$eq/boot/vmlinuz-$eq ]]; then
	bid=$("$kfp" fingerprint "$cache/kernels/$eq/boot/vmlinuz-$eq" --functions <(echo copy_vma) \
		--structs <(echo page) 2>/dev/null | sed -n 's/^build-id //p')
	t0=$EPOCHREALTIME
	admit "$src" "$eq"
	rc=$?
	echo "# admission of $eq: $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
	t "$eq left out of the list: admitted (exit 0)" [ $rc = 0 ]
	t "  ... equivalent to 6.1.0-57-amd64, every function, struct and option counted" \
		grep -qE "kernel $eq is equivalent to the validated build 6\.1\.0-57-amd64 \([0-9]+ functions, [0-9]+ structs, [0-9]+ config options identical; build id $bid\)" "$tmp/err"
	VMLINUZ=$cache/kernels/$eq/boot/vmlinuz-$eq KCONFIG=$cache/kernels/$eq/boot/config-$eq KFP=$kfp \
		sh "$src/module/admit.sh" "$(dirname "$cache/headers/$eq/usr/src/linux-headers-$eq/x")" "$tmp/admitted.list" 2>"$tmp/err"
	t "  ... the build's record: admitted 6.1 $eq 6.1.192-2 6.1.0-57-amd64 $bid <uts>" \
		grep -qxF "admitted 6.1 $eq 6.1.192-2 6.1.0-57-amd64 $bid #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-11-16)" "$tmp/admitted.list"

	# ---- bad input: each a refusal that names it ----
	admit "$src" "$eq" /nonexistent/vmlinuz
	t "missing image: refused, kfp's reason passed on" bash -c '[ $0 = 1 ] && grep -q "/nonexistent/vmlinuz" "$1" && grep -q "could not run" "$1"' $? "$tmp/err"
	admit "$src" "$eq" "" "$cache/kernels/6.12.117+deb12-amd64/boot/config-6.12.117+deb12-amd64"
	t "config of another build: refused, the compiler mismatch named" bash -c '[ $0 = 1 ] && grep -q "is not the compiler of" "$1"' $? "$tmp/err"
	# the same compiler text, other options: the options named
	sed -e 's/^CONFIG_NUMA=y/# CONFIG_NUMA is not set/' -e 's/^CONFIG_KSM=y/# CONFIG_KSM is not set/' \
		"$cache/kernels/$eq/boot/config-$eq" >"$tmp/config"
	admit "$src" "$eq" "" "$tmp/config"
	t "config with other options: refused, the options named" bash -c '[ $0 = 1 ] && grep -q "option:CONFIG_KSM option:CONFIG_NUMA" "$1"' $? "$tmp/err"
	echo "not a config" >"$tmp/junk"
	admit "$src" "$eq" "" "$tmp/junk"
	t "a file that is not a config: refused" bash -c '[ $0 = 1 ] && grep -q "not a kernel config" "$1"' $? "$tmp/err"
	f=$src/module/fingerprints/6.1.0-57-amd64.kfp
	cp "$f" "$tmp/fp.keep"
	head -c 2000 "$tmp/fp.keep" >"$f"
	admit "$src" "$eq"
	t "truncated fingerprint: refused, the file named" bash -c '[ $0 = 1 ] && grep -q "6.1.0-57-amd64.kfp.*truncated" "$1"' $? "$tmp/err"
	sed -E '0,/^func copy_vma /s/^(func copy_vma [0-9]+ )./\1z/' "$tmp/fp.keep" | sed -E '0,/^func copy_vma /s/^(func copy_vma [0-9]+ )z/\10/' >"$f"
	if cmp -s "$f" "$tmp/fp.keep"; then sed -i -E '0,/^func copy_vma /s/^(func copy_vma [0-9]+ )0/\11/' "$f"; fi
	admit "$src" "$eq"
	t "fingerprint with a changed hash: refused, the function named" bash -c '[ $0 = 1 ] && grep -q "func:copy_vma" "$1"' $? "$tmp/err"
	sed '1s/.*/kfp-fingerprint 1/' "$tmp/fp.keep" >"$f"
	admit "$src" "$eq"
	t "fingerprint of another format version: refused, the version named" bash -c '[ $0 = 1 ] && grep -q "fingerprint format 1; this kfp reads format 2" "$1"' $? "$tmp/err"
	mv "$src/module/fingerprints" "$tmp/fps"
	mkdir "$src/module/fingerprints"
	admit "$src" "$eq"
	t "no fingerprints: refused" bash -c '[ $0 = 1 ] && grep -q "no fingerprints of listed builds" "$1"' $? "$tmp/err"
	rm -rf "$src/module/fingerprints"
	mv "$tmp/fps" "$src/module/fingerprints"
	cp "$tmp/fp.keep" "$f"
	KFP_OVERRIDE=/nonexistent/kfp admit "$src" "$eq"
	t "no kfp: refused, saying so" bash -c '[ $0 = 1 ] && grep -q "kfp /nonexistent/kfp is not an executable" "$1"' $? "$tmp/err"
else
	skip "admission of $eq: no image in $cache/kernels (tests/setup.sh)"
fi

# ---- changed code ----
old=6.1.0-54-amd64 oldver=6.1.190-1
if [[ ! -s $cache/kfp/$old/boot/vmlinuz-$old ]]; then
	(
		cd "$repo" || exit 1
		# shellcheck source=lib.sh
		source tests/lib.sh && source tools/debian-apt.sh && papt_update 21600 &&
			papt_download "linux-image-$old=$oldver" &&
			rm -rf "$cache/kfp/$old.tmp" && mkdir -p "$cache/kfp/$old.tmp" &&
			dpkg-deb --fsys-tarfile "$cache/debs/linux-image-${old}_${oldver}_amd64.deb" |
			tar -x -C "$cache/kfp/$old.tmp" ./boot && rm -rf "$cache/kfp/$old" &&
			mv "$cache/kfp/$old.tmp" "$cache/kfp/$old"
	) >"$tmp/fetch.log" 2>&1 || sed 's/^/# /' "$tmp/fetch.log" | tail -5
fi
if [[ -s $cache/kfp/$old/boot/vmlinuz-$old ]]; then
	stage "$tmp/old"
	admit "$tmp/old" "$old"
	t "$old (upstream 6.1.190): refused (exit 1)" [ $? = 1 ]
	t "  ... naming the changed functions and the grown mm_struct" \
		bash -c 'grep -q "differs from the nearest validated build 6.1.0-5[67]-amd64 in:.*func:__anon_vma_prepare.*func:copy_vma" "$0" && grep -q "struct:mm_struct" "$0"' "$tmp/err"
	t "  ... and the port command" has "make port KVER=$old"
else
	skip "$old refused: its image could not be downloaded"
fi
new=6.12.118+deb13-amd64
if [[ -s $cache/kernels/$new/boot/vmlinuz-$new ]]; then
	stage "$tmp/new"
	unlist "$tmp/new" "$new"
	admit "$tmp/new" "$new"
	t "$new left out of the list: refused, copy_vma named" bash -c '[ $0 = 1 ] && grep -q "in: func:copy_vma$" "$1"' $? "$tmp/err"
else
	skip "$new refused: no image"
fi
echo "admit-test: $np passed, $nf failed"
((nf == 0))
