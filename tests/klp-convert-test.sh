#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Self-test for module/klp-convert: builds a tiny livepatch module that
# references two non-exported vmlinux functions through "#pragma weak"
# (from .text and from a data initializer), converts it and inspects the
# result with readelf.  Nothing is loaded into the running kernel.
#
# usage: tests/klp-convert-test.sh [KDIR...]
#   KDIR defaults to the header trees of module/builds.list's full builds (newest first) that
#   tests/setup.sh unpacked into $VMAMERGE_CACHE/headers/ (tests/lib.sh);
#   VMAMERGE_KERNELS (e.g. "6.12") restricts them.
#   KLP_CONVERT=path uses an existing binary instead of building one.
#   KEEP_TMP=1 keeps the temporary directory for inspection.
#
# Output is TAP-like; exits non-zero if any test failed.

set -u

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$here/lib.sh"
src=$here/../module/klp-convert/klp-convert.c
pass=0
fail=0
n=0

# TAP diagnostics
indent() {
	sed 's/^/#   /'
}

ok() {
	n=$((n + 1))
	pass=$((pass + 1))
	echo "ok $n - $1"
}

not_ok() {
	n=$((n + 1))
	fail=$((fail + 1))
	echo "not ok $n - $1"
	if [ -n "${2:-}" ]; then
		indent <<<"$2"
	fi
}

# check DESCRIPTION COMMAND...: passes if COMMAND succeeds
check() {
	local desc=$1 out

	shift
	if out=$("$@" 2>&1); then
		ok "$desc"
	else
		not_ok "$desc" "$out"
	fi
}

# check_fails DESCRIPTION COMMAND...: passes if COMMAND fails
check_fails() {
	local desc=$1 out

	shift
	if out=$("$@" 2>&1); then
		not_ok "$desc" "unexpectedly succeeded: $out"
	else
		ok "$desc"
		indent <<<"$out"
	fi
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/klp-convert-test.XXXXXX") || exit 1
if [ -n "${KEEP_TMP:-}" ]; then
	echo "# keeping $tmp"
else
	trap 'rm -rf "$tmp"' EXIT
fi

if [ $# -eq 0 ]; then
	# module/builds.list lists the oldest first
	while read -r s r _; do
		if kdir_ready "$r"; then
			set -- "$(kdir_of "$r")" "$@"
		else
			echo "# skipping $r: $(kdir_missing_msg "$r")"
		fi
	done < <(builds_of full)
fi
if [ $# -eq 0 ]; then
	echo "klp-convert-test: no kernel header tree found: run tests/setup.sh first" >&2
	exit 1
fi

if [ -n "${KLP_CONVERT:-}" ]; then
	kc=$KLP_CONVERT
else
	kc=$tmp/klp-convert
	check "build klp-convert with -Wall -Wextra -Werror" \
		"${HOSTCC:-gcc}" -O2 -Wall -Wextra -Werror -o "$kc" "$src"
fi

# The test module: direct calls from .text, an address in .data.
write_module() {
	local dir=$1 name=$2 livepatch=$3

	mkdir -p "$dir"
	cat >"$dir/$name.c" <<EOF
// SPDX-License-Identifier: GPL-2.0
#include <linux/module.h>
#include <linux/sched.h>

/* Not exported; resolved through livepatch relocations. */
struct vm_area_struct;
bool ptrace_may_access(struct task_struct *task, unsigned int mode);
struct vm_area_struct *copy_vma(struct vm_area_struct **vmap,
				unsigned long addr, unsigned long len,
				pgoff_t pgoff, bool *need_rmap_locks);
#pragma weak ptrace_may_access
#pragma weak copy_vma

static void *klpt_table[] __used = { ptrace_may_access };

noinline bool klpt_may(struct task_struct *t)
{
	return ptrace_may_access(t, 1);
}
EXPORT_SYMBOL_GPL(klpt_may);

noinline void *klpt_copy(struct vm_area_struct **v)
{
	bool need;

	return copy_vma(v, 0, 0, 0, &need);
}
EXPORT_SYMBOL_GPL(klpt_copy);

static int __init klpt_init(void)
{
	return READ_ONCE(klpt_table[0]) ? 0 : -EINVAL;
}
module_init(klpt_init);

static void __exit klpt_exit(void)
{
}
module_exit(klpt_exit);

MODULE_LICENSE("GPL");
EOF
	if [ "$livepatch" = y ]; then
		echo 'MODULE_INFO(livepatch, "Y");' >>"$dir/$name.c"
	fi
	echo "obj-m += $name.o" >>"$dir/Kbuild"
}

# series_of KDIR: "6.12" for a 6.12.x tree
series_of() {
	local rel

	rel=$(cat "$1/include/config/kernel.release" 2>/dev/null) ||
		rel=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$1/include/generated/utsrelease.h")
	sed -E 's/^([0-9]+\.[0-9]+).*/\1/' <<<"$rel"
}

# make_global FILE SYM: turn the binding of undefined SYM into GLOBAL
make_global() {
	python3 - "$1" "$2" <<'EOF'
import struct, sys
path, name = sys.argv[1], sys.argv[2].encode()
d = bytearray(open(path, 'rb').read())
shoff, = struct.unpack_from('<Q', d, 0x28)
shnum, = struct.unpack_from('<H', d, 0x3c)
sh = [struct.unpack_from('<IIQQQQIIQQ', d, shoff + 64 * i)
      for i in range(shnum)]
for s in sh:
    if s[1] != 2:               # SHT_SYMTAB
        continue
    strtab = sh[s[6]][4]
    for o in range(s[4], s[4] + s[5], 24):
        st_name, st_info = struct.unpack_from('<IB', d, o)
        start = strtab + st_name
        if d[start:d.index(0, start)] == name:
            d[o + 4] = (1 << 4) | (st_info & 0xf)
open(path, 'wb').write(d)
EOF
}

# the relocation lines of section $2 in readelf -rW output of $1
relocs_of() {
	readelf -rW "$1" | awk -v sec="'$2'" '
		/^Relocation section/ { on = ($3 == sec); next }
		on && NF && $1 != "Offset" { print }'
}

test_kdir() {
	local kdir=$1 series dir ko out syms secs s

	series=$(series_of "$kdir")
	dir=$tmp/$series
	echo "# KDIR=$kdir series=$series"
	write_module "$dir" klpt y
	write_module "$dir" klpt_nolp n
	if ! out=$(make -C "$kdir" M="$dir" modules 2>&1); then
		not_ok "$series: build test modules" "$out"
		return
	fi
	ok "$series: build test modules"
	ko=$dir/klpt.ko
	cp "$ko" "$dir/orig.ko"

	cat >"$dir/list" <<EOF
# series  symbol            sympos
*         ptrace_may_access 0
$series   copy_vma          0
0.0       does_not_exist    0
EOF
	cat >"$dir/short.list" <<EOF
*         ptrace_may_access 0
EOF

	# Failure cases first, on copies; the input must stay untouched.
	cp "$dir/orig.ko" "$dir/short.ko"
	check_fails "$series: unlisted weak undefined symbol is rejected" \
		"$kc" --series "$series" "$dir/short.list" "$dir/short.ko"
	check "$series: failed run leaves the module untouched" \
		cmp "$dir/orig.ko" "$dir/short.ko"
	check_fails "$series: wrong --series leaves copy_vma unconverted" \
		"$kc" --series 0.0 "$dir/list" "$dir/short.ko"
	check_fails "$series: non-livepatch module is rejected" \
		"$kc" --series "$series" "$dir/list" "$dir/klpt_nolp.ko"
	check_fails "$series: --check rejects an unconverted module" \
		"$kc" --check "$dir/orig.ko"

	check "$series: convert" \
		"$kc" -v --series "$series" "$dir/list" "$ko"

	syms=$(readelf -sW "$ko")
	for s in ptrace_may_access copy_vma; do
		if grep -Eq "GLOBAL +DEFAULT +(OS \[0xff20\]|65312|LOOS\+0x20) +\.klp\.sym\.vmlinux\.$s,0\$" \
			<<<"$syms"; then
			ok "$series: $s is .klp.sym.vmlinux.$s,0, GLOBAL, Ndx 0xff20"
		else
			not_ok "$series: $s is .klp.sym.vmlinux.$s,0, GLOBAL, Ndx 0xff20" \
				"$(grep -E "$s" <<<"$syms")"
		fi
	done
	if awk '$5 == "WEAK" && $7 == "UND" { bad = 1; print } END { exit bad }' \
		<<<"$syms" >/dev/null; then
		ok "$series: no weak undefined symbols remain"
	else
		not_ok "$series: no weak undefined symbols remain"
	fi

	secs=$(readelf -SW "$ko")
	for s in text data; do
		if grep -Eq "\.klp\.rela\.vmlinux\.$s +RELA .* 18 +AIo " \
			<<<"$secs"; then
			ok "$series: .klp.rela.vmlinux.$s exists, flags AIo"
		else
			not_ok "$series: .klp.rela.vmlinux.$s exists, flags AIo" \
				"$(grep -E 'klp|rela' <<<"$secs")"
		fi
	done

	out=$(relocs_of "$ko" .klp.rela.vmlinux.text)
	if grep -q 'klp\.sym\.vmlinux\.ptrace_may_access,0' <<<"$out" &&
	   grep -q 'klp\.sym\.vmlinux\.copy_vma,0' <<<"$out" &&
	   ! grep -qv '\.klp\.sym\.vmlinux\.' <<<"$out"; then
		ok "$series: .klp.rela.vmlinux.text holds both calls, only klp symbols"
	else
		not_ok "$series: .klp.rela.vmlinux.text holds both calls, only klp symbols" "$out"
	fi
	out=$(relocs_of "$ko" .klp.rela.vmlinux.data)
	if grep -q 'R_X86_64_64 .*klp\.sym\.vmlinux\.ptrace_may_access,0' \
		<<<"$out"; then
		ok "$series: .klp.rela.vmlinux.data holds the data reference"
	else
		not_ok "$series: .klp.rela.vmlinux.data holds the data reference" "$out"
	fi
	out=$(readelf -rW "$ko" | awk '
		/^Relocation section/ { on = ($3 !~ /klp/); next }
		on && /ptrace_may_access|copy_vma/ { print }')
	if [ -z "$out" ]; then
		ok "$series: ordinary .rela sections no longer reference them"
	else
		not_ok "$series: ordinary .rela sections no longer reference them" "$out"
	fi
	out=$(readelf -aW "$ko" 2>&1 >/dev/null)
	if [ -z "$out" ]; then
		ok "$series: readelf -a reports no problems"
	else
		not_ok "$series: readelf -a reports no problems" "$out"
	fi

	out=$("$kc" --check "$ko" 2>&1)
	if [[ $out =~ ^klp-convert:\ 2\ symbols,\ 3\ relocations\ in\ 2\ sections$ ]]; then
		ok "$series: --check: $out"
	else
		not_ok "$series: --check summary" "$out"
	fi

	cp "$ko" "$dir/before.ko"
	check "$series: second run succeeds" \
		"$kc" --series "$series" "$dir/list" "$ko"
	check "$series: second run changes nothing" cmp "$dir/before.ko" "$ko"

	# Extending a partly converted module (needs copy_vma non-weak,
	# which only a hand-edited object has).
	if command -v python3 >/dev/null; then
		cp "$dir/orig.ko" "$dir/part.ko"
		make_global "$dir/part.ko" copy_vma
		"$kc" --series "$series" "$dir/short.list" "$dir/part.ko" \
			>/dev/null 2>&1
		check "$series: a longer list extends a partly converted module" \
			"$kc" --series "$series" "$dir/list" "$dir/part.ko"
		out=$(relocs_of "$dir/part.ko" .klp.rela.vmlinux.text)
		if [ "$(grep -c '\.klp\.sym\.vmlinux\.' <<<"$out")" = 2 ] &&
		   [ "$(readelf -SW "$dir/part.ko" | grep -c '\.klp\.rela\.vmlinux\.text')" = 1 ]; then
			ok "$series: ... into the existing .klp.rela.vmlinux.text"
		else
			not_ok "$series: ... into the existing .klp.rela.vmlinux.text" "$out"
		fi
	fi

	cp "$dir/orig.ko" "$dir/signed.ko"
	printf '~Module signature appended~\n' >>"$dir/signed.ko"
	check_fails "$series: signed module is rejected" \
		"$kc" --series "$series" "$dir/list" "$dir/signed.ko"

}

for kdir in "$@"; do
	test_kdir "$kdir"
done

echo "1..$n"
echo "klp-convert-test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
