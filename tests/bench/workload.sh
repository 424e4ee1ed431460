#!/bin/sh
# Real workloads inside the benchmark guest (busybox sh); run by
# bench-guest.sh once per configuration and repetition, with BENCH_CONFIG,
# BENCH_REP and BENCH_OPTIN in the environment.  Prints JSON lines.
#
#   alloc       alloc-stress (tests/bench/alloc-stress.c) with glibc's
#               malloc, glibc with a fixed mmap threshold (-m), jemalloc
#               5.3 (Debian's libjemalloc.a, linked statically)
#   tcc-lua     tcc (Debian's) compiling and linking Lua 5.4 (Debian's
#               source package) in one process: 33 files, about 30k lines
#   lua         the Lua just built running an allocation-heavy script
#               (tables and strings that grow: realloc)
# Each is timed without sampling; on repetition 1 it runs once more with
# its VMA count sampled (alloc-stress -S; vmawatch for tcc every 20 ms,
# for lua every 50 ms) for the peak and the plot.
DIR=$(cd "$(dirname "$0")" && pwd)
LUA_SRC=/work/lua/src
OUT=/tmp/wl
say() { echo "# $*"; }

alloc() { # VARIANT [-S]
	case $1 in
	glibc) "$DIR/alloc-glibc" -a glibc $2 ;;
	glibc-mmap) "$DIR/alloc-glibc" -a glibc-mmap -m $2 ;;
	jemalloc) "$DIR/alloc-jemalloc" -a jemalloc $2 ;;
	esac || say "alloc-stress $1 failed ($?)"
}
for a in glibc glibc-mmap jemalloc; do
	alloc $a
	[ "$BENCH_REP" = 1 ] && alloc $a -S
done

[ -x /usr/bin/tcc ] && [ -d $LUA_SRC ] || { say "no tcc or Lua source staged"; exit 0; }
rm -rf $OUT
mkdir -p $OUT
files=
for f in $LUA_SRC/*.c; do
	case $f in */luac.c) continue ;; esac
	files="$files $f"
done
tcc_lua() { # vmawatch options
	vmawatch "$@" -l tcc-lua -o $OUT/tcc.out -- tcc -DLUA_USE_POSIX -o $OUT/lua $files -lm
}
tcc_lua || say "tcc build of Lua failed ($?): $(cat $OUT/tcc.out)"
[ "$BENCH_REP" = 1 ] && { tcc_lua -i 20 || say "tcc build of Lua (sampled) failed"; }

LUA_SCRIPT='
local t = {}
for i = 1, 100000 do t[i] = tostring(i) .. "x" end
local s = table.concat(t)
local parts = {}
for r = 1, 10 do
	local u = {}
	for i = 1, 20000 do u[#u + 1] = string.rep("y", i % 97) end
	parts[r] = table.concat(u, ",")
end
local m = {}
for i = 1, 50000 do m["k" .. i] = i end
print(#s, #parts, #parts[10])'
if [ -x $OUT/lua ] && $OUT/lua -e 'print(1)' >/dev/null 2>&1; then
	lua_run() {
		vmawatch "$@" -l lua -o $OUT/lua.out -- $OUT/lua -e "$LUA_SCRIPT" ||
			say "lua failed ($?): $(cat $OUT/lua.out)"
	}
	lua_run
	# (an if, not "&&": as the script's last command a false test made
	# every repetition but the first end in "workload failed (1)")
	if [ "$BENCH_REP" = 1 ]; then lua_run -i 50; fi
else
	say "the Lua built by tcc does not run"
fi
