#!/bin/bash
# The body of `make check` and `make check-long`: setup, builds, static
# checks, QEMU guests.
#
# Two parts (VMAMERGE_CHECK):
#   landing  `make check`, the README's test command and CI's: setup, the
#            full- and smoke-tier builds (W=1, sparse, dkms), every static and
#            host test, the Debian packages, the stock and smoke guests and the
#            lab systems; and the record that `make check-long` passed on this
#            very module (tests/long-record.sh): a module change lands only
#            after the long part ran on it.
#   long     `make check-long`: the debug twins (built from the Debian sources,
#            their W=1 and dkms builds, their guest suites) and the SMP set on
#            the full-tier builds; when everything passes it writes
#            tests/long-check.record, which is committed with the change.
#   all      both in one run (writes the record too).
#
# Every step prints `ok - <step>`, `ok - <step> # SKIP <why>` or
# `not ok - <step>`; the guests' own TAP lines are added prefixed with the
# kernel release. The last line is `P passed, F failed, S skipped` (P counts
# ok lines without SKIP). Exit status 1 if anything failed.
#
# Environment:
#   VMAMERGE_CACHE          cache dir (default /var/cache/vmamerge)
#   VMAMERGE_KERNELS        series to test, e.g. "6.12" (default: all of module/builds.list)
#   VMAMERGE_SKIP_SETUP=1   do not run tests/setup.sh
#   VMAMERGE_GUEST_TIMEOUT  seconds per guest (default 1800, 2700 for a debug twin:
#                           the 6.1 twin took 1630-1800 s next to a lab; the guest
#                           suite budgets up to 1200 s for its load/unload cycles alone)
#   VMAMERGE_GUEST_APPEND   extra guest kernel arguments; NAME=VALUE words become
#                           environment of the guest tests (e.g. VMAMERGE_CYCLES=5)
#   VMAMERGE_CHECK          landing (default), long or all (above)
#   VMAMERGE_DEBUG=0        leave out the debug kernels (a developer shortcut;
#                           no record is written without them)
#   VMAMERGE_SMOKE=0        leave out the smoke-tier builds (the same)
#   VMAMERGE_LAB=0          leave out the lab test (tests/lab/: a real Debian 12
#                           and 13 system end to end; a developer shortcut)
#   VMAMERGE_LAB_SUITES     the lab's systems (default "trixie bookworm")
#   VMAMERGE_LAB_TIMEOUT    seconds per lab boot (default 2400 here)
#   VMAMERGE_DEB_SUITES     suites whose build roots build the Debian packages
#                           (tests/deb-test.sh; default "bookworm")
#
# Kernels: each full-tier build of module/builds.list ("stock") and its debug twin, built
# from the same Debian linux-source by tests/debug-kernel/build.sh (KASAN,
# lockdep, DEBUG_VM, ...; cached by version and config fragment), and each
# smoke-tier build (module build in its compiler's root, the smoke set).
#
# Logs: $VMAMERGE_CACHE/logs/<timestamp>/ (the last 10 runs are kept).
# demo.sh sources this file for its helpers (main runs only when executed).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
export VMAMERGE_CACHE=$cache
# kdir_of RELEASE: the unpacked header tree tests/setup.sh made for RELEASE.
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$repo/tests/lib.sh"
# The full tier as tests/setup.sh resolved it against the archive
# (tests/matrix.sh; builds_of reads it).
export VMAMERGE_MATRIX=${VMAMERGE_MATRIX:-$cache/matrix/full}
# What the module build needs from the repo (copied per kernel).
module_files=(Kbuild Makefile module dkms.conf)
jobs=$(nproc)

logroot=$cache/logs
logdir=$logroot/$(date +%Y%m%d-%H%M%S)
tapfile=$logdir/tap.txt
timings=()
# (sourced by quick.sh, soak.sh, demo.sh: every kernel of the matrix)
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	check_part=${VMAMERGE_CHECK:-landing}
else
	check_part=${VMAMERGE_CHECK:-all}
fi
case $check_part in
landing | long | all) ;;
*)
	echo "check: VMAMERGE_CHECK must be landing, long or all, not '$check_part'" >&2
	exit 2
	;;
esac
# in_part PART...: this run includes one of the parts named
in_part() {
	local p
	for p; do
		[[ $check_part == all || $check_part == "$p" ]] && return 0
	done
	return 1
}

# ---- reporting -----------------------------------------------------------------
tap() { # LINE: print a TAP-ish line and record it for the totals
	printf '%s\n' "$*"
	printf '%s\n' "$*" >>"$tapfile"
}
now() { printf '%s' "$EPOCHREALTIME"; }
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# run_step NAME FUNC ARGS...: runs FUNC in a subshell with errexit in force;
# exit 0 = ok, anything else = not ok.
run_step() {
	local name=$1 t0 rc
	shift
	t0=$(now)
	echo "=== $name"
	set +e
	(
		set -e
		"$@"
	)
	rc=$?
	set -e
	timings+=("$(printf '%8ss  %s' "$(since "$t0")" "$name")")
	if ((rc == 0)); then
		tap "ok - $name"
	else
		tap "not ok - $name"
	fi
	return 0
}

show_tail() { # FILE [N]
	echo "--- last ${2:-40} lines of $1:"
	tail -n "${2:-40}" "$1" | tr -d '\r' | sed 's/^/  | /'
	echo "---"
}

# ---- the matrix ------------------------------------------------------------------
# releases[i] is a kernel under test, series[i] its series and kinds[i]
# "stock" (a full-tier build), "debug" (its twin) or "smoke" (a smoke-tier
# build); stock ones come first.
series=() releases=() kinds=()
read_matrix() {
	local s r v dseries=() dreleases=()
	while read -r s r v _; do
		series+=("$s") releases+=("$r") kinds+=(stock)
		dseries+=("$s") dreleases+=("$(debug_release_of "$v")")
	done < <(builds_of full)
	if [[ ${VMAMERGE_DEBUG:-1} != 0 ]] && in_part long; then
		for s in "${!dseries[@]}"; do
			series+=("${dseries[$s]}") releases+=("${dreleases[$s]}") kinds+=(debug)
		done
	fi
	# Smoke-tier builds (ported by tools/port.sh): the module build and the
	# smoke set, no debug twin (VMAMERGE_SMOKE=0 leaves them out).
	if [[ ${VMAMERGE_SMOKE:-1} != 0 ]] && in_part landing; then
		while read -r s r _; do
			series+=("$s") releases+=("$r") kinds+=(smoke)
		done < <(builds_of smoke)
	fi
	if ((${#series[@]} == 0)); then
		echo "check: no build of module/builds.list selected (VMAMERGE_KERNELS='${VMAMERGE_KERNELS:-}')" >&2
		exit 1
	fi
}

# report_followed: one line per full-tier build the run tests in place of
# a listed one (tests/matrix.sh), so the totals say which kernels ran
report_followed() {
	local i f
	for i in "${!releases[@]}"; do
		f=$(followed_of "${releases[$i]}")
		[[ -z $f ]] || tap "ok - full tier: ${releases[$i]} in place of $f (the newest build of its flavour in the archive, equivalent to it by kfp check)"
	done
	return 0
}

# ---- steps ---------------------------------------------------------------------------
step_setup() { bash "$repo/tests/setup.sh"; }

step_debug_kernel() { # SERIES RELEASE
	local log=$logdir/debug-kernel-$1.log rel
	echo "tests/debug-kernel/build.sh $1  (log: $log; kernel build log in $cache/debug/)"
	if ! rel=$(bash "$repo/tests/debug-kernel/build.sh" "$1" 2>"$log"); then
		show_tail "$log" 40
		return 1
	fi
	cat "$log"
	[[ $rel == "$2" ]] || { echo "build.sh made $rel, expected $2"; return 1; }
}

build_dir() { echo "$cache/build/$1/src"; }

stage_module_src() { # DEST [RELEASE]: copy what the module build needs
	local dest=$1 f
	rm -rf "$dest"
	mkdir -p "$dest"
	for f in "${module_files[@]}"; do
		[[ -e $repo/$f ]] && cp -a "$repo/$f" "$dest/"
	done
	[[ -z ${2:-} ]] || list_followed_twin "$2" "$dest/module/builds.list"
	return 0
}

# list_followed_twin RELEASE LIST: when RELEASE is the debug twin of a
# full-tier build the run follows (tests/matrix.sh), add that build's line
# to the staged LIST: the twin is built from the followed build's source,
# and the module's table names a twin by the Debian version of the full
# build it twins (module/builds.awk).  The followed build itself is built
# from the list as it is: admitted by equivalence, as on a user's machine.
list_followed_twin() {
	local r=$1 list=$2 s fr v
	[[ $r == *-vmamerge-debug ]] || return 0
	while read -r s fr v _; do
		[[ -n $(followed_of "$fr") && $(debug_release_of "$v") == "$r" ]] || continue
		printf '%s %s %s full %s\n' "$s" "$fr" "$v" "$(uts_version_of "$fr")" >>"$list"
	done < <(builds_of full)
}

# admission_env RELEASE: for a followed build (tests/matrix.sh), what the
# equivalence check reads on a user's machine from /boot: its image, its
# config and kfp (module/admit.sh; VAR=VALUE words for env), else nothing
admission_env() {
	local boot=$cache/kernels/$1/boot
	[[ -n $(followed_of "$1") ]] || return 0
	[[ -x $repo/tools/kfp/kfp ]] || make -s -C "$repo/tools/kfp" >&2
	printf '%s\n' "VMLINUZ=$boot/vmlinuz-$1" "KCONFIG=$boot/config-$1" "KFP=$repo/tools/kfp/kfp"
}

# Warnings the project owns: compiler warnings/errors in files of the build
# tree (not in the kernel headers), and modpost's warnings.
own_warnings() { # LOG SRCDIR
	tr -d '\r' <"$1" | awk -v src="$2/" '
		/WARNING: modpost:/ { print; next }
		/: (warning|error):/ {
			path = $0; sub(/:.*/, "", path)
			if (index(path, src) == 1) { print; next }
			if (path ~ /^\// || path ~ /^(\.\/)?(include|arch|scripts)\//) next
			print
		}'
}

# need_kdir RELEASE: from inside a step: the header tree of RELEASE, or fail
need_kdir() {
	kdir_ready "$1" || { kdir_missing_msg "$1" >&2; return 1; }
	kdir_of "$1"
}

step_build() { # RELEASE
	local rel=$1 src log warn kdir root
	kdir=$(need_kdir "$rel")
	src=$(build_dir "$rel")
	log=$logdir/build-$rel.log
	stage_module_src "$src" "$rel"
	root=$(build_root_of "$rel")
	local adm=()
	mapfile -t adm < <(admission_env "$rel")
	echo "make -C $src KDIR=$kdir KVER=$rel W=1 ${adm[*]} module${root:+ in $root}  (log: $log)"
	if ! in_build_root "$root" make -C "$src" -j"$jobs" KDIR="$kdir" KVER="$rel" W=1 "${adm[@]}" module >"$log" 2>&1; then
		show_tail "$log" 60
		return 1
	fi
	[[ -f $src/vmamerge.ko ]] || { echo "no vmamerge.ko at the top of $src"; return 1; }
	warn=$(own_warnings "$log" "$src")
	if [[ -n $warn ]]; then
		echo "W=1 warnings in the project's files:"
		printf '%s\n' "$warn" | sed 's/^/  | /'
		return 1
	fi
}

# step_build_unlisted RELEASE: the module built with RELEASE left out of
# module/builds.list, into build/RELEASE/unlisted/, as a user's machine
# builds it for a build the list does not name: the equivalence check
# (module/admit.sh) reads RELEASE's image and config and admits it,
# equivalent to another listed build; the smoke set loads that module
# (admitted.ko) and merges with it.  forged.ko is the same build with a
# wrong build id in its record (a stand-in admit.sh writes it): the smoke
# set sees the load refuse it.  The CLI is built with the same list.
step_build_unlisted() {
	local rel=$1 src=$cache/build/$1/unlisted root log=$logdir/build-unlisted-$1.log
	local boot=$cache/kernels/$1/boot kdir tier
	kdir=$(need_kdir "$rel")
	stage_module_src "$src"
	awk -v r="$rel" '$2 != r' "$repo/module/builds.list" >"$src/module/builds.list"
	root=$(build_root_of "$rel")
	[[ -z $root ]] || { echo "the unlisted build must be one the host's compiler builds: $rel"; return 1; }
	[[ -x $repo/tools/kfp/kfp ]] || make -s -C "$repo/tools/kfp" || return 1
	if ! make -C "$src" -j"$jobs" KDIR="$kdir" KVER="$rel" VMLINUZ="$boot/vmlinuz-$rel" \
		KCONFIG="$boot/config-$rel" KFP="$repo/tools/kfp/kfp" module >"$log" 2>&1; then
		show_tail "$log" 40
		return 1
	fi
	grep "^vmamerge: kernel $rel is equivalent to the validated build " "$log" || {
		show_tail "$log" 20
		return 1
	}
	tier=$(modinfo -F tier "$src/vmamerge.ko")
	echo "modinfo -F tier: $tier"
	[[ $tier == "equivalent "* ]] || return 1
	cp "$src/vmamerge.ko" "$src/admitted.ko"
	# the same module, its record's build id forged
	cp -a "$src" "$src.forged"
	printf '#!/bin/sh\nsed "s/ [0-9a-f]\\{40\\} / 00112233445566778899aabbccddeeff00112233 /" "%s" >"$2"\n' \
		"$src/admitted.list" >"$src.forged/module/admit.sh"
	if ! make -C "$src.forged" -j"$jobs" KDIR="$kdir" KVER="$rel" module >"$log.forged" 2>&1; then
		show_tail "$log.forged" 40
		return 1
	fi
	modinfo -F equivalent "$src.forged/vmamerge.ko" | grep -q "build id 00112233445566778899aabbccddeeff00112233" || return 1
	cp "$src.forged/vmamerge.ko" "$src/forged.ko"
	rm -rf "$src.forged"
	# and the CLI with the same list (out of tree)
	mkdir -p "$src/cli"
	make -s -f "$repo/userspace/Makefile" -C "$src/cli" static BUILDS_LIST="$src/module/builds.list"
}

# The equivalence check on real images, its refusals and bad input
# (tests/admit-test.sh), and the validated builds' fingerprints being
# what their images give (tools/fingerprints.sh --check).
step_admit_test() {
	bash "$repo/tests/admit-test.sh" 2>&1 | sed 's/^/  /'
}
step_fingerprints_check() {
	bash "$repo/tools/fingerprints.sh" --check
}
step_kfp_test() {
	bash "$repo/tests/kfp/kfp-test.sh" 2>&1 | sed 's/^/  /'
}
step_cli_check_kernel() {
	bash "$repo/tests/cli-check-kernel.sh" 2>&1 | sed 's/^/  /'
}

step_sparse() { # RELEASE
	local rel=$1 src log warn kdir
	kdir=$(need_kdir "$rel")
	# A tree of its own: a second `make module` in the W=1 tree would run the
	# post-link converter again on the .ko the guest boots.
	src=$cache/build/$rel/sparse
	stage_module_src "$src"
	log=$logdir/sparse-$rel.log
	local adm=()
	mapfile -t adm < <(admission_env "$rel")
	echo "make -C $src KDIR=$kdir KVER=$rel C=2 CHECK=sparse ${adm[*]} module  (log: $log)"
	if ! make -C "$src" -j"$jobs" KDIR="$kdir" KVER="$rel" C=2 CHECK=sparse "${adm[@]}" module >"$log" 2>&1; then
		show_tail "$log" 60
		return 1
	fi
	warn=$(tr -d '\r' <"$log" | grep -E "(^|/)module/[^:]+:[0-9]+:[0-9]+: (warning|error):" || true)
	if [[ -n $warn ]]; then
		echo "sparse warnings:"
		printf '%s\n' "$warn" | sed 's/^/  | /'
		return 1
	fi
}

dkms_version() {
	sed -nE 's/^[[:space:]]*PACKAGE_VERSION[[:space:]]*=[[:space:]]*"?([^"[:space:]]+)"?.*/\1/p' "$repo/dkms.conf" | head -n1
}

step_dkms() { # RELEASE
	local rel=$1 ver log stage rc kdir
	kdir=$(need_kdir "$rel")
	ver=$(dkms_version)
	[[ -n $ver ]] || { echo "dkms.conf has no PACKAGE_VERSION"; return 1; }
	stage=$cache/dkms-src/vmamerge-$ver
	stage_module_src "$stage" "$rel"
	rm -rf "$cache/dkms/vmamerge"
	mkdir -p "$cache/dkms"
	log=$logdir/dkms-$rel.log
	# --kernelsourcedir: dkms's own checks (.config, BUILD_EXCLUSIVE_CONFIG, CC
	# from .kernelvariables) and its default make command use the unpacked
	# tree. dkms.conf's MAKE[0] ("make module KVER=...") does not pass it on:
	# KDIR in the environment reaches the Makefile's "KDIR ?=". Everything
	# dkms writes for `build` goes to --dkmstree; nothing under /lib/modules.
	echo "dkms build -m vmamerge -v $ver -k $rel --kernelsourcedir $kdir  (log: $log)"
	local adm=()
	mapfile -t adm < <(admission_env "$rel")
	set +e
	env KDIR="$kdir" "${adm[@]}" dkms build --dkmstree "$cache/dkms" --sourcetree "$cache/dkms-src" \
		--kernelsourcedir "$kdir" -m vmamerge -v "$ver" -k "$rel" >"$log" 2>&1
	rc=$?
	set -e
	if ((rc != 0)); then
		show_tail "$log" 30
		[[ -f $cache/dkms/vmamerge/$ver/build/make.log ]] &&
			show_tail "$cache/dkms/vmamerge/$ver/build/make.log" 40
		echo "dkms build exit status $rc"
		return 1
	fi
}

checkpatch_script() { # the newest linux-source tree that is there
	local s
	for s in 6.12 6.1; do
		if [[ -f $cache/src/linux-source-$s/scripts/checkpatch.pl ]]; then
			echo "$cache/src/linux-source-$s/scripts/checkpatch.pl"
			return 0
		fi
	done
	return 1
}

step_checkpatch() {
	local cp files=() ignore=() out
	cp=$(checkpatch_script) || { echo "no checkpatch.pl under $cache/src (run tests/setup.sh)"; return 1; }
	mapfile -t files < <(cd "$repo" && find module -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
	((${#files[@]})) || { echo "checkpatch: no .c/.h files under module/" >&2; exit 1; }
	if [[ -f $repo/tests/checkpatch.ignore ]]; then
		mapfile -t ignore < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$repo/tests/checkpatch.ignore" | grep -v '^$')
	fi
	local args=(--no-tree --show-types --no-summary --terse -f)
	((${#ignore[@]})) && args=(--ignore "$(
		IFS=,
		echo "${ignore[*]}"
	)" "${args[@]}")
	echo "checkpatch.pl ${args[*]} (${#files[@]} files)"
	out=$(cd "$repo" && { perl "$cp" "${args[@]}" "${files[@]}" 2>&1 || :; })
	if grep -Eq '(^|: )(ERROR|WARNING)' <<<"$out"; then
		grep -E '(^|: )(ERROR|WARNING)' <<<"$out" | sed 's/^/  | /'
		return 1
	fi
}

step_userspace_static() {
	make -C "$repo/userspace" static
	[[ -x $repo/userspace/vmamerge.static ]] || { echo "userspace/vmamerge.static was not built"; return 1; }
}

step_userspace_test() {
	make -C "$repo/userspace" test 2>&1 | sed 's/^/  /'
}

# every counter and trace value documented in vmamerge(8)
step_docs_check() {
	# Indented, as the unit tests' lines.
	bash "$repo/tests/check-docs.sh" 2>&1 | sed 's/^/  /'
}

step_klp_convert_test() {
	# Indented: its own "N passed, N failed" line is not the run's last word.
	bash "$repo/tests/klp-convert-test.sh" 2>&1 | sed 's/^/  /'
}

# The disassembly check every module build runs (Makefile, module target)
# must itself catch a sibling call and accept its fix.
step_tailcall_selftest() {
	sh "$repo/module/check-tailcalls.sh" --selftest 2>&1 | sed 's/^/  /'
}

step_dkms_policy() {
	bash "$repo/tests/dkms-policy-test.sh" 2>&1 | sed 's/^/  /'
}

# debian/: its version is dkms.conf's (static), and the packages built in
# the build root of each suite of VMAMERGE_DEB_SUITES, checked against
# make install (tests/deb-test.sh).
step_deb_static() {
	bash "$repo/tests/deb-test.sh" --static 2>&1 | sed 's/^/  /'
}
step_deb() { # SUITE...
	bash "$repo/tests/deb-test.sh" "$@" 2>&1 | sed 's/^/  /'
}

step_readme_table() { bash "$repo/tools/builds.sh" readme --check; }

step_layout_check() {
	bash "$repo/tests/layout-check.sh" 2>&1 | sed 's/^/  /'
}

guest_bin=$cache/guest-bin
step_guest_build() {
	rm -rf "$guest_bin"
	mkdir -p "$guest_bin"
	make -C "$repo/tests/guest" OUT="$guest_bin"
	[[ -f $guest_bin/run.sh ]] || { echo "tests/guest build put no run.sh into $guest_bin"; return 1; }
}

# stage_guest RELEASE STAGEDIR: module, CLI, guest tests
stage_guest() {
	local rel=$1 stage=$2 ko
	rm -rf "$stage"
	mkdir -p "$stage/lib/vmamerge" "$stage/bin" "$stage/tests"
	ko=$(build_dir "$rel")/vmamerge.ko
	[[ -f $ko ]] && cp "$ko" "$stage/lib/vmamerge/vmamerge.ko"
	# (step_build_unlisted: the smoke set loads the admitted module and
	# sees the forged one refused)
	ko=$cache/build/$rel/unlisted/admitted.ko
	if [[ -f $ko ]]; then
		cp "$ko" "$stage/lib/vmamerge/admitted.ko"
		cp "${ko%/*}/forged.ko" "$stage/lib/vmamerge/forged.ko"
		cp "${ko%/*}/cli/vmamerge.static" "$stage/bin/vmamerge-unlisted"
	fi
	[[ -x $repo/userspace/vmamerge.static ]] && cp "$repo/userspace/vmamerge.static" "$stage/bin/vmamerge"
	if [[ -d $guest_bin ]] && compgen -G "$guest_bin/*" >/dev/null; then
		cp -a "$guest_bin/." "$stage/tests/"
	fi
	# The upstream mm selftests (built by step_selftests_build; the demo
	# and the soak do without).
	if [[ ${stage_selftests:-0} == 1 ]]; then
		bash "$repo/tests/selftests/stage.sh" "$rel" "$stage"
	fi
	return 0
}

# The kernel's own mm selftests of SERIES, static (tests/selftests/build.sh;
# cached by source version).
step_selftests_build() { # SERIES
	bash "$repo/tests/selftests/build.sh" "$1"
}

# merge.c of the newest Debian kernel source, for every kernel
# (tests/selftests/build-newest.sh), built once before the guests stage it
step_selftests_newest() {
	bash "$repo/tests/selftests/build-newest.sh"
}

# Guest knobs of the debug kernels (tests/guest/run.sh documents them).
debug_guest_knobs="VMAMERGE_CYCLES=16 VMAMERGE_SEEDS=1,2,3 VMAMERGE_NOPS=300"
debug_guest_knobs+=" VMAMERGE_TORTURE_SEEDS=1,2 VMAMERGE_TORTURE_NOPS=1500 VMAMERGE_TORTURE_MAX_S=60"
# KASAN's quarantine voids release_test's slab counts: one round checks
# the unload right after a burst (three took ~400 of the 6.1 twin's s)
debug_guest_knobs+=" VMAMERGE_RELEASE_ROUNDS=1"
# The torture without the module exercises the stock kernel and the model
# (97 s of the 6.1 twin's 1708 s on 2 Dec): the stock kernels of the same
# sources run it
debug_guest_knobs+=" VMAMERGE_TORTURE_OFF=0"

# guest_boot RELEASE KIND: stage, pack and boot one guest; its exit status
# and duration go to $logdir/guest-RELEASE.{rc,seconds}. Runs in the
# background next to another guest (run_guests), so everything it prints
# is prefixed with the release.
guest_boot() {
	local rel=$1 kind=$2 tag=${3:-} stage initrd log rc t0 ncpus=1
	t0=$(now)
	stage=$cache/stage/$rel
	initrd=$cache/initrd/$rel$tag.cpio.gz
	log=$logdir/guest-$rel$tag.log
	: >"$log.results"
	if [[ ! -f $(build_dir "$rel")/vmamerge.ko ]]; then
		echo "no vmamerge.ko for $rel (its build failed): not booting" >"$log.why"
		echo 1 >"$log.rc"
		return 0
	fi
	# smoke-tier builds run no selftests: nothing of them to stage
	local stage_selftests=${stage_selftests:-0}
	[[ $kind != smoke ]] || stage_selftests=0
	stage_guest "$rel" "$stage"
	local gmods=zram append=${VMAMERGE_GUEST_APPEND:-} timeout=${VMAMERGE_GUEST_TIMEOUT:-1800}
	# the smoke set (tests/guest/run.sh) on smoke-tier builds
	[[ $kind != smoke ]] || append="VMAMERGE_SUITE=smoke $append"
	if [[ $kind == debug ]]; then
		# Everything is built in; KASAN and lockdep make the guest some
		# times slower, so the repetitive parts run fewer rounds (the
		# caller's VMAMERGE_GUEST_APPEND comes last and wins).
		gmods=""
		append="$debug_guest_knobs $append"
		timeout=${VMAMERGE_GUEST_TIMEOUT:-2700}
	fi
	if [[ $tag == -smp ]]; then
		ncpus=2
		append="$smp_guest_knobs $append"
	fi
	# a followed build (tests/matrix.sh) is admitted by equivalence: the
	# suite expects that tier, to the listed build
	[[ -z $(followed_of "$rel") ]] || append="VMAMERGE_FOLLOWS=$(followed_of "$rel") $append"
	VMAMERGE_GUEST_MODULES=$gmods bash "$repo/tests/qemu/mkinitramfs.sh" "$rel" "$initrd" "$stage"
	echo "[$rel] booting (timeout ${timeout}s), log: $log"
	set +e
	VMAMERGE_GUEST_APPEND=$append VMAMERGE_STREAM_PREFIX="  [$rel$tag] " \
		VMAMERGE_GUEST_CPUS=$ncpus \
		bash "$repo/tests/qemu/run-guest.sh" "$rel" "$initrd" "$log" \
		"$timeout" 2>&1 | sed -u "/^  \[/!s/^/  [$rel$tag] /"
	rc=${PIPESTATUS[0]}
	set -e
	echo "$rc" >"$log.rc"
	since "$t0" >"$log.seconds"
}

# guest_collect RELEASE: the TAP lines of a finished guest, prefixed with
# the release; fails if the guest did.
guest_collect() {
	local rel=$1 tag=${2:-} log res rc line n=0 desc
	log=$logdir/guest-$rel$tag.log
	[[ $tag != -smp ]] || rel="$rel (2 vCPUs)"
	res=$log.results
	[[ -f $log.why ]] && cat "$log.why"
	rc=$(cat "$log.rc" 2>/dev/null || echo 1)
	echo "guest $rel: exit status $rc after $(cat "$log.seconds" 2>/dev/null || echo ?) s"
	# The guest's own TAP lines, prefixed with the release.
	while IFS= read -r line; do
		line=${line%$'\r'}
		if [[ $line =~ ^(not\ )?ok\ [0-9]+(\ -)?\ ?(.*)$ ]]; then
			desc=${BASH_REMATCH[3]}
			n=$((n + 1))
			if [[ -n ${BASH_REMATCH[1]} ]]; then
				tap "not ok - $rel: $desc"
			else
				tap "ok - $rel: $desc"
			fi
		fi
	done <"$res"
	if [[ ! -f $log.why ]] && ! grep -aq '^GUEST-RESULT:' "$res"; then
		tap "not ok - $rel: guest test script finished (no GUEST-RESULT line after $n results)"
	fi
	if ((rc != 0)); then
		[[ -f $log ]] || return 1
		echo "--- first kernel splat lines of $log:"
		tr -d '\r' <"$log" | grep -aE -m 12 'Kernel panic|Oops|BUG:|WARNING:|general protection|RIP: 0010|Unable to handle|KASAN' | sed 's/^/  | /' || true
		show_tail "$log" 60
		return 1
	fi
}

# run_guests: boot every kernel's guest and the lab systems (tests/lab/),
# $guest_jobs at a time (each vCPU of a QEMU TCG guest keeps a host core
# busy: one guest per VMAMERGE_GUEST_CPUS cores), the longest first, and
# report them in matrix order.  Longest first (guest_jobs_by_length) keeps
# both cores busy to the end: started in kind order, the last long guest
# ran alone for 11 minutes of a 76-minute run (landing CI of 27 Nov).
guest_jobs=${VMAMERGE_GUEST_JOBS:-$(($(nproc) / ${VMAMERGE_GUEST_CPUS:-1}))}
((guest_jobs >= 1)) || guest_jobs=1
lab_suites=()
[[ ${VMAMERGE_LAB:-1} == 0 ]] || ! in_part landing || read -ra lab_suites <<<"${VMAMERGE_LAB_SUITES:-trixie bookworm}"
run_guests() {
	local i rel t0 suite job
	t0=$(now)
	echo "=== guests: ${releases[*]}${lab_suites[*]+; lab: ${lab_suites[*]}} ($guest_jobs at a time)"
	for job in $(guest_jobs_by_length); do
		[[ $early_started != *" $job "* ]] || continue
		guest_pool_wait
		case $job in
		lab-*) lab_boot "${job#lab-}" & ;;
		*)
			i=${job#guest-}
			guest_boot "${releases[$i]}" "${kinds[$i]}" &
			;;
		esac
	done
	wait || true
	record_guest_seconds
	timings+=("$(printf '%8ss  %s' "$(since "$t0")" "guests and lab (wall, $guest_jobs at a time)")")
	for i in "${!releases[@]}"; do
		guest_wanted "$i" || continue
		rel=${releases[$i]}
		run_step "$rel: guest boot, tests, no splat ($(cat "$logdir/guest-$rel.log.seconds" 2>/dev/null || echo ?) s)" \
			guest_collect "$rel"
	done
	for suite in "${lab_suites[@]}"; do
		run_step "lab $suite: a real Debian system end to end - install, boot, use, upgrade, remove ($(cat "$logdir/lab-$suite.log.seconds" 2>/dev/null || echo ?) s)" \
			lab_collect "$suite"
	done
}

# How long each guest and lab system took in the last make check (lines
# "NAME SECONDS", NAME as in the log files' names: guest-RELEASE,
# lab-SUITE), read to order the next run's pool.  Only run_guests writes
# it, so soaks and quick runs (other knobs, other lengths) leave it alone.
guest_seconds_file=$logroot/guest-seconds

# guest_jobs_by_length: run_guests' jobs, "lab-SUITE" and "guest-INDEX"
# (into releases[]), longest first by the last run's seconds; a job not in
# that file is estimated by its kind (the figures of 27 Nov, rounded up).
guest_jobs_by_length() {
	local i suite est
	{
		for suite in "${lab_suites[@]}"; do
			echo "$(last_guest_seconds "lab-$suite" 1800) lab-$suite"
		done
		for i in "${!releases[@]}"; do
			guest_wanted "$i" || continue
			case ${kinds[$i]} in
			debug) est=1700 ;;
			smoke) est=30 ;;
			*) est=700 ;;
			esac
			echo "$(last_guest_seconds "guest-${releases[$i]}" "$est") guest-$i"
		done
	} | LC_ALL=C sort -s -k1,1nr | cut -d' ' -f2
}

last_guest_seconds() { # NAME DEFAULT
	local s
	s=$(awk -v n="$1" '$1 == n { s = $2 } END { print s }' "$guest_seconds_file" 2>/dev/null || true)
	[[ $s =~ ^[0-9]+(\.[0-9]+)?$ ]] || s=$2
	printf '%.0f' "$s"
}

# record_guest_seconds: this run's lengths into $guest_seconds_file (kept
# for names this run did not boot).
record_guest_seconds() {
	local f name tmp=$guest_seconds_file.tmp
	{
		for f in "$logdir"/guest-*.log.seconds "$logdir"/lab-*.log.seconds; do
			[[ -f $f ]] || continue
			name=${f##*/}
			echo "${name%.log.seconds} $(cat "$f")"
		done
		cat "$guest_seconds_file" 2>/dev/null || true
	} | awk '!seen[$1]++' >"$tmp" && mv "$tmp" "$guest_seconds_file"
}

# start_early_jobs: the longest lab systems (VMAMERGE_EARLY_JOBS of them,
# default 1) start right after setup, before the builds: a lab builds the
# module from the release tarball inside its own guest and needs nothing of
# the host's builds, and the builds and host steps before the pool leave a
# core idle most of the time (downloads, one-threaded tests, chroots).
# run_guests' pool counts them among its jobs and skips them.
early_started=" "
start_early_jobs() {
	local n=${VMAMERGE_EARLY_JOBS:-1} job
	((${#lab_suites[@]})) || return 0
	for job in $(guest_jobs_by_length); do
		((n > 0)) || break
		[[ $job == lab-* ]] || continue
		echo "=== started early, next to the builds: $job"
		lab_boot "${job#lab-}" &
		early_started+="$job "
		n=$((n - 1))
	done
}

# guest_wanted INDEX: the pool boots this kernel: the long part boots only
# the debug twins (it builds the stock kernels' modules for the SMP set,
# whose guests the landing part boots).
guest_wanted() {
	[[ ${kinds[$1]} == debug ]] || in_part landing
}

# guest_pool_wait: until fewer than $guest_jobs guests run.
guest_pool_wait() {
	local running
	while running=$(jobs -rp | wc -l) && ((running >= guest_jobs)); do
		wait -n || true
	done
}

# run_smp_guests: the full-tier production builds once more, each with two
# vCPUs on multi-threaded TCG (QEMU 10, tests/qemu/install-qemu.sh), the
# SMP set of tests/guest/run.sh: the concurrency torture, a fork held in
# the hook across an unload, load/unload cycles.  One at a time: each
# keeps two host cores busy.
smp_guest_knobs="VMAMERGE_SUITE=smp VMAMERGE_MTORTURE_S=12 VMAMERGE_CYCLES=3"
run_smp_guests() {
	local i rel t0 smp=()
	for i in "${!releases[@]}"; do
		[[ ${kinds[$i]} == stock ]] && smp+=("${releases[$i]}")
	done
	((${#smp[@]})) || return 0
	t0=$(now)
	echo "=== SMP guests (2 vCPUs each, one at a time): ${smp[*]}"
	for rel in "${smp[@]}"; do
		guest_boot "$rel" stock -smp
	done
	timings+=("$(printf '%8ss  %s' "$(since "$t0")" "SMP guests (wall)")")
	for rel in "${smp[@]}"; do
		run_step "$rel: SMP guest, 2 vCPUs, tests, no splat ($(cat "$logdir/guest-$rel-smp.log.seconds" 2>/dev/null || echo ?) s)" \
			guest_collect "$rel" -smp
	done
}

# The end-to-end lab test on a real Debian system (tests/lab/lab.sh), one
# job of run_guests' pool: lab_boot runs it (its root and package
# repository are built the first time, 1-2 minutes on a quiet machine,
# then cached), lab_collect turns its lines into TAP lines that count
# like the guests'.
# A hung boot stops after VMAMERGE_LAB_TIMEOUT s (2400 here: the slowest
# phase took 1711 s on a loaded host), so CI's limit is not reached.
lab_boot() { # SUITE
	local log=$logdir/lab-$1.log t0 rc=0
	t0=$(now)
	VMAMERGE_LAB_TIMEOUT=${VMAMERGE_LAB_TIMEOUT:-2400} \
		bash "$repo/tests/lab/lab.sh" "$1" >"$log" 2>&1 </dev/null || rc=$?
	echo "$rc" >"$log.rc"
	since "$t0" >"$log.seconds"
}
lab_collect() { # SUITE
	local line log=$logdir/lab-$1.log rc
	rc=$(cat "$log.rc" 2>/dev/null || echo 1)
	while IFS= read -r line; do
		case $line in
		"ok - "* | "not ok - "*) tap "$line" ;;
		*) printf '  %s\n' "$line" ;;
		esac
	done <"$log"
	if ((rc != 0)) && ! grep -q '^not ok - ' "$log"; then
		tap "not ok - lab $1: tests/lab/lab.sh exit status $rc"
	fi
	return "$rc"
}

prune_logs() {
	local old
	mapfile -t old < <(find "$logroot" -mindepth 1 -maxdepth 1 -type d -name '20*' | LC_ALL=C sort | head -n -10)
	((${#old[@]} == 0)) || rm -rf "${old[@]}"
}

summary() {
	local p f s
	echo
	echo "=== timings"
	printf '%s\n' "${timings[@]}"
	echo "logs: $logdir"
	p=$(grep -c '^ok ' "$tapfile" || true)
	s=$(grep -Ec '^ok .*# *SKIP' "$tapfile" || true)
	f=$(grep -c '^not ok ' "$tapfile" || true)
	p=$((p - s))
	echo
	echo "$p passed, $f failed, $s skipped"
	((f == 0))
}

main() {
	# Runs share $cache/build/<release>/: one at a time.
	mkdir -p "$cache"
	exec 9>"$cache/.check.lock"
	if ! flock -n 9; then
		echo "check: another make check is using $cache; waiting for it" >&2
		flock 9
	fi
	local t_all i rel
	mkdir -p "$logdir"
	: >"$tapfile"
	prune_logs
	t_all=$(now)
	echo "vmamerge check ($check_part): cache $cache; logs $logdir"
	if [[ ${VMAMERGE_SKIP_SETUP:-0} == 1 ]]; then
		tap "ok - setup # SKIP VMAMERGE_SKIP_SETUP=1"
	else
		run_step "setup" step_setup
		if grep -q '^not ok - setup' "$tapfile"; then
			summary || true
			exit 1
		fi
	fi
	# (after setup: it resolves the full tier against the archive)
	read_matrix
	echo "vmamerge check: kernels ${releases[*]}"
	report_followed
	start_early_jobs

	# the landing part first asks whether the long part passed on this
	# module: the answer decides nothing else, but a refusal is the one
	# failure a developer can fix before the run ends
	in_part landing && [[ $check_part != all ]] &&
		run_step "make check-long passed on this module (tests/long-record.sh)" step_long_record
	for i in "${!releases[@]}"; do
		[[ ${kinds[$i]} == debug ]] || continue
		run_step "debug kernel ${releases[$i]}" step_debug_kernel "${series[$i]}" "${releases[$i]}"
	done
	for i in "${!releases[@]}"; do
		rel=${releases[$i]}
		run_step "build $rel (W=1)" step_build "$rel"
		# the rest of the builds' checks are the landing part's but the
		# twins' dkms build (the twins are the long part's)
		if [[ ${kinds[$i]} == debug ]]; then
			run_step "dkms build $rel" step_dkms "$rel"
			continue
		fi
		in_part landing || continue
		# sparse sees the same sources for every kind: once per series.
		[[ ${kinds[$i]} != stock ]] || run_step "sparse $rel" step_sparse "$rel"
		# dkms: the full-tier builds (the host's dkms)
		[[ ${kinds[$i]} == smoke ]] || run_step "dkms build $rel" step_dkms "$rel"
		# what a user of an unlisted build sees: on the first smoke build
		if [[ ${kinds[$i]} == smoke && -z ${unlisted_done:-} ]]; then
			unlisted_done=1
			run_step "build $rel with $rel left out of the list: admitted by equivalence" step_build_unlisted "$rel"
		fi
	done
	in_part landing && host_steps
	# (both parts: every guest runs the CLI's tests)
	run_step "userspace static CLI" step_userspace_static
	run_step "guest test programs" step_guest_build
	local done_series=" "
	for i in "${!series[@]}"; do
		[[ $done_series == *" ${series[$i]} "* ]] && continue
		done_series+="${series[$i]} "
		run_step "mm selftests ${series[$i]} (static build)" step_selftests_build "${series[$i]}"
	done
	run_step "upstream's newest merge.c (static build)" step_selftests_newest
	stage_selftests=1
	run_guests
	in_part long && [[ ${VMAMERGE_SMP:-1} != 0 ]] && run_smp_guests
	timings+=("$(printf '%8ss  %s' "$(since "$t_all")" "total")")
	summary || return 1
	in_part long && write_long_record "$t_all"
	return 0
}

# host_steps: the static checks and the tests that run on the host (the
# landing part)
host_steps() {
	run_step "checkpatch module/" step_checkpatch
	run_step "userspace unit tests" step_userspace_test
	run_step "counters and trace values documented in vmamerge(8)" step_docs_check
	run_step "klp-convert test" step_klp_convert_test
	run_step "tail-call check selftest" step_tailcall_selftest
	run_step "the long part's record (tests/long-record-test.sh)" step_long_record_test
	run_step "the full tier follows the archive (tests/matrix-test.sh)" step_matrix_test
	run_step "layout check (private mm declarations, symbols)" step_layout_check
	run_step "dkms on listed and unlisted kernels" step_dkms_policy
	run_step "equivalence check: admitted, refused, bad input (tests/admit-test.sh)" step_admit_test
	run_step "the validated builds' fingerprints are their images'" step_fingerprints_check
	run_step "kfp: kallsyms, fingerprints, its decoder against libopcodes (tests/kfp/kfp-test.sh)" step_kfp_test
	run_step "vmamerge check-kernel on the real images (tests/cli-check-kernel.sh)" step_cli_check_kernel
	run_step "README's table is module/builds.list's" step_readme_table
	run_step "debian/changelog's version is dkms.conf's" step_deb_static
	# shellcheck disable=SC2086 # a list of suites
	run_step "Debian packages (${VMAMERGE_DEB_SUITES:-bookworm}): dpkg-buildpackage, files as make install's, lintian, install and purge" \
		step_deb ${VMAMERGE_DEB_SUITES:-bookworm}
}

# The record of a passing long part (tests/long-record.sh): make check
# verifies it, check-long writes it - only when it ran everything it
# stands for (the twins and the SMP set of every full-tier build).
step_long_record() {
	bash "$repo/tests/long-record.sh" check
}
step_matrix_test() {
	bash "$repo/tests/matrix-test.sh" 2>&1 | sed 's/^/  /'
}
step_long_record_test() {
	bash "$repo/tests/long-record-test.sh" 2>&1 | sed 's/^/  /'
}
write_long_record() { # T0
	local p
	if [[ ${VMAMERGE_DEBUG:-1} == 0 || ${VMAMERGE_SMP:-1} == 0 || -n ${VMAMERGE_KERNELS:-} ||
		-n ${VMAMERGE_GUEST_APPEND:-} ]]; then
		echo "no record written: VMAMERGE_DEBUG, VMAMERGE_SMP, VMAMERGE_KERNELS or VMAMERGE_GUEST_APPEND narrowed the run"
		return 0
	fi
	# (passed as summary counts them: ok lines without SKIP)
	p=$(grep -c '^ok ' "$tapfile" || true)
	p=$((p - $(grep -Ec '^ok .*# *SKIP' "$tapfile" || true)))
	bash "$repo/tests/long-record.sh" write "$p" "$(printf '%.0f' "$(since "$1")")"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	main "$@"
fi
