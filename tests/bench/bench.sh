#!/bin/bash
# The body of `make bench`: what vmamerge costs and what it saves.
#
# For every full-tier build of module/builds.list (or BENCH_KERNELS): builds the module,
# the static CLI and the benchmark programs, boots one QEMU guest and runs
# tests/bench/bench-guest.sh there, which measures every configuration
# (stock, loaded, off, renumber, transplant, both) in that one boot. The
# JSON lines the guest prints go to
#   $VMAMERGE_CACHE/bench/<timestamp>/results.jsonl   (with "kernel" added)
# and tests/bench/report.py turns them into docs/benchmarks.md.
# Not part of `make check`.
#
# Environment:
#   BENCH_KERNELS       series to run, e.g. "6.12" (default: all full-tier builds)
#   BENCH_N             spacing: mappings (20000)
#   BENCH_REPS          repetitions of spacing and the workloads (2)
#   BENCH_ASLR          randomize_va_space in the guest (0: off)
#   BENCH_SPACING       spacing: shapes MODE[:DEST] (diff,same; spacing.c)
#   BENCH_MICRO_ROUNDS  micro: rounds (4)
#   BENCH_BIGMOVE_ROUNDS bigmove: rounds (1)
#   BENCH_SIZES         bigmove: sizes in MiB (4,64,1024)
#   BENCH_ICOUNT        QEMU -icount options (shift=0,sleep=off: the guest's
#                       clock counts executed instructions, 1 ns each, so the
#                       load of a shared host does not reach the figures);
#                       "off": wall-clock time
#   BENCH_SUITES        spacing,micro,bigmove,workload,profile (all; profile:
#                       the cost of a move function by function, ftrace)
#   BENCH_PROFILE_N     profile: spacing's mappings (2000)
#   BENCH_DEBUG         each build's debug twin as well (built by make check):
#                       spacing only, stock and both, N = BENCH_DEBUG_N (500:
#                       its O(#VMAs) checks cost ~40 ms per move at N = 2000;
#                       ~3 min for both twins) - the thesis anchor. "auto"
#                       (default): the twins make check has built; 1: all
#                       (an error if one is missing); 0: none
#   BENCH_GUEST_TIMEOUT seconds per guest (5400)
#   BENCH_DOC           where the report goes (docs/benchmarks.md); "-": nowhere
#   VMAMERGE_CACHE, VMAMERGE_SKIP_SETUP=1 (as for make check)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
export VMAMERGE_CACHE=$cache
# kdir_of, kdir_ready, kdir_missing_msg
# shellcheck source=../lib.sh
source "$repo/tests/lib.sh"
jobs=$(nproc)

now() { printf '%s' "$EPOCHREALTIME"; }
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }'; }
show_tail() { # FILE N
	echo "--- last $2 lines of $1:"
	tail -n "$2" "$1" | tr -d '\r' | sed 's/^/  | /'
}
# the full-tier builds of module/builds.list, restricted to BENCH_KERNELS
series=() releases=()
read_matrix() {
	local s r v d
	while read -r s r v _; do
		series+=("$s") releases+=("$r")
		# BENCH_DEBUG (auto, 1): the debug twin too (the thesis anchor:
		# DEBUG_VM_MAPLE_TREE, DEBUG_VM_RB), once make check has built it
		d=$(debug_release_of "$v")
		case ${BENCH_DEBUG:-auto} in
		1) ;;
		auto) [[ -f $cache/kernels/$d/boot/vmlinuz-$d ]] || continue ;;
		*) continue ;;
		esac
		series+=("$s-debug") releases+=("$d")
	done < <(builds_of full)
	((${#series[@]})) || die "no full-tier build of module/builds.list selected (BENCH_KERNELS='${VMAMERGE_KERNELS:-}')"
}
stage_module_src() { # DEST: what the module build needs, as tests/check.sh copies it
	local f
	rm -rf "$1"
	mkdir -p "$1"
	for f in Kbuild Makefile module dkms.conf; do
		cp -a "$repo/$f" "$1/"
	done
}

say() { printf '=== %s\n' "$*"; }
die() { printf 'bench: ERROR: %s\n' "$*" >&2; exit 1; }

VMAMERGE_KERNELS=${BENCH_KERNELS:-${VMAMERGE_KERNELS:-}}
export VMAMERGE_KERNELS
stamp=$(date +%Y%m%d-%H%M%S)
out=$cache/bench/$stamp
results=$out/results.jsonl
doc=${BENCH_DOC:-$repo/docs/benchmarks.md}
t_all=$(now)


mkdir -p "$out"
exec 8>"$cache/.bench.lock"
if ! flock -n 8; then
	echo "bench: another make bench is running; waiting for it" >&2
	flock 8
fi
# keep the last 10 result directories
mapfile -t old < <(find "$cache/bench" -mindepth 1 -maxdepth 1 -type d -name '20*' | LC_ALL=C sort | head -n -10)
((${#old[@]} == 0)) || rm -rf "${old[@]}"
read_matrix
say "vmamerge bench: kernels ${releases[*]}; results $out"

if [[ ${VMAMERGE_SKIP_SETUP:-0} != 1 ]]; then
	say "setup (tests/setup.sh)"
	bash "$repo/tests/setup.sh"
fi
command -v python3 >/dev/null || die "python3 missing (tests/setup.sh installs it)"

# ---- workloads: tcc, libc, Lua source, jemalloc from Debian's archive ------
wl=$cache/bench/workload
jemalloc=
if [[ " ${BENCH_SUITES:-workload} " == *workload* ]]; then
	say "workload files (tests/bench/prepare-workloads.sh $wl)"
	if bash "$here/prepare-workloads.sh" "$wl" >"$out/prepare-workloads.log" 2>&1; then
		jemalloc=$wl/libjemalloc.a
		cp "$wl/versions" "$out/workload-versions"
	else
		show_tail "$out/prepare-workloads.log" 20
		echo "bench: workload files unavailable: the workload suite runs without tcc/Lua/jemalloc"
	fi
fi

# ---- builds ------------------------------------------------------------------
for rel in "${releases[@]}"; do
	kdir_ready "$rel" || die "$(kdir_missing_msg "$rel")"
	src=$cache/bench/build/$rel
	say "module for $rel ($src)"
	stage_module_src "$src"
	if ! make -C "$src" -j"$jobs" KDIR="$(kdir_of "$rel")" KVER="$rel" module \
		>"$out/build-$rel.log" 2>&1; then
		show_tail "$out/build-$rel.log" 40
		die "module build for $rel failed"
	fi
done
say "CLI (static) and benchmark programs"
make -s -C "$repo/userspace" static >"$out/build-cli.log" 2>&1 || {
	show_tail "$out/build-cli.log" 20
	die "CLI build failed"
}
make -s -C "$here" OUT="$out/bin" JEMALLOC="$jemalloc" >"$out/build-bench.log" 2>&1 || {
	show_tail "$out/build-bench.log" 20
	die "benchmark programs build failed"
}

# ---- guests ------------------------------------------------------------------------
append=""
for v in BENCH_N BENCH_REPS BENCH_SPACING BENCH_ASLR BENCH_MICRO_ROUNDS BENCH_BIGMOVE_ROUNDS BENCH_SIZES BENCH_SUITES \
	BENCH_MOVES BENCH_MICRO BENCH_CONFIGS BENCH_WORKLOAD_REPS BENCH_PROFILE_N; do
	val=${!v:-}
	[[ -n $val ]] && append+=" $v=${val// /,}"
done
: >"$results"
icount=${BENCH_ICOUNT:-shift=0,sleep=off}
if [[ $icount == off ]]; then icount=""; else icount="-icount $icount"; fi
echo "{\"bench\":\"host\",\"icount\":\"${icount:-off}\",\"host_nproc\":$(nproc),\"host_load\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}" >>"$results"
# the parameters of this run, for the report: every BENCH_* setting and
# VMAMERGE_SKIP_SETUP as given (unset ones take the defaults above and in
# bench-guest.sh, which the guest's "meta" line records as applied)
python3 -c 'import json, os
env = {k: v for k, v in sorted(os.environ.items())
       if k.startswith("BENCH_") or k == "VMAMERGE_SKIP_SETUP"}
print(json.dumps({"bench": "params", "env": env}, separators=(",", ":")))' >>"$results"
failed=()
for i in "${!releases[@]}"; do
	rel=${releases[$i]}
	stage=$out/stage-$rel
	initrd=$out/initrd-$rel.cpio.gz
	log=$out/guest-$rel.log
	rm -rf "$stage"
	mkdir -p "$stage/lib/vmamerge" "$stage/bin" "$stage/tests"
	cp "$cache/bench/build/$rel/vmamerge.ko" "$stage/lib/vmamerge/"
	cp "$repo/userspace/vmamerge.static" "$stage/bin/vmamerge"
	cp -a "$out/bin/." "$stage/tests/"
	[[ -n $jemalloc && -d $wl/root ]] && cp -a "$wl/root/." "$stage/"
	# the debug twins have zram built in (tests/debug-kernel) and run
	# spacing only: their O(#VMAs) checks are what they are there for
	gmods=zram gappend=$append
	if [[ $rel == *-vmamerge-debug ]]; then
		gmods="" gappend=""
		for w in $append; do
			case $w in
			BENCH_SUITES=* | BENCH_N=* | BENCH_CONFIGS=*) ;;
			*) gappend+=" $w" ;;
			esac
		done
		gappend+=" BENCH_SUITES=spacing BENCH_N=${BENCH_DEBUG_N:-500}"
		gappend+=" BENCH_CONFIGS=stock,both"
	fi
	VMAMERGE_GUEST_MODULES=$gmods \
		bash "$repo/tests/qemu/mkinitramfs.sh" "$rel" "$initrd" "$stage"
	rm -rf "$stage"
	say "booting $rel: the benchmarks take a while under TCG (log: $log)"
	t0=$(now)
	set +e
	# One vCPU: -icount needs single-threaded TCG, and the figures of
	# docs/benchmarks.md were measured on one.
	VMAMERGE_GUEST_APPEND="${gappend# }" VMAMERGE_STREAM_PREFIX="  ${series[$i]}| " \
		VMAMERGE_GUEST_CPUS=${VMAMERGE_GUEST_CPUS:-1} \
		VMAMERGE_QEMU_EXTRA="${VMAMERGE_QEMU_EXTRA:-} $icount" \
		bash "$repo/tests/qemu/run-guest.sh" "$rel" "$initrd" "$log" \
		"${BENCH_GUEST_TIMEOUT:-5400}" | grep --line-buffered -v '^  [^|]*| {'
	rc=${PIPESTATUS[0]}
	set -e
	rm -f "$initrd"
	echo "bench: $rel guest took $(since "$t0") s"
	((rc == 0)) || failed+=("$rel")
	tr -d '\r' <"$log.results" | grep -a '^{' |
		python3 -c 'import sys, json
rel = sys.argv[1]
for line in sys.stdin:
    try:
        o = json.loads(line)
    except ValueError:
        continue
    o["kernel"] = rel
    print(json.dumps(o, separators=(",", ":")))' "$rel" >>"$results" || true
done

# ---- report ----------------------------------------------------------------------
total=$(since "$t_all")
echo "{\"bench\":\"total\",\"seconds\":$total}" >>"$results"
if [[ $doc != - ]]; then
	say "report: $doc"
	# the plots need matplotlib: Debian's python3-matplotlib serves
	# /usr/bin/python3, which need not be the first python3 on PATH; it is
	# installed here, not by tests/setup.sh (make check draws nothing)
	if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null &&
		[[ $(id -u) -eq 0 ]]; then
		say "installing python3-matplotlib for the plots"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends -o Dpkg::Use-Pty=0 python3-matplotlib >/dev/null ||
			echo "bench: python3-matplotlib not installed: the report will have no plots"
	fi
	py=python3
	for p in python3 /usr/bin/python3; do
		if command -v "$p" >/dev/null && "$p" -c 'import matplotlib' 2>/dev/null; then
			py=$p
			break
		fi
	done
	"$py" "$here/report.py" "$results" --out "$doc" --seconds "$total" \
		--versions "$out/workload-versions" --failed "${failed[*]:-}"
fi
echo "bench: results $results ($(wc -l <"$results") lines), ${total} s in all"
if ((${#failed[@]})); then
	echo "bench: guest run FAILED on: ${failed[*]} (see $out/guest-*.log)"
	exit 1
fi
