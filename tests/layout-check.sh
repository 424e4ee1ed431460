#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# layout-check.sh - host-side static checks of what the module assumes
# about each full-tier build of module/builds.list, without booting anything:
#
#  1. Private declarations (module/kernel-<series>/mm_vma.h, our copy of
#     the internal mm/vma.h that the header packages do not ship) against
#     the real header of that build's source:
#       - struct vma_merge_struct and the enums: the same member
#         declarations (comments and blanks aside) and enumerators;
#       - compiled twice against the kernel headers, once with the real
#         mm/vma.h and once with ours: sizeof, alignment, the offset and
#         size of every member, the byte image of every bitfield, every
#         enumerator's value and the enums' sizes must be equal;
#       - our prototypes redeclared after the real mm/vma.c (the compiler
#         rejects any difference, also for the static vma_modify());
#       - our VMG_VMA_STATE()-like initialiser and helper copies compile to
#         the same code as the kernel's.
#  2. Kernel symbols: every non-exported symbol that the objects of
#     module/ and module/kernel-<series>/ reference must be in the build's System.map
#     (text or data) and listed in module/ksyms.list with a sympos that
#     fits its multiplicity (0 when unique); every function the glue
#     replaces or hooks (.old_name, VMAMERGE_HOOK()) must be a unique
#     global text symbol.
#
# Output is TAP-like ("ok - ..." / "not ok - ..."), then
# "layout-check: N passed, N failed, N skipped"; the exit status is 1 if
# anything failed.
#
# The header trees (unpacked, see kdir_of in tests/lib.sh) and sources come
# from tests/setup.sh; without them: "run tests/setup.sh first".  Debian's
# linux-image package carries only a placeholder System.map; the real one
# is in linux-image-<release>-dbg.  It is looked for in, in this order:
#   $VMAMERGE_SYSTEM_MAP_DIR/System.map-<release>
#   $VMAMERGE_CACHE/symbols/System.map-<release>
#   $VMAMERGE_CACHE/kernels/<release>/boot/System.map-<release>
#   /usr/lib/debug/boot/System.map-<release>
# Without one, the symbol checks of that kernel are skipped.
#
# The symbol checks also run for each series' debug twin
# (tests/debug-kernel/build.sh) when its build tree is there.
#
# Environment: VMAMERGE_CACHE (default /var/cache/vmamerge),
# VMAMERGE_SYSTEM_MAP_DIR, VMAMERGE_KERNELS (e.g. "6.12"; default: all),
# VMAMERGE_DEBUG=0 (leave the debug twins out), VMAMERGE_LAYOUT_BUILD
# ("SERIES RELEASE DEBVER SRC": check that one build only; tools/port.sh).

set -u

cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mod=$top/module
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$top/tests/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/vmamerge-layout.XXXXXX")
trap 'rm -rf "$work"' EXIT

npass=0 nfail=0 nskip=0
ok() { npass=$((npass + 1)); echo "ok - $*"; }
not_ok() { nfail=$((nfail + 1)); echo "not ok - $*"; }
skip() { nskip=$((nskip + 1)); echo "ok - $1 # SKIP $2"; }
check() { # check COND-STATUS DESCRIPTION
	if [[ $1 == 0 ]]; then ok "$2"; else not_ok "$2"; fi
}
diag() { sed 's/^/#   /'; }

# Comment-free, blank-normalised text of one "KIND NAME {...};" block of a
# C file (struct or enum), one declaration per line.
c_block() { # c_block FILE KIND NAME
	gcc -fpreprocessed -dD -E -P -x c "$1" 2>/dev/null |
	awk -v head="$2 $3 {" '
		index($0, head) == 1 { on = 1; next }
		on && /^};/ { exit }
		on { print }' |
	tr '\t\n' '  ' | tr -s ' ' | sed 's/ *\([;,{}]\) */\1\n/g' |
	sed 's/^ *//; s/ *$//; s/ *: */ :/; /^$/d'
}

# Member names of a struct block (c_block output), bitfields marked "name:".
struct_members() {
	sed -n 's/.*[ *]\([A-Za-z_][A-Za-z0-9_]*\)\( :[0-9]*\)\{0,1\};$/\1\2/p' |
	sed 's/ :[0-9]*$/:/'
}

enumerators() { sed 's/[ =,].*//' | grep -v '^$'; }

# ---------------------------------------------------------------------------
# 1. Private declarations of internal headers.

layout_check() { # layout_check SERIES RELEASE SRC
	local s=$1 r=$2 src=$3 ours=$mod/kernel-$1/mm_vma.h
	local real=$src/mm/vma.h kdir w=$work/layout-$1
	local m e f

	kdir=$(kdir_of "$r")
	if [[ ! -f $real ]]; then
		not_ok "$s: real mm/vma.h present ($real)"
		return
	fi
	mkdir -p "$w"

	# Textual: the same member declarations and enumerators.
	local kinds=("struct vma_merge_struct" "enum vma_merge_state"
		     "enum vma_merge_flags")
	local k
	for k in "${kinds[@]}"; do
		# shellcheck disable=SC2086 # KIND NAME are two words
		if diff <(c_block "$real" $k) <(c_block "$ours" $k) \
			>"$w/diff" 2>&1 && [[ -n $(c_block "$real" $k) ]]; then
			ok "$s: $k declared as in mm/vma.h"
		else
			not_ok "$s: $k declared as in mm/vma.h"
			diag <"$w/diff"
		fi
	done

	local members enums_state enums_flags
	members=$(c_block "$real" struct vma_merge_struct | struct_members)
	enums_state=$(c_block "$real" enum vma_merge_state | enumerators)
	enums_flags=$(c_block "$real" enum vma_merge_flags | enumerators)

	# Compiled: one table of numbers from each header, same order.
	{
		echo '/* generated by tests/layout-check.sh */'
		echo '#ifdef VMAMERGE_CHK_REAL'
		echo '#undef MODULE	/* mm/vma.h is built-in code */'
		echo '#include "vma_internal.h"'
		echo '#include "vma.h"'
		echo '#else'
		echo '#include "mm_vma.h"'
		echo '#endif'
		echo '#define S struct vma_merge_struct'
		echo 'const long vmamerge_chk_table[] __used'
		echo '	__section(".rodata.vmamerge_chk") = {'
		echo '	sizeof(S), __alignof__(S),'
		for m in $members; do
			[[ $m == *: ]] && continue
			echo "	offsetof(S, $m), sizeof_field(S, $m),"
		done
		for e in $enums_state $enums_flags; do
			echo "	$e,"
		done
		echo '	sizeof(enum vma_merge_state), sizeof(enum vma_merge_flags),'
		echo '};'
		for m in $members; do
			[[ $m == *: ]] || continue
			f=${m%:}
			echo "const S vmamerge_chk_bf_$f __used"
			echo "	__section(\".rodata.vmamerge_bf_$f\") = { .$f = 1 };"
		done
	} >"$w/table.c"
	cp "$w/table.c" "$w/real.c"
	cp "$w/table.c" "$w/ours.c"
	sed -i '1a #define VMAMERGE_CHK_REAL' "$w/real.c"

	# Prototypes and helpers: ours after the real mm/vma.c.  Our header
	# then keeps the real types (it tests the real include guard) and
	# only adds its prototypes, which must agree with the real ones.
	cat >"$w/proto.c" <<-'EOF'
	/* generated by tests/layout-check.sh */
	#undef MODULE	/* mm/vma.c is built-in code */
	#include "vma.c"
	#include "mm_vma.h"

	#define PAIR(name, type, params, real, ours)			\
		type vmamerge_chk_real_##name params { return real; }	\
		type vmamerge_chk_ours_##name params { return ours; }

	#define VMG_PARAMS (struct vma_iterator *vmi, struct vm_area_struct *prev, \
			    struct vm_area_struct *vma, unsigned long start, \
			    unsigned long end)

	struct vma_merge_struct vmamerge_chk_real_vmg VMG_PARAMS
	{
		VMG_VMA_STATE(vmg, vmi, prev, vma, start, end);
		return vmg;
	}
	struct vma_merge_struct vmamerge_chk_ours_vmg VMG_PARAMS
	{
		VMAMERGE_VMG_VMA_STATE(vmg, vmi, prev, vma, start, end);
		return vmg;
	}
	PAIR(nomem, bool, (struct vma_merge_struct *v), vmg_nomem(v),
	     vmamerge_vmg_nomem(v))
	PAIR(pgoff, pgoff_t, (struct vm_area_struct *v, unsigned long a),
	     vma_pgoff_offset(v, a), vmamerge_vma_pgoff_offset(v, a))
	PAIR(iter, unsigned long, (struct vma_iterator *i),
	     vma_iter_addr(i), vmamerge_vma_iter_addr(i))
	EOF

	cat >"$w/Kbuild" <<-EOF
	obj-m := chk.o
	chk-y := real.o ours.o proto.o
	ccflags-y := -I$mod/kernel-$s -I$mod
	CFLAGS_real.o := -I$src/mm
	CFLAGS_proto.o := -I$src/mm -Wno-missing-prototypes \
			 -Wno-missing-declarations -fno-ipa-icf
	EOF
	# One make per object: Kbuild stops at the first failing target.
	for f in real ours proto; do
		make -C "$kdir" M="$w" "$f.o" >>"$w/build.log" 2>&1
	done
	local -A what=([real]="the real mm/vma.h" [ours]="our mm_vma.h"
		    [proto]="our mm_vma.h after the real mm/vma.c")
	for f in real ours proto; do
		if [[ -f $w/$f.o ]]; then
			ok "$s: $f.c compiles with ${what[$f]}"
		else
			not_ok "$s: $f.c compiles with ${what[$f]}"
		fi
	done
	grep -E 'error' "$w/build.log" | head -20 | diag
	[[ -f $w/real.o && -f $w/ours.o ]] && layout_compare "$s" "$w" "$members" \
		"$enums_state $enums_flags"
	[[ -f $w/proto.o ]] && helper_compare "$s" "$w"
}

# Compare the numbers and bitfield images of real.o and ours.o.
layout_compare() { # layout_compare SERIES WORKDIR MEMBERS ENUMERATORS
	local s=$1 w=$2 members=$3 enums=$4 m e f

	# Compare the tables entry by entry.
	local labels=("sizeof(struct vma_merge_struct)"
		      "alignof(struct vma_merge_struct)")
	for m in $members; do
		[[ $m == *: ]] && continue
		labels+=("offsetof(vma_merge_struct, $m)"
			 "sizeof(vma_merge_struct.$m)")
	done
	for e in $enums; do labels+=("value of $e"); done
	labels+=("sizeof(enum vma_merge_state)" "sizeof(enum vma_merge_flags)")
	for f in real ours; do
		objcopy -O binary --only-section=.rodata.vmamerge_chk \
			"$w/$f.o" "$w/$f.tab"
		od -An -v -t d8 -w8 "$w/$f.tab" | tr -d ' ' >"$w/$f.txt"
	done
	local i=0 rv ov
	while read -r rv <&3 && read -r ov <&4; do
		[[ $rv == "$ov" ]]
		check $? "$s: ${labels[$i]}: ours $ov, real $rv"
		i=$((i + 1))
	done 3<"$w/real.txt" 4<"$w/ours.txt"
	[[ $i == "${#labels[@]}" ]]
	check $? "$s: layout table complete ($i of ${#labels[@]} entries)"

	for m in $members; do
		[[ $m == *: ]] || continue
		f=${m%:}
		objcopy -O binary --only-section=".rodata.vmamerge_bf_$f" \
			"$w/real.o" "$w/bf-real"
		objcopy -O binary --only-section=".rodata.vmamerge_bf_$f" \
			"$w/ours.o" "$w/bf-ours"
		[[ -s $w/bf-real ]] && cmp -s "$w/bf-real" "$w/bf-ours"
		check $? "$s: bitfield $f at the same bit"
	done
}

# Our helper copies must compile to the kernel's code (proto.o).
helper_compare() { # helper_compare SERIES WORKDIR
	local s=$1 w=$2
	objdump -dr --no-show-raw-insn "$w/proto.o" >"$w/proto.dis"
	local h
	for h in vmg nomem pgoff iter; do
		fn_body "$w/proto.dis" "vmamerge_chk_real_$h" >"$w/h-real"
		fn_body "$w/proto.dis" "vmamerge_chk_ours_$h" >"$w/h-ours"
		[[ -s $w/h-real ]] && cmp -s "$w/h-real" "$w/h-ours"
		check $? "$s: our copy of $(helper_name "$h") generates the kernel's code"
	done
}

helper_name() {
	case $1 in
	vmg) echo "VMG_VMA_STATE()" ;;
	nomem) echo "vmg_nomem()" ;;
	pgoff) echo "vma_pgoff_offset()" ;;
	iter) echo "vma_iter_addr()" ;;
	esac
}

# Instructions and relocations of one function of an objdump -dr listing,
# addresses, offsets and padding stripped.
fn_body() { # fn_body LISTING FUNCTION
	awk -v f="<$2>:" '
		$2 == f { on = 1; next }
		on && /^$/ { exit }
		on { sub(/^[ \t]*[0-9a-f]+:[ \t]*/, "")
		     gsub(/[0-9a-f]+ <[^>]*>/, "<>")
		     if ($0 !~ /nop|int3|xchg +%ax,%ax/)	# padding
			     print }' "$1"
}

# ---------------------------------------------------------------------------
# 2. Kernel symbols.

find_system_map() { # find_system_map RELEASE
	local c
	for c in ${VMAMERGE_SYSTEM_MAP_DIR:+"$VMAMERGE_SYSTEM_MAP_DIR/System.map-$1"} \
		 "$cache/symbols/System.map-$1" \
		 "$cache/kernels/$1/boot/System.map-$1" \
		 "/usr/lib/debug/boot/System.map-$1"; do
		# Debian's image package has a one-line placeholder.
		if [[ -f $c ]] && ! grep -q 'The real System.map' "$c" &&
		   [[ $(head -c 100000 "$c" | wc -l) -gt 1000 ]]; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

symbol_check() { # symbol_check SERIES RELEASE
	local s=$1 r=$2 kdir w=$work/sym-$1
	local map f objs=() sym

	kdir=$(kdir_of "$r")
	mkdir -p "$w"
	for f in "$mod/kernel-$s"/*.c; do
		[[ -f $f ]] || continue
		cp "$f" "$w/"
		objs+=("$(basename "${f%.c}").o")
	done
	# The kernel-independent files call internals too (verify.c).
	for f in "$mod"/*.c; do
		[[ -f $f ]] || continue
		cp "$f" "$w/common_$(basename "$f")"
		objs+=("common_$(basename "${f%.c}").o")
	done
	# what Kbuild generates (validated_builds.c includes it)
	awk -v series="$s" -v out=module -f "$mod/builds.awk" "$mod/builds.list" \
		>"$w/validated-builds.h"
	if [[ ${#objs[@]} == 0 ]]; then
		not_ok "$s: module/kernel-$s has sources"
		return
	fi
	cat >"$w/Kbuild" <<-EOF
	obj-m := chk.o
	chk-y := ${objs[*]}
	ccflags-y := -I$mod/kernel-$s -I$mod -I$mod/uapi
	EOF
	if make -k -C "$kdir" M="$w" "${objs[@]}" >"$w/build.log" 2>&1; then
		ok "$s: module/kernel-$s/*.c compile against $r"
	else
		not_ok "$s: module/kernel-$s/*.c compile against $r"
		grep -E 'error' "$w/build.log" | head -20 | diag
		return
	fi

	# Undefined symbols that are neither exported nor ours.
	# (minus what our own objects define, and what the module build
	# itself provides: __this_module, our tracepoints)
	local exported
	exported=$(awk '{print $2}' "$kdir/Module.symvers"
		   cd "$w" && nm --defined-only "${objs[@]}" | awk 'NF == 3 {print $3}')
	(cd "$w" && nm -u "${objs[@]}") | awk 'NF == 2 {print $2}' | sort -u |
		grep -Ev '^(_*vmamerge_|__this_module$|__(SCK|SCT)__tp_func_vmamerge_|__tracepoint_vmamerge_|__traceiter_vmamerge_)' |
		grep -vxF -f <(echo "$exported") >"$w/internal" || true

	map=$(find_system_map "$r") ||
		skip "$s: internal symbols in System.map-$r" \
		     "no real System.map (linux-image-$r-dbg)"

	local n types pos want
	while read -r sym; do
		pos=$(awk -v se="$s" -v sy="$sym" '
			/^[ \t]*(#|$)/ { next }
			($1 == "*" || $1 == se) && $2 == sy { print $3; exit }' \
			"$mod/ksyms.list")
		if [[ -z $map ]]; then	# no multiplicity known
			[[ -n $pos ]]
			check $? "$s: $sym listed in module/ksyms.list${pos:+ (sympos $pos)}"
			continue
		fi
		n=$(awk -v s="$sym" '$3 == s' "$map" | wc -l)
		types=$(awk -v s="$sym" '$3 == s {print $2}' "$map" | sort -u | tr -d '\n')
		if [[ $n == 0 ]]; then
			not_ok "$s: $sym in System.map"
			continue
		fi
		[[ $types =~ ^[tTdDbBrR]+$ ]]
		check $? "$s: $sym in System.map (type $types, $n definition(s))"
		if [[ $n == 1 ]]; then want="0"; else want="1..$n"; fi
		if [[ -z $pos ]]; then
			not_ok "$s: $sym listed in module/ksyms.list (needs sympos $want)"
		elif [[ $n == 1 && $pos == 0 ]] ||
		     [[ $n -gt 1 && $pos -ge 1 && $pos -le $n ]]; then
			ok "$s: $sym listed in module/ksyms.list with sympos $pos"
		else
			not_ok "$s: $sym listed in module/ksyms.list with sympos $pos (needs $want)"
		fi
	done <"$w/internal"
	[[ -n $map ]] || return

	# The functions the glue replaces.
	local glue=$mod/kernel-$s/glue.c
	[[ -f $glue ]] || return
	while read -r sym; do
		n=$(awk -v s="$sym" '$3 == s' "$map" | wc -l)
		types=$(awk -v s="$sym" '$3 == s {print $2}' "$map" | sort -u | tr -d '\n')
		[[ $n == 1 && $types == T ]]
		check $? "$s: replaced function $sym is a unique global text symbol (type ${types:--}, $n definition(s))"
	done < <(sed -n -e 's/.*\.old_name *= *"\([^"]*\)".*/\1/p' -e 's/^[[:space:]]*VMAMERGE_HOOK(\([a-z_0-9]*\)),.*/\1/p' "$glue")
}

# ---------------------------------------------------------------------------
# 3. Constants the glue restates because their header is internal.

constant_check() { # SERIES SRC
	local s=$1 src=$2 ours theirs
	ours=$(sed -n 's/^#define VMAMERGE_SWAP_SPACE_SHIFT[[:space:]]*\([0-9]*\).*/\1/p' \
		"$mod/kernel-$s/verify_glue.c" 2>/dev/null)
	[[ -n $ours ]] || return 0
	theirs=$(cat "$src/include/linux/swap.h" "$src/mm/swap.h" 2>/dev/null |
		sed -n 's/^#define SWAP_ADDRESS_SPACE_SHIFT[[:space:]]*\([0-9]*\).*/\1/p' | head -n1)
	[[ $ours == "$theirs" ]]
	check $? "$s: VMAMERGE_SWAP_SPACE_SHIFT $ours == the source's SWAP_ADDRESS_SPACE_SHIFT ${theirs:-(not found)}"
}

# ---------------------------------------------------------------------------

# SERIES RELEASE DEBVER SRC of the builds to check: the full-tier builds
# with the linux-source of their series, or the one build of
# VMAMERGE_LAYOUT_BUILD="SERIES RELEASE DEBVER SRC" (tools/port.sh).
layout_builds() {
	if [[ -n ${VMAMERGE_LAYOUT_BUILD:-} ]]; then
		echo "$VMAMERGE_LAYOUT_BUILD"
		return
	fi
	builds_of full | while read -r s r v _; do
		echo "$s $r $v $cache/src/linux-source-$s"
	done
}

while read -r s r v src; do
	if ! kdir_ready "$r"; then
		not_ok "$s: headers of $r unpacked ($(kdir_missing_msg "$r"))"
		continue
	fi
	if [[ -f $src/Makefile ]]; then
		sv=$(awk '/^VERSION =/ {v=$3} /^PATCHLEVEL =/ {p=$3}
			  /^SUBLEVEL =/ {print v "." p "." $3; exit}' "$src/Makefile")
		[[ $v == "$sv"-* ]]
		check $? "$s: the source of $r is $sv, as Debian $v"
	else
		not_ok "$s: kernel source in $src (run tests/setup.sh)"
	fi
	if [[ -f $mod/kernel-$s/mm_vma.h ]]; then
		layout_check "$s" "$r" "$src"
	fi
	symbol_check "$s" "$r"
	constant_check "$s" "$src"
	# The debug twin has another configuration, so other static
	# duplicates: every sympos must hold there too.
	dr=$(debug_release_of "$v")
	if [[ ${VMAMERGE_DEBUG:-1} != 0 && -z ${VMAMERGE_LAYOUT_BUILD:-} ]] && kdir_ready "$dr"; then
		symbol_check "$s" "$dr"
	fi
done < <(layout_builds)

echo "1..$((npass + nfail + nskip))"
echo "layout-check: $npass passed, $nfail failed, $nskip skipped"
[[ $nfail == 0 ]]
