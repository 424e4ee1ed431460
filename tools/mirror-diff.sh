#!/bin/bash
# mirror-diff.sh SERIES REF-SRC NEW-SRC - does the kernel source NEW-SRC
# define what module/kernel-SERIES relies on exactly as REF-SRC does?
#
# Compared item by item, each the exact definition cut out of both trees,
# comments removed and blanks normalised (never whole files):
#   mirror   every function a module file says it mirrors
#            ("Mirrors NAME(), FILE:LINE" in module/ and module/kernel-SERIES/)
#   replaced every function the glue replaces or hooks (.old_name or
#            VMAMERGE_HOOK() in glue.c; a
#            __x64_sys_NAME is the SYSCALL_DEFINEn(NAME, ...) body)
#   called   every internal symbol of module/ksyms.list for SERIES
#            (functions: the body; data: the definition line)
#   decl     every struct and enum module/kernel-SERIES/mm_vma.h copies,
#            and the kernel's own helper behind each VMAMERGE_X() macro
#            and vmamerge_x() inline of that file
#   relied   every function of mm/rmap.c a comment of the module names
#            (the anon_vma life cycle the transplant relies on)
#   const    SWAP_ADDRESS_SPACE_SHIFT (verify_glue.c restates it)
# Output: "identical KIND NAME FILE" or "DIFFERENT KIND NAME FILE" with a
# unified diff of the normalised text, "missing ..." when either tree lacks
# it; "unlocated ..." for a symbol without a plain definition (generated
# by a macro, e.g. INTERVAL_TREE_DEFINE()); last line "mirror-diff: N
# identical, N different, N missing, N not located".
# An item that differs but whose normalised text in NEW-SRC is an accepted
# variant (module/variants.list: "func NAME VARIANT SHA256") counts as
# "variant KIND NAME FILE VARIANT": the build then needs that variant of
# the module's mirror (Kbuild's -DVMAMERGE_VARIANT_*); with
# MIRROR_DIFF_VARIANTS=FILE the variants found are written there.
# Exit 0 only when everything is identical or an accepted variant.
# MIRROR_DIFF_ITEMS=1: only list the items.
#
# mirror-diff.sh --hash TREE FILE NAME: the SHA256 of NAME's normalised
# definition in TREE/FILE (what a "func" line of variants.list holds).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mod=$repo/module
variants_list=$mod/variants.list
if [[ ${1:-} == --hash ]]; then
	hash_mode=1
	series=-
	ref=${2:?usage: $0 --hash TREE FILE NAME} hfile=${3:?} hname=${4:?}
	new=$ref
else
	hash_mode=0
	series=${1:?usage: $0 SERIES REF-SRC NEW-SRC}
	ref=${2:?} new=${3:?}
fi
glue=$mod/kernel-$series
[[ $hash_mode == 1 || -d $glue ]] || { echo "mirror-diff: no $glue" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmamerge-mdiff.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# ---- the items: KIND NAME [FILE] ----
items() {
	local f n
	# "Mirrors NAME(), FILE:LINE" (any case of the M)
	grep -ohE '[Mm]irrors [A-Za-z0-9_]+\(\), [a-z0-9_/.-]+\.[ch]' "$glue"/*.c "$mod"/*.c 2>/dev/null |
		sed -E 's/^[Mm]irrors ([A-Za-z0-9_]+)\(\), (.*)$/mirror \1 \2/' | sort -u
	sed -n -e 's/.*\.old_name *= *"\([^"]*\)".*/\1/p' -e 's/^[[:space:]]*VMAMERGE_HOOK(\([a-z_0-9]*\)),.*/\1/p' "$glue/glue.c" |
		while read -r n; do echo "replaced $n"; done
	awk -v s="$series" '/^[ \t]*(#|$)/ { next } $1 == "*" || $1 == s { print "called " $2 }' \
		"$mod/ksyms.list"
	if [[ -f $glue/mm_vma.h ]]; then
		sed -nE 's/^(struct|enum) ([a-z_0-9]+) \{.*/decl \1:\2 mm\/vma.h/p' "$glue/mm_vma.h"
		grep -ohE '(VMAMERGE_[A-Z_0-9]+|vmamerge_[a-z_0-9]+)\(' "$glue/mm_vma.h" |
			sed -E 's/^(VMAMERGE_|vmamerge_)//; s/\($//' | sort -u |
			while read -r n; do
				grep -qE "(define $n\(|[ *]$n\()" "$ref/mm/vma.h" 2>/dev/null &&
					echo "decl $n mm/vma.h"
			done
	fi
	# The anon_vma life cycle the transplant relies on: every function of
	# mm/rmap.c that a comment of the module names ("dup_anon_vma()").
	grep -ohE '\b[a-z_0-9]+\(\)' "$mod"/*.[ch] "$glue"/*.[ch] | sed 's/()$//' | sort -u |
		while read -r n; do
			grep -qE "^([a-z_A-Z].*[ *]|\*)?$n\(" "$ref/mm/rmap.c" 2>/dev/null &&
				echo "relied $n mm/rmap.c"
		done
	if grep -qs VMAMERGE_SWAP_SPACE_SHIFT "$glue/verify_glue.c"; then
		for f in mm/swap.h include/linux/swap.h; do
			if grep -qs '^#define SWAP_ADDRESS_SPACE_SHIFT' "$ref/$f"; then
				echo "const SWAP_ADDRESS_SPACE_SHIFT $f"
				break
			fi
		done
	fi
	return 0
}

# where NAME is defined in TREE (mm/, kernel/, arch/x86/, then fs/, ipc/,
# security/ - callees of 6.1's do_mmap() mirror): a FILE
find_def() { # TREE NAME
	local t=$1 n=$2 pat
	if [[ $n == __x64_sys_* || $n == __do_sys_* ]]; then
		pat="^SYSCALL_DEFINE[0-9]\\(${n#__*_sys_},"
	else
		pat="^([a-z_A-Z].*[ *]|\\*)?$n([ (;=[]|$)"
	fi
	(cd "$t" && { grep -rlE --include='*.c' "$pat" mm kernel arch/x86/kernel arch/x86/mm 2>/dev/null |
		LC_ALL=C sort; grep -rlE --include='*.c' "$pat" fs ipc security 2>/dev/null |
		LC_ALL=C sort; } | head -n1) || true
}

# extract FILE NAME: the definition of NAME in FILE (function, syscall,
# struct:X, enum:X, macro or data), as it is in the file
extract() {
	awk -v n="$2" '
	function starts_def(l) {
		if (n ~ /^__(x64|do)_sys_/) {
			s = n; sub(/^__(x64|do)_sys_/, "", s)
			return index(l, "SYSCALL_DEFINE") == 1 && index(l, "(" s ",") > 0
		}
		if (n ~ /^(struct|enum):/) {
			k = n; sub(/:/, " ", k)
			return index(l, k " {") == 1
		}
		return l ~ ("^([A-Za-z_].*[ *]|\\*)?" n "\\(") && l !~ /^[ \t#]/
	}
	state == 0 && n !~ /:/ && $0 ~ ("^#define " n "([( \t]|$)") {
		print; while ($0 ~ /\\$/ && (getline) > 0) print; exit
	}
	state == 0 && starts_def($0) {
		if (prev !~ /(;|\}|\*\/|^)$/ && prev !~ /^[ \t#]/) print prev
		state = 1
	}
	state == 1 {
		print
		if ($0 ~ /^\}/) exit
		# a prototype, not a definition: start over
		if ($0 ~ /\);$/ && !body) { state = 0; next }
		if ($0 ~ /^\{/) body = 1
		next
	}
	state == 0 && n !~ /:/ && $0 ~ ("^[A-Za-z_].*[ *]" n "([ ;=[]|$)") { print; exit }
	{ prev = $0 }' "$1"
}

# normalise: comments out, blanks collapsed, empty lines dropped
norm() {
	perl -0pe 's{/\*.*?\*/}{ }gs; s{//[^\n]*}{}g' | sed -E 's/[[:space:]]+/ /g; s/^ //; s/ $//' | grep -v '^$' || true
}

# the accepted variant of NAME whose normalised text is in FILE, if any
variant_of() { # NAME FILE
	local h
	[[ -f $variants_list ]] || return 0
	h=$(sha256sum <"$2" | cut -c1-64)
	awk -v n="$1" -v h="$h" '$1 == "func" && $2 == n && $4 == h { print $3; exit }' "$variants_list"
}

if [[ $hash_mode == 1 ]]; then
	extract "$ref/$hfile" "$hname" | norm >"$tmp/h"
	[[ -s $tmp/h ]] || { echo "mirror-diff: no $hname in $ref/$hfile" >&2; exit 1; }
	sha256sum <"$tmp/h" | cut -c1-64
	exit 0
fi

nid=0 ndiff=0 nmiss=0 nunl=0 nvar=0 found_variants=()
declare -A seen=()
while read -r kind name file; do
	[[ -n ${kind:-} ]] || continue
	[[ -z ${seen[$name]:-} ]] || continue	# a mirror that is also replaced
	seen[$name]=1
	if [[ ${MIRROR_DIFF_ITEMS:-0} == 1 ]]; then
		echo "$kind $name ${file:-}"
		continue
	fi
	[[ -n ${file:-} ]] || file=$(find_def "$ref" "$name")
	key=$name
	if [[ -z $file || ! -f $ref/$file ]]; then
		# e.g. anon_vma_interval_tree_*(), made by INTERVAL_TREE_DEFINE()
		echo "unlocated $kind $name (no plain definition in the reference tree: not compared)"
		nunl=$((nunl + 1))
		continue
	fi
	extract "$ref/$file" "$key" | norm >"$tmp/a"
	if [[ ! -f $new/$file ]]; then
		: >"$tmp/b"
	else
		extract "$new/$file" "$key" | norm >"$tmp/b"
	fi
	if [[ ! -s $tmp/a || ! -s $tmp/b ]]; then
		echo "missing $kind $name $file (reference: $(wc -l <"$tmp/a") lines, new: $(wc -l <"$tmp/b") lines)"
		nmiss=$((nmiss + 1))
	elif cmp -s "$tmp/a" "$tmp/b"; then
		echo "identical $kind $name $file ($(wc -l <"$tmp/a") lines)"
		nid=$((nid + 1))
	elif v=$(variant_of "$name" "$tmp/b") && [[ -n $v ]]; then
		echo "variant $kind $name $file $v (module/variants.list)"
		nvar=$((nvar + 1))
		found_variants+=("$v")
	else
		echo "DIFFERENT $kind $name $file"
		diff -U2 --label "$name (reference)" --label "$name (new)" "$tmp/a" "$tmp/b" | sed 's/^/    /' || true
		ndiff=$((ndiff + 1))
	fi
done < <(items)
[[ ${MIRROR_DIFF_ITEMS:-0} == 1 ]] && exit 0
[[ -z ${MIRROR_DIFF_VARIANTS:-} ]] ||
	printf '%s\n' "${found_variants[@]}" | sed '/^$/d' | sort -u >"$MIRROR_DIFF_VARIANTS"
echo "mirror-diff: $nid identical, $nvar accepted variants, $ndiff different, $nmiss missing, $nunl not located"
((ndiff == 0 && nmiss == 0))
