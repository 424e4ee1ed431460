#!/bin/bash
# kfp-test.sh - tests of tools/kfp (fingerprints of Debian kernel images).
#
# TAP-style: "ok - ..." / "not ok - ..." lines, "# ..." comments, a plan and
# an "N passed, N failed" line last; exit 0 only if every test passed.
# Reads the images in $VMAMERGE_CACHE/kernels/REL/boot (tests/setup.sh puts
# them there) and $VMAMERGE_CACHE/kfp/REL/boot (older 6.1 images this test
# downloads with the private apt configuration unless KFP_TEST_OFFLINE=1),
# the port manifests from tools/mirror-diff.sh (needs the linux-source
# trees in $VMAMERGE_CACHE/src), and, as an independent check of the
# symbols, the /proc/kallsyms tables in $VMAMERGE_CACHE/symbols.
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
kfp=$repo/tools/kfp/kfp
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kfp-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
skip() { passed=$((passed + 1)); echo "ok - $* # SKIP"; }
note() { echo "# $*"; }
check() { # DESCRIPTION CMD...: ok when CMD succeeds
	local d=$1
	shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}

image_of() { # RELEASE: its vmlinuz, or nothing
	local d
	for d in "$cache/kernels/$1/boot" "$cache/kfp/$1/boot"; do
		[[ -s $d/vmlinuz-$1 ]] && { echo "$d/vmlinuz-$1"; return 0; }
	done
	return 1
}
config_of() { echo "$(dirname "$(image_of "$1")")/config-$1"; }

# fetch_image RELEASE VERSION: the linux-image .deb into $cache/debs,
# its /boot into $cache/kfp/RELEASE
fetch_image() {
	local rel=$1 ver=$2 deb
	image_of "$rel" >/dev/null && return 0
	[[ ${KFP_TEST_OFFLINE:-0} == 1 ]] && return 1
	(
		cd "$repo" || exit 1
		# shellcheck source=/dev/null
		source tests/lib.sh && source tools/debian-apt.sh &&
			papt_update && papt_download "linux-image-$rel=$ver"
	) >"$tmp/fetch.log" 2>&1 || { sed 's/^/# /' "$tmp/fetch.log"; return 1; }
	deb=$(ls "$cache/debs/linux-image-${rel}_${ver}_amd64.deb" 2>/dev/null) || return 1
	rm -rf "$cache/kfp/$rel.tmp"
	mkdir -p "$cache/kfp/$rel.tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$cache/kfp/$rel.tmp" ./boot || return 1
	rm -rf "$cache/kfp/$rel"
	mv "$cache/kfp/$rel.tmp" "$cache/kfp/$rel"
}

# fp RELEASE MANIFEST: fingerprint into $tmp/RELEASE.fp (wall time noted)
fp() {
	local rel=$1 list=$2 img t0 t1 cfg=()
	img=$(image_of "$rel") || return 1
	[[ -s $(config_of "$rel") ]] && cfg=(--config "$(config_of "$rel")")
	t0=$(date +%s.%N)
	"$kfp" fingerprint "$img" --functions "$list" --structs "$tmp/structs" \
		"${cfg[@]}" -o "$tmp/$rel.fp" 2>"$tmp/$rel.fp.err" || {
		sed 's/^/# /' "$tmp/$rel.fp.err"
		return 1
	}
	t1=$(date +%s.%N)
	printf '# fingerprint %s: %.2f s wall\n' "$rel" "$(echo "$t1 - $t0" | bc)"
}

# cmp_fp A B: compare into $tmp/A--B.out, status in $cmp_rc
cmp_fp() {
	out=$tmp/$1--$2.out
	"$kfp" compare "$tmp/$1.fp" "$tmp/$2.fp" >"$out" 2>"$out.err"
	cmp_rc=$?
	note "compare $1 $2: exit $cmp_rc: $(grep -E '^[0-9]+ functions' "$out")"
}

# ---- build ----
if make -s -C "$repo/tools/kfp" clean all >"$tmp/build.log" 2>&1 && [[ -x $kfp ]]; then
	ok "build tools/kfp (-Wall -Wextra -Werror)"
else
	sed 's/^/# /' "$tmp/build.log"
	not_ok "build tools/kfp (-Wall -Wextra -Werror)"
	echo "1..$((passed + failed))"
	echo "$passed passed, $failed failed"
	exit 1
fi

# ---- manifests ----
printf '%s\n' vm_area_struct anon_vma anon_vma_chain folio page mm_struct \
	task_struct vma_iterator ma_state maple_tree klp_patch klp_object klp_func \
	mempolicy vm_userfaultfd_ctx anon_vma_name file address_space \
	swap_info_struct ftrace_ops >"$tmp/structs"
manifest() { # SERIES REF NEW OUT
	MIRROR_DIFF_ITEMS=1 bash "$repo/tools/mirror-diff.sh" "$1" "$2" "$3" 2>"$4.err" |
		awk '$1 == "mirror" || $1 == "replaced" || $1 == "called" || $1 == "relied" { print $2 }' \
			>"$4" && [[ -s $4 ]]
}
have61=0 have612=0
if manifest 6.1 "$cache/src/linux-source-6.1" "$cache/src/6.1.0-57-amd64" "$tmp/f61"; then
	have61=1
	ok "6.1 port manifest: $(wc -l <"$tmp/f61") functions/data"
else
	not_ok "6.1 port manifest (tools/mirror-diff.sh)"
fi
if manifest 6.12 "$cache/src/linux-source-6.12" "$cache/src/linux-source-6.12" "$tmp/f612"; then
	have612=1
	ok "6.12 port manifest: $(wc -l <"$tmp/f612") functions/data"
else
	not_ok "6.12 port manifest (tools/mirror-diff.sh)"
fi

# ---- symbols ----
for rel in 6.1.0-57-amd64 6.12.117+deb12-amd64; do
	img=$(image_of "$rel") || { not_ok "symbols $rel: no image"; continue; }
	if ! "$kfp" symbols "$img" >"$tmp/sym" 2>"$tmp/sym.err"; then
		sed 's/^/# /' "$tmp/sym.err"
		not_ok "symbols $rel"
		continue
	fi
	n=$(wc -l <"$tmp/sym")
	stored=$(sed -n 's/.*(kallsyms_num_syms \([0-9]*\)).*/\1/p' "$tmp/sym.err")
	check "symbols $rel: $n symbols = kallsyms_num_syms ${stored:-?}" [ "$n" = "${stored:-x}" ]
	check "symbols $rel: copy_vma, anon_vma_clone, _stext, linux_banner present" \
		bash -c "grep -q ' T copy_vma\$' '$tmp/sym' && grep -q ' T anon_vma_clone\$' '$tmp/sym' &&
			grep -q ' T _stext\$' '$tmp/sym' && grep -q ' D linux_banner\$' '$tmp/sym'"
	check "symbols $rel: sorted by address" bash -c "cut -c1-16 '$tmp/sym' | LC_ALL=C sort -c"
	check "symbols $rel: kallsyms_seqs_of_names agrees with every decoded name" \
		grep -q 'names in its order are sorted' "$tmp/sym.err"
	map=$cache/symbols/System.map-$rel
	if [[ -s $map ]]; then
		check "symbols $rel: identical to the booted kernel's /proc/kallsyms" cmp -s "$tmp/sym" "$map"
	else
		skip "symbols $rel: no /proc/kallsyms dump in $cache/symbols"
	fi
done

# ---- Debian-only rebuilds: identical ----
if ((have61)) && fp 6.1.0-56-amd64 "$tmp/f61" && fp 6.1.0-57-amd64 "$tmp/f61"; then
	cmp_fp 6.1.0-56-amd64 6.1.0-57-amd64
	nf=$(grep -c '^func ' "$tmp/6.1.0-57-amd64.fp")
	ns=$(grep -c '^struct ' "$tmp/6.1.0-57-amd64.fp")
	check "6.1.0-56 vs 6.1.0-57: all identical ($nf functions, $ns structs)" \
		bash -c "[ $cmp_rc = 0 ] && grep -q '^$nf functions, $ns structs, 0 options identical; 0 differ\$' '$out' &&
			[ $nf -ge 40 ] && [ $ns = 20 ]"
	check "fingerprint header: release, version, toolchain, config-cc" \
		bash -c "grep -q '^release 6.1.0-57-amd64\$' '$tmp/6.1.0-57-amd64.fp' &&
			grep -q '^version #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 ' '$tmp/6.1.0-57-amd64.fp' &&
			grep -q '^toolchain gcc-12 ' '$tmp/6.1.0-57-amd64.fp' &&
			grep -q '^config-cc gcc-12 ' '$tmp/6.1.0-57-amd64.fp'"
	img=$(image_of 6.1.0-57-amd64)
	"$kfp" fingerprint "$img" --functions "$tmp/f61" --structs "$tmp/structs" \
		--config "$(config_of 6.1.0-57-amd64)" -o "$tmp/again.fp" 2>/dev/null
	check "fingerprint is deterministic" cmp -s "$tmp/again.fp" "$tmp/6.1.0-57-amd64.fp"
else
	not_ok "fingerprint 6.1.0-56 and 6.1.0-57"
fi

# ---- real code changes: refused, with their names ----
if ((have61)) && fetch_image 6.1.0-54-amd64 6.1.190-1 && fp 6.1.0-54-amd64 "$tmp/f61" &&
	fp 6.1.0-56-amd64 "$tmp/f61"; then
	cmp_fp 6.1.0-54-amd64 6.1.0-56-amd64
	grep '^different' "$out" | sed 's/^/#   /'
	check "6.1.0-54 vs 6.1.0-56 refused: __anon_vma_prepare, copy_vma, mm_struct differ" \
		bash -c "[ $cmp_rc = 1 ] && grep -q '^different func __anon_vma_prepare: size 399 -> 441' '$out' &&
			grep -q '^different func copy_vma: size 503 -> 607' '$out' &&
			grep -q '^different struct mm_struct: size 1088 -> 1096' '$out' &&
			grep -q '^[0-9]* functions, [0-9]* structs, [0-9]* options identical; [0-9]* differ:.* func:copy_vma' '$out'"
	check "6.1.0-54 vs 6.1.0-56: the functions using mm_struct's new field differ too" \
		bash -c "for f in do_mmap mmap_region uprobe_dup_mmap khugepaged_enter_vma; do
			grep -q \"^different func \$f:\" '$out' || exit 1; done"
elif ((have612)) && fp 6.12.117+deb13-amd64 "$tmp/f612" && fp 6.12.118+deb13-amd64 "$tmp/f612"; then
	note "6.1.0-54 not available: using 6.12.117+deb13 vs 6.12.118+deb13"
	cmp_fp 6.12.117+deb13-amd64 6.12.118+deb13-amd64
	check "6.12.117+deb13 vs 6.12.118+deb13 refused: copy_vma differs" \
		bash -c "[ $cmp_rc = 1 ] && grep -q '^different func copy_vma:' '$out'"
else
	not_ok "a pair with real differences"
fi

# ---- compilers and rebuilds of 6.12 ----
if ((have612)) && fp 6.12.117+deb12-amd64 "$tmp/f612" && fp 6.12.117+deb13-amd64 "$tmp/f612"; then
	cmp_fp 6.12.117+deb12-amd64 6.12.117+deb13-amd64
	note "  $(grep -c '^different func' "$out") functions differ; $(grep '^different toolchain' "$out")"
	check "6.12.117+deb12 (gcc-12) vs 6.12.117+deb13 (gcc-14) refused: toolchain differs" \
		bash -c "[ $cmp_rc = 1 ] && grep -q '^different toolchain: \".*gcc-12 .*\" -> \".*gcc-14 ' '$out' &&
			grep -q '^config-cc x86_64-linux-gnu-gcc-14 ' '$tmp/6.12.117+deb13-amd64.fp'"
else
	not_ok "fingerprint 6.12.117+deb12 and 6.12.117+deb13"
fi
if ((have612)) && fp 6.12.115+deb13-amd64 "$tmp/f612" && fp 6.12.115+deb13.1-amd64 "$tmp/f612"; then
	cmp_fp 6.12.115+deb13-amd64 6.12.115+deb13.1-amd64
	check "6.12.115+deb13 vs 6.12.115+deb13.1 (a Debian-only rebuild): identical" [ "$cmp_rc" = 0 ]
else
	not_ok "fingerprint 6.12.115+deb13 and 6.12.115+deb13.1"
fi

# ---- names absent in one kernel, BTF duplicates ----
if img=$(image_of 6.1.0-57-amd64) && img2=$(image_of 6.12.117+deb12-amd64); then
	printf '%s\n' copy_vma vma_merge vma_merge_new_range no_such_function >"$tmp/fx"
	printf '%s\n' mm_struct instance_attribute vma_merge_struct >"$tmp/sx"
	"$kfp" fingerprint "$img" --functions "$tmp/fx" --structs "$tmp/sx" -o "$tmp/x1.fp" 2>"$tmp/x1.err"
	"$kfp" fingerprint "$img2" --functions "$tmp/fx" --structs "$tmp/sx" -o "$tmp/x2.fp" 2>/dev/null
	"$kfp" compare "$tmp/x1.fp" "$tmp/x2.fp" >"$tmp/x.out" 2>&1
	rc=$?
	check "absent names: reported per kernel, in both, and refused" \
		bash -c "[ $rc = 1 ] && grep -q '^absent-in-B func vma_merge\$' '$tmp/x.out' &&
			grep -q '^absent-in-A func vma_merge_new_range\$' '$tmp/x.out' &&
			grep -q '^absent-in-A struct vma_merge_struct\$' '$tmp/x.out' &&
			grep -q '^absent-in-both absent no_such_function\$' '$tmp/x.out'"
	check "a struct name BTF has twice (instance_attribute) is reported" \
		bash -c "grep -q '^struct instance_attribute [0-9]* [0-9a-f]* 2\$' '$tmp/x1.fp' &&
			grep -q 'BTF has 2 types named instance_attribute' '$tmp/x1.err'"
fi

# ---- the decoder against libopcodes on a whole kernel ----
if img=$(image_of 6.1.0-57-amd64); then
	"$kfp" decoder-check "$img" >"$tmp/dc" 2>&1
	rc=$?
	note "$(tail -n 1 "$tmp/dc")"
	check "decoder-check 6.1.0-57: every instruction length agrees with libopcodes" [ "$rc" = 0 ]
fi

# ---- bad input: exit 2, a specific message, no signal, never "identical" ----
bad() { # DESCRIPTION PATTERN CMD...
	local d=$1 pat=$2 rc
	shift 2
	"$@" >"$tmp/bad.out" 2>"$tmp/bad.err"
	rc=$?
	if [[ $rc == 2 ]] && grep -q -- "$pat" "$tmp/bad.err" && ! grep -q identical "$tmp/bad.out"; then
		ok "$d: exit 2, \"$(head -n 1 "$tmp/bad.err")\""
	else
		not_ok "$d: exit $rc, stderr: $(head -n 1 "$tmp/bad.err")"
	fi
}
le32() { # N: 4 bytes little-endian
	local esc
	esc=$(printf '\\x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)))
	printf '%b' "$esc"
}
u32_at() { od -An -tu4 -j "$2" -N4 "$1" | tr -d ' '; }
# cut_payload IMAGE OUT: the payload cut in half, the header and the
# uncompressed-size trailer kept consistent (so the decoder sees the cut)
cut_payload() {
	local img=$1 out=$2 setup poff plen start half
	setup=$(od -An -tu1 -j $((0x1f1)) -N1 "$img" | tr -d ' ')
	poff=$(u32_at "$img" $((0x248)))
	plen=$(u32_at "$img" $((0x24c)))
	start=$(((setup + 1) * 512 + poff))
	half=$((plen / 2))
	head -c $((start + half)) "$img" >"$out"
	tail -c +$((start + plen - 3)) "$img" | head -c 4 >>"$out"
	le32 $((half + 4)) | dd of="$out" bs=1 seek=$((0x24c)) conv=notrunc status=none
}
# vmlinux IMAGE OUT: the decompressed ELF
vmlinux() {
	local img=$1 setup poff plen
	setup=$(od -An -tu1 -j $((0x1f1)) -N1 "$img" | tr -d ' ')
	poff=$(u32_at "$img" $((0x248)))
	plen=$(u32_at "$img" $((0x24c)))
	tail -c +$(((setup + 1) * 512 + poff + 1)) "$img" | head -c $((plen - 4)) | xz -dc >"$2"
}
sec_field() { # ELF SECTION N: field N of the section's readelf line (hex)
	local v
	v=$(readelf -SW "$1" | sed 's/\[ */[/' | awk -v s="$2" -v n="$3" '$2 == s { print $n }')
	[[ -n $v ]] && echo $((16#$v))
}
sec_off() { sec_field "$1" "$2" 5; }
sec_addr() { sec_field "$1" "$2" 4; }

img61=$(image_of 6.1.0-57-amd64)
img612=$(image_of 6.12.117+deb12-amd64)
if [[ -n $img61 && -n $img612 ]]; then
	head -c 4000000 "$img61" >"$tmp/trunc.img"
	bad "truncated image" "truncated image" "$kfp" symbols "$tmp/trunc.img"
	cut_payload "$img61" "$tmp/cutxz.img"
	bad "truncated xz payload" "truncated xz payload" "$kfp" symbols "$tmp/cutxz.img"
	cut_payload "$img612" "$tmp/cutzst.img"
	bad "truncated zstd payload" "truncated zstd payload" "$kfp" symbols "$tmp/cutzst.img"
	bad "/dev/null" "empty file" "$kfp" symbols /dev/null
	head -c 3000000 /dev/urandom >"$tmp/random"
	bad "a random file" "not a bzImage" "$kfp" symbols "$tmp/random"
	bad "a missing file" "cannot open" "$kfp" symbols "$tmp/nonexistent"
	bad "an ELF without kallsyms (/bin/ls)" "no kallsyms found" "$kfp" symbols /bin/ls
	vmlinux "$img61" "$tmp/vmlinux"
	ro=$(sec_off "$tmp/vmlinux" .rodata)
	ro_addr=$(sec_addr "$tmp/vmlinux" .rodata)
	"$kfp" symbols "$tmp/vmlinux" >/dev/null 2>"$tmp/v.err"
	tok=$(sed -n 's/.* token_index 0x\([0-9a-f]*\) .*/\1/p' "$tmp/v.err")
	if [[ -n $ro && -n $ro_addr && -n $tok ]]; then
		cp "$tmp/vmlinux" "$tmp/nokallsyms"
		head -c 512 /dev/zero | dd of="$tmp/nokallsyms" bs=1 conv=notrunc status=none \
			seek=$((ro + 0x$tok - ro_addr))
		bad "a vmlinux with kallsyms_token_index zeroed" "no kallsyms found" \
			"$kfp" symbols "$tmp/nokallsyms"
	else
		not_ok "locate kallsyms_token_index in the vmlinux"
	fi
	btf=$(sec_off "$tmp/vmlinux" .BTF)
	if [[ -n $btf ]]; then
		cp "$tmp/vmlinux" "$tmp/nobtf"
		head -c 24 /dev/zero | dd of="$tmp/nobtf" bs=1 seek="$btf" conv=notrunc status=none
		bad "a vmlinux with its BTF header zeroed" "BTF section does not parse" \
			"$kfp" fingerprint "$tmp/nobtf" --functions "$tmp/f61" --structs "$tmp/structs"
	else
		not_ok "locate .BTF in the vmlinux"
	fi
	rm -f "$tmp/vmlinux" "$tmp/nokallsyms" "$tmp/nobtf"
	mkfifo "$tmp/fifo"
	cat "$tmp/fifo" >"$tmp/fifo.out" &
	"$kfp" fingerprint "$img61" --functions "$tmp/f61" --structs "$tmp/structs" -o "$tmp/fifo" 2>/dev/null
	rc=$?
	wait
	check "-o onto a pipe writes through it and leaves it a pipe" \
		bash -c "[ $rc = 0 ] && [ -p '$tmp/fifo' ] && tail -n 1 '$tmp/fifo.out' | grep -q '^end '"
	bad "a missing function list" "cannot open" \
		"$kfp" fingerprint "$img61" --functions "$tmp/nonexistent" --structs "$tmp/structs"
else
	not_ok "bad-input tests need 6.1.0-57 and 6.12.117+deb12 images"
fi
good=$tmp/6.1.0-57-amd64.fp
if [[ -s $good && -s $tmp/6.1.0-56-amd64.fp ]]; then
	sed '0,/^func /s/^\(func [^ ]* [0-9]*\) [0-9a-f]*/\1 zz/' "$good" >"$tmp/corrupt.fp"
	bad "a fingerprint with a corrupted func line" "malformed fingerprint file" \
		"$kfp" compare "$tmp/corrupt.fp" "$tmp/6.1.0-56-amd64.fp"
	sed '0,/^part /{/^part /d}' "$good" >"$tmp/nopart.fp"
	bad "a fingerprint missing a part line" "malformed fingerprint file" \
		"$kfp" compare "$tmp/6.1.0-56-amd64.fp" "$tmp/nopart.fp"
	head -n 30 "$good" >"$tmp/short.fp"
	bad "a truncated fingerprint" "no end line" \
		"$kfp" compare "$tmp/6.1.0-56-amd64.fp" "$tmp/short.fp"
	bad "a random file as fingerprint" "not a fingerprint" \
		"$kfp" compare "$tmp/random" "$tmp/6.1.0-56-amd64.fp"
	bad "/dev/null as fingerprint" "empty file" "$kfp" compare /dev/null "$good"
else
	not_ok "fingerprint-file tests need the 6.1 fingerprints"
fi

echo "1..$((passed + failed))"
echo "$passed passed, $failed failed"
((failed == 0))
