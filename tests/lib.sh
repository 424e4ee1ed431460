# shellcheck shell=bash
# Shared helpers of the test scripts (sourced, not executed).
#
# Kernel header trees: tests/setup.sh downloads the pinned linux-headers-*
# and linux-kbuild-* packages of module/builds.list (never installs them) and
# unpacks them into one root per release, $VMAMERGE_CACHE/headers/<release>/;
# the tree to build against (KDIR) is usr/src/linux-headers-<release> there.
# Nothing uses /lib/modules/<release>/build of the host.

# kdir_of RELEASE: the unpacked header tree of RELEASE (it may not exist)
kdir_of() {
	printf '%s/headers/%s/usr/src/linux-headers-%s\n' \
		"${VMAMERGE_CACHE:-/var/cache/vmamerge}" "$1" "$1"
}

# kdir_ready RELEASE: is the unpacked header tree of RELEASE there?
kdir_ready() {
	[[ -f $(kdir_of "$1")/Makefile ]]
}

# kdir_missing_msg RELEASE: what to tell the user when it is not
kdir_missing_msg() {
	printf 'no kernel headers of %s in %s: run tests/setup.sh first\n' \
		"$1" "$(kdir_of "$1")"
}

# debug_release_of DEBIAN_VERSION: the release of the debug twin that
# tests/debug-kernel/build.sh builds from the same linux-source
# (6.12.117-1~deb12u1 -> 6.12.117-vmamerge-debug)
debug_release_of() {
	printf '%s-vmamerge-debug\n' "${1%%-*}"
}

# The validated builds: module/builds.list is the one list (make check,
# tests/setup.sh, the module, dkms, the CLI and the README read it).
builds_list() {
	printf '%s/module/builds.list\n' "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
}

# builds_of [TIER...]: "SERIES RELEASE DEBIAN-VERSION TIER" of each build of
# those tiers (default: full), in list order, restricted to the series of
# VMAMERGE_KERNELS when set.
#
# In the test harness (VMAMERGE_MATRIX set, tests/check.sh), the full tier
# is the resolved matrix tests/setup.sh wrote there (tests/matrix.sh: a
# full-tier build whose source the archive no longer has is followed by
# its newest equivalent build); the list's own full tier without it.
builds_of() {
	local tiers=" ${*:-full} "
	# shellcheck disable=SC2046 # no file or one
	awk -v tiers="$tiers" -v only=" ${VMAMERGE_KERNELS:-} " -v matrix="$(matrix_file)" '
		/^[ \t]*(#|$)/ { next }
		FILENAME == matrix { M[++m] = $1 " " $2 " " $3 " " $4 " " $1; next }
		$4 == "full" && matrix != "" { if (!full++) for (i = 1; i <= m; i++) emit(M[i]); next }
		{ emit($1 " " $2 " " $3 " " $4 " " $1) }
		function emit(l,	f) {
			split(l, f, " ")
			if (index(tiers, " " f[4] " ") == 0) return
			if (only != "  " && index(only, " " f[1] " ") == 0) return
			print f[1], f[2], f[3], f[4]
		}' $(matrix_file) "$(builds_list)"
}

# matrix_file: $VMAMERGE_MATRIX when it names a file, else nothing
matrix_file() {
	[[ -n ${VMAMERGE_MATRIX:-} && -s $VMAMERGE_MATRIX ]] && printf '%s\n' "$VMAMERGE_MATRIX"
	return 0
}

# followed_of RELEASE: the listed build RELEASE follows in the resolved
# matrix (tests/matrix.sh), empty if it is a listed build itself
followed_of() {
	local m
	m=$(matrix_file)
	[[ -n $m && -f $m.followed ]] || return 0
	awk -v r="$1" '$1 == r { print $2; exit }' "$m.followed"
}

# uts_version_of RELEASE: the UTS version builds.list (or the resolved
# matrix) gives RELEASE
uts_version_of() {
	# shellcheck disable=SC2046 # no file or one
	awk -v r="$1" '!/^[ \t]*#/ && $2 == r {
		sub(/^[ \t]*[^ \t]+[ \t]+[^ \t]+[ \t]+[^ \t]+[ \t]+[^ \t]+[ \t]+/, ""); print; exit }' \
		$(matrix_file) "$(builds_list)"
}

# ---- Debian packages into the cache (tests/setup.sh, tools/port.sh) ----
# The callers set $cache (the cache directory) and define die MESSAGE.
vmamerge_tests=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Header trees: stamped with the version and their own path (the rewritten
# Makefiles name it).
# shellcheck disable=SC2154 # cache: set by the caller
headers_stamp() { printf '%s %s\n' "$2" "$cache/headers/$1"; } # RELEASE VERSION

# header_pkgs RELEASE VERSION [APT-CACHE...]: linux-headers-RELEASE=VERSION
# and the -common and linux-kbuild-* packages it depends on (one PKG=VER a
# line), each at the version its Depends relation asks for: "(= V)" gives V,
# "(>= V)" or none the archive's candidate, which must satisfy it (Debian replaces
# linux-kbuild-<series> in place: 6.1.0-56's headers ask for
# linux-kbuild-6.1 (>= 6.1.192-2), and the archive has only 6.1.192-3
# since 30 Nov 2026). Its other Depends (the kernel image, gcc-12,
# linux-base, ...) are not wanted: the image is never installed, the tools
# are base_pkgs.
header_pkgs() {
	local r=$1 v=$2 deps name rel want cand
	shift 2
	(($#)) || set -- apt-cache
	deps=$("$@" show "linux-headers-$r=$v" 2>/dev/null | sed -n 's/^Depends: //p' | head -n1)
	[[ -n $deps ]] || die "apt-cache show linux-headers-$r=$v: no Depends"
	echo "linux-headers-$r=$v"
	# "a (= 1), b (>= 2) | c, d" -> "a = 1", "b >= 2", "c", "d"
	while read -r name rel want; do
		[[ $name =~ ^(linux-headers-.*-common|linux-kbuild-.*)$ ]] || continue
		case $rel in
		=) echo "$name=$want" ;;
		'' | '>=')
			cand=$("$@" policy "$name" 2>/dev/null | sed -n 's/^ *Candidate: //p')
			if [[ -z $cand || $cand == '(none)' ]] ||
				! dpkg --compare-versions "$cand" ge "${want:-0}"; then
				die "$name (>= $want) for linux-headers-$r: the archive has ${cand:-none}"
			fi
			echo "$name=$cand" ;;
		*) die "linux-headers-$r depends on $name ($rel $want): not handled" ;;
		esac
	done < <(tr ',|' '\n' <<<"$deps" | sed -E 's/^ *//; s/ *\(([<>=]+) *([^)]*)\)/ \1 \2/')
}

# deb_of PKG=VER: where apt-get download puts it in $cache/debs (any arch)
deb_of() {
	local p=${1%%=*} v=${1#*=} f
	for f in "$cache/debs/${p}_${v//:/%3a}_"*.deb; do
		[[ -f $f ]] && { echo "$f"; return 0; }
	done
	return 1
}

# One root per release with linux-headers-<release>, -common and linux-kbuild-*
# unpacked together: their relative symlinks (scripts ->
# ../../lib/linux-kbuild-*/scripts) resolve inside it. Absolute references to
# the packages' install paths (the amd64 Makefile is just
# "include /usr/src/linux-headers-<abi>-common/Makefile") are rewritten to
# this root, absolute symlinks (lib/modules/<release>/build) made relative.
unpack_headers() { # RELEASE VERSION PKG=VER...
	local r=$1 v=$2 dest=$cache/headers/$1 tmp=$cache/headers/.unpack-$1 pv deb f l t
	shift 2
	rm -rf "$tmp"
	mkdir -p "$tmp"
	for pv in "$@"; do
		deb=$(deb_of "$pv") || die "missing $cache/debs/${pv%%=*}_${pv#*=}_*.deb after download"
		dpkg-deb -x "$deb" "$tmp"
	done
	# Text files kbuild may read (Makefiles, scripts/Makefile.*, .kernelvariables,
	# ...); not include/ (only comments name /usr/src there) nor docs.
	while IFS= read -r -d '' f; do
		sed -i -e "s#/usr/src/linux-headers-#$dest/usr/src/linux-headers-#g" \
			-e "s#/usr/lib/linux-kbuild-#$dest/usr/lib/linux-kbuild-#g" "$f"
	done < <(grep -rlIZ -e /usr/src/linux-headers- -e /usr/lib/linux-kbuild- \
		--exclude-dir=include "$tmp/usr/src" "$tmp"/usr/lib/linux-kbuild-* 2>/dev/null || true)
	while IFS= read -r -d '' l; do
		t=$(readlink "$l")
		if [[ -e $tmp$t ]]; then ln -sfnr "$tmp$t" "$l"; fi
	done < <(find "$tmp" -type l -lname '/*' -print0)
	[[ -f $tmp/usr/src/linux-headers-$r/Makefile && -f $tmp/usr/src/linux-headers-$r/.config ]] ||
		die "headers of $r: no usr/src/linux-headers-$r/{Makefile,.config} in $*"
	# (what is left: a reference not preceded by our root)
	local abs='(^|[^[:alnum:]_.+~-])/usr/(src/linux-headers|lib/linux-kbuild)'
	if grep -Eqs "$abs" "$tmp"/usr/src/*/Makefile; then
		die "headers of $r: absolute paths left in $(grep -Els "$abs" "$tmp"/usr/src/*/Makefile)"
	fi
	headers_stamp "$r" "$v" >"$tmp/.vmamerge-version"
	rm -rf "$dest"
	mv "$tmp" "$dest"
}

# unpack_image RELEASE VERSION: kernels/RELEASE from the linux-image deb in
# $cache/debs (+ modules.dep: the deb has none, its postinst runs depmod)
unpack_image() {
	local r=$1 v=$2 deb dest=$cache/kernels/$1
	[[ -f $dest/.vmamerge-version && $(<"$dest/.vmamerge-version") == "$v" ]] && return 0
	deb=$(deb_of "linux-image-$r=$v") || die "missing linux-image-$r=$v in $cache/debs"
	rm -rf "$dest" "$dest.tmp"
	mkdir -p "$dest.tmp"
	dpkg-deb -x "$deb" "$dest.tmp"
	[[ -f $dest.tmp/boot/vmlinuz-$r ]] || die "$deb has no boot/vmlinuz-$r"
	# Debian 13 is merged-/usr: its modules are in usr/lib/modules.
	[[ -d $dest.tmp/lib || ! -d $dest.tmp/usr/lib/modules ]] || ln -s usr/lib "$dest.tmp/lib"
	depmod -b "$dest.tmp" "$r"
	echo "$v" >"$dest.tmp/.vmamerge-version"
	mv "$dest.tmp" "$dest"
}

# ---- symbol tables ----
# Debian's image carries a placeholder System.map (the real one is in the
# ~1 GB linux-image-*-dbg package). With CONFIG_KALLSYMS_ALL=y the kernel's
# /proc/kallsyms has the same text and data symbols: boot each kernel once
# (nokaslr, nothing loaded) and keep its table as
# $cache/symbols/System.map-<release> (tests/layout-check.sh reads it).
kallsyms_map() { # RELEASE
	local rel=$1 tmp map=$cache/symbols/System.map-$1
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmamerge-kallsyms.XXXXXX")
	mkdir -p "$tmp/stage" "$cache/symbols"
	VMAMERGE_GUEST_MODULES="" bash "$vmamerge_tests/qemu/mkinitramfs.sh" "$rel" "$tmp/initrd.cpio.gz" "$tmp/stage"
	if ! VMAMERGE_GUEST_APPEND="vmamerge_test=kallsyms nokaslr" VMAMERGE_STREAM=0 \
		bash "$vmamerge_tests/qemu/run-guest.sh" "$rel" "$tmp/initrd.cpio.gz" "$tmp/guest.log" 300; then
		tail -n 30 "$tmp/guest.log"
		rm -rf "$tmp"
		die "could not boot $rel to read its symbol table"
	fi
	tr -d '\r' <"$tmp/guest.log.results" |
		sed -n '/^KALLSYMS-BEGIN/,/^KALLSYMS-END/{/^KALLSYMS-/d;p}' |
		base64 -d | gzip -dc | awk 'NF == 3' >"$map.tmp"
	rm -rf "$tmp"
	if ! grep -q ' T start_kernel$' "$map.tmp" || (($(wc -l <"$map.tmp") < 50000)); then
		rm -f "$map.tmp"
		die "the symbol table read from $rel looks wrong"
	fi
	mv "$map.tmp" "$map"
}

# ---- the toolchain a build was made with ----
# Debian 12's kernels are built with gcc-12 (the host's), Debian 13's with
# gcc-14: those are built in a debootstrapped trixie root
# (tools/build-root.sh), whose libc also runs their linux-kbuild tools.

# build_root_of RELEASE: the build root RELEASE's module is built in (its
# path; tools/build-root.sh makes it), or nothing for the host
build_root_of() {
	local cc
	# "gcc-12 (Debian 12.2.0-14) 12.2.0", "x86_64-linux-gnu-gcc-14 (...) 14.2.0",
	# and the debug twins, built here by the host's gcc: "gcc (Debian 12.2.0-14+deb12u1) 12.2.0"
	cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\(.*\)"/\1/p' "$(kdir_of "$1")/.config")
	case $cc in
	*gcc*" 12."*) ;;
	*gcc*" 14."*) bash "$vmamerge_tests/../tools/build-root.sh" trixie ;;
	*) echo "build_root_of $1: no toolchain recipe for '${cc:-?}'" >&2; return 1 ;;
	esac
}

# in_build_root ROOT CMD...: CMD on the host (ROOT empty) or inside ROOT,
# where $VMAMERGE_CACHE is at the same path (so build trees there work)
in_build_root() {
	local root=$1
	shift
	if [[ -z $root ]]; then
		"$@"
	else
		bash "$vmamerge_tests/../tools/build-root.sh" --run "$root" "$@"
	fi
}
