#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-tailcalls.sh - no livepatch replacement function may leave its own
# code before the code it calls is done.
#
#   sh module/check-tailcalls.sh [--array SYMBOL] vmamerge.ko
#   sh module/check-tailcalls.sh --selftest
#
# Livepatch decides that a task has switched (and, on disable, that the
# module's text may be freed) by looking for the replacement functions'
# own frames on its stack (kernel/livepatch/transition.c,
# klp_check_stack_func).  A replacement function that ends in a sibling
# call ("jmp helper") has no frame while the helper runs: a task asleep in
# the helper counts as switched, and rmmod frees the text it returns into.
# Kbuild builds the module with -fno-optimize-sibling-calls and without
# hot/cold splitting; this check proves the result from the disassembly.
#
# The replacement functions are the function pointers stored in the klp_func
# array SYMBOL (default vmamerge_glue_funcs, module/kernel-*/glue.c), read
# from the relocations of the object itself.  In each of them every jump
# must stay inside the function, except "jmp __x86_return_thunk" (the
# kernel's return with CONFIG_RETHUNK) and a jump into .altinstr_aux:
# static_cpu_has()'s slow path before alternatives are applied (a bit test
# of boot_cpu_data that jumps back into the function; nothing there calls
# or sleeps).  Indirect jumps, jumps to other
# symbols or sections (a ".cold" part in .text.unlikely) fail the check.
# Needs binutils (readelf, objdump >= 2.32), as every module build does.
set -eu

array=vmamerge_glue_funcs

# hex(s): the value of the hexadecimal string s (mawk has no strtonum)
awk_hex='function hex(s,  v, i, c) {
	sub(/^0x/, "", s); v = 0
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(tolower(s), i, 1))
		v = v * 16 + c - 1
	}
	return v
}'

# replacement_functions OBJ: "NAME START END" (hex, section offsets) of every
# function whose address the array ARRAY holds.
replacement_functions() {
	readelf -sW "$1" | awk -v arr="$array" '
		'"$awk_hex"'
		$8 == arr { ndx = $7; lo = hex($2); hi = lo + $3 }
		$4 == "FUNC" { f[++n] = $8; fs[n] = $7; fv[n] = $2; fz[n] = $3 }
		END {
			if (ndx == "") { print "no symbol " arr > "/dev/stderr"; exit 1 }
			printf "array %s %d %d\n", ndx, lo, hi
			for (i = 1; i <= n; i++)
				printf "func %s %s %s %d\n", f[i], fs[i], fv[i], fz[i]
		}' >"$tmp/syms"
	readelf -SW "$1" | sed -n 's/^ *\[ *\([0-9]*\)\] \([^ ]*\) .*/\1 \2/p' \
		>"$tmp/sections"
	readelf -rW "$1" >"$tmp/relocs"
	awk -v syms="$tmp/syms" -v secs="$tmp/sections" '
		'"$awk_hex"'
		BEGIN {
			while ((getline l < secs) > 0) {
				split(l, a, " "); secname[a[1]] = a[2]
			}
			while ((getline l < syms) > 0) {
				split(l, a, " ")
				if (a[1] == "array") {
					rela = ".rela" secname[a[2]]; lo = a[3]; hi = a[4]
				} else {
					fn[a[2]] = 1; sec[a[2]] = secname[a[3]]
					start[a[2]] = hex(a[4]); size[a[2]] = a[5]
				}
			}
		}
		/^Relocation section / { inrel = (index($0, "'\''" rela "'\''") > 0); next }
		inrel && NF >= 5 {
			off = hex($1)
			if (off < lo || off >= hi)
				next
			name = $5
			addend = $7 == "" ? 0 : hex($7)
			if (name in fn && addend == 0) {
				printf "%s %x %x\n", name, start[name], start[name] + size[name]
				found++
				next
			}
			# a static function may be referenced through its section
			for (f in fn)
				if (sec[f] == name && start[f] == addend) {
					printf "%s %x %x\n", f, start[f], start[f] + size[f]
					found++
				}
		}
		END { if (!found) { print "no function pointers in the array" > "/dev/stderr"; exit 1 } }
	' "$tmp/relocs" | sort -u
}

# check_function OBJ NAME START END: print every jump of NAME that leaves it.
check_function() {
	objdump -dr --no-show-raw-insn --disassemble="$2" "$1" |
	awk -v name="$2" -v lo="$((0x$3))" -v hi="$((0x$4))" '
		'"$awk_hex"'
		function flush() {
			if (pend == "")
				return
			if (target != "") {
				sub(/[-+]0x[0-9a-f]+$/, "", target)
				if (target != "__x86_return_thunk" &&
				    target != ".altinstr_aux")
					print name ": " pend "  -> " target
			} else if (pend ~ /\t[a-z ]*j[a-z]* +\*/) {
				print name ": " pend "  (indirect jump)"
			} else if (dest < lo || dest >= hi) {
				print name ": " pend "  (leaves the function)"
			}
			pend = ""
		}
		# relocation of the instruction just read
		/^[ \t]*[0-9a-f]+: R_X86_64_/ {
			if (pend != "") target = $NF
			next
		}
		/^ *[0-9a-f]+:\t/ {
			flush()
			line = $0
			split(line, part, "\t")
			insn = part[2]
			ntok = split(insn, tok, " ")
			mnem = ""
			for (i = 1; i <= ntok; i++)
				if (tok[i] ~ /^j/) { mnem = tok[i]; arg = tok[i + 1]; break }
			if (mnem == "")
				next
			pend = insn; target = ""
			dest = (arg ~ /^[0-9a-f]+$/) ? hex(arg) : lo
		}
		END { flush() }'
}

check_object() {
	replacement_functions "$1" >"$tmp/funcs"
	bad=0
	n=0
	while read -r fname fstart fend; do
		n=$((n + 1))
		out=$(check_function "$1" "$fname" "$fstart" "$fend")
		if [ -n "$out" ]; then
			printf '%s\n' "$out" >&2
			bad=$((bad + 1))
		fi
	done <"$tmp/funcs"
	if [ "$bad" -ne 0 ]; then
		echo "check-tailcalls: $bad of $n replacement functions in $1 leave their code early (a task asleep in the callee would count as switched and rmmod could free its text); build with -fno-optimize-sibling-calls -fno-reorder-blocks-and-partition" >&2
		return 1
	fi
	echo "check-tailcalls: $n replacement functions in $1 return into themselves"
}

# The check must reject a sibling call and a cold part, and accept the same
# code built without them.
selftest() {
	cat >"$tmp/t.c" <<'EOF'
extern int helper(int);
extern void report(const char *);
struct fn { const char *name; void *fn; };
int replaced(int x)
{
	if (__builtin_expect(x == 42, 0)) {
		report("cold");
		report("path");
	}
	return helper(x + 1);
}
struct fn vmamerge_glue_funcs[] = { { "replaced", replaced } };
EOF
	cc=${CC:-cc}
	$cc -O2 -c -foptimize-sibling-calls -o "$tmp/bad.o" "$tmp/t.c"
	$cc -O2 -c -fno-optimize-sibling-calls -fno-reorder-blocks-and-partition \
		-o "$tmp/good.o" "$tmp/t.c"
	if check_object "$tmp/bad.o" 2>"$tmp/err"; then
		echo "selftest: a sibling call was not caught" >&2
		return 1
	fi
	grep -q -- '-> helper' "$tmp/err" || {
		cat "$tmp/err" >&2
		echo "selftest: the sibling call was not named" >&2
		return 1
	}
	check_object "$tmp/good.o" >/dev/null || {
		echo "selftest: code without sibling calls was refused" >&2
		return 1
	}
	echo "check-tailcalls: selftest passed (a sibling call is refused, its fix accepted)"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "${1:-}" = --array ]; then
	array=$2
	shift 2
fi
case "${1:-}" in
--selftest) selftest ;;
"" | -*) echo "usage: $0 [--array SYMBOL] OBJECT | --selftest" >&2; exit 2 ;;
*) check_object "$1" ;;
esac
