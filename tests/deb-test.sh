#!/bin/bash
# tests/deb-test.sh [--static | SUITE...]: the Debian packages of debian/
# (docs/testing.md, "The Debian packages").  No argument: both parts,
# bookworm; --static: the first only; SUITE...: the second only.
#
#   static (no root, a second): debian/changelog's version is dkms.conf's
#   PACKAGE_VERSION, and debian/rules refuses to build when they differ;
#   per SUITE (default bookworm; root: a chroot):
#   `dpkg-buildpackage -us -uc -b` of a copy of the working tree (tracked
#   and untracked files not ignored by git, no .git) in the cached build
#   root of SUITE (tools/build-root.sh SUITE deb: debootstrap, the suite's
#   debhelper, dh-dkms and lintian; nothing from the network but the
#   Debian archive, the user's checkout untouched), and `make install
#   DESTDIR=... PREFIX=/usr` of the same copy in the same root; then
#     - the packages are debian/control's (and vmamerge's -dbgsym), each at
#       dkms.conf's version, with the architecture control names;
#     - together they install exactly the files make install does (path
#       and mode), each file in the package its .install list names, the
#       same bytes (the CLI binary aside: dh_strip strips it), except the
#       documented differences: make install's manifest is not packaged
#       (debian/not-installed: the package database lists the files), the
#       packages add /usr/share/doc/PKG/{changelog.gz,copyright}, the
#       manual page is compressed (vmamerge.8 -> vmamerge.8.gz, policy),
#       and the udev rule is the package's, in /usr/lib/udev/rules.d, not the
#       administrator's /etc/udev/rules.d (debian/rules: UDEVRULESDIR);
#     - vmamerge-dkms has dh_dkms's postinst (dkms common.postinst) and
#       prerm (dkms remove), Depends on dkms (>= dh_dkms's floor for
#       BUILD_EXCLUSIVE_CONFIG) and on vmamerge at its own version (kfp,
#       which the module build of an unlisted kernel runs); vmamerge
#       Depends on libc6 and kfp's libraries (shlibs) and Recommends
#       vmamerge-dkms at its own version; the one conffile is the kernel
#       hook (vmamerge-dkms);
#     - lintian (the suite's) reports no error and no warning outside
#       $lintian_kept below;
#     - installed with README's apt-get install in a throwaway overlay of
#       the build root (tests/deb-install.sh; nothing is loaded): the
#       postinst builds the module with dkms for a validated build whose
#       unpacked header tree stands in for an installed linux-headers, and
#       nothing for an unlisted release; the kernel hook's note; `vmamerge
#       --version`; README's apt-get purge leaves no module, dkms tree or
#       source, and the file list (package database, /etc, /usr,
#       /lib/modules, /var/lib/dkms) equals the one before.
# TAP-like; the last line "deb-test: N passed, N failed".
#
# Environment: VMAMERGE_CACHE; work directory $VMAMERGE_CACHE/deb/SUITE/
# (build log build.log, lintian.log).
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${VMAMERGE_CACHE:-/var/cache/vmamerge}
export VMAMERGE_CACHE=$cache
# builds_of, kdir_of, kdir_ready
# the list's builds (the validated ones), not make check's resolved matrix (tests/matrix.sh)
unset VMAMERGE_MATRIX
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$repo/tests/lib.sh"

# lintian tags kept, and why (docs/testing.md repeats them).
lintian_kept=(
	# The udev rule makes /dev/vmamerge 0666, which lintian takes for a
	# hardware access rule that should announce its devices (modaliases)
	# to AppStream; /dev/vmamerge is a virtual misc device, there is no
	# hardware to announce.
	appstream-metadata-missing-modalias-provide
)

np=0 nf=0
t() { # t DESCRIPTION CMD...: ok when CMD succeeds
	local d=$1
	shift
	if "$@"; then np=$((np + 1)); echo "ok - $d"; else nf=$((nf + 1)); echo "not ok - $d"; fi
}
finish() {
	echo "deb-test: $np passed, $nf failed"
	((nf == 0))
	exit
}
show() { sed 's/^/  | /'; }

ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$repo/dkms.conf")
# debian/changelog's version: the first line, "vmamerge (VERSION) ..."
chver=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' "$repo/debian/changelog")

# ---- static ----------------------------------------------------------------
# rules_configure DIR: debian/rules' version check in DIR (dpkg-dev's
# default.mk reads the changelog)
rules_configure() {
	make -s -C "$1" -f debian/rules override_dh_auto_configure >"$1.log" 2>&1
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmamerge-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

static_test() {
	t "dkms.conf has a PACKAGE_VERSION ($ver)" test -n "$ver"
	t "debian/changelog's version ($chver) is dkms.conf's ($ver)" test "$chver" = "$ver"
	t "debian/vmamerge-dkms.dkms installs the top dkms.conf" \
		test "$(cat "$repo/debian/vmamerge-dkms.dkms")" = dkms.conf
	# debian/rules itself refuses a divergence
	mkdir -p "$tmp/rules"
	cp -a "$repo/debian" "$repo/dkms.conf" "$tmp/rules/"
	t "debian/rules: versions equal, configure passes" rules_configure "$tmp/rules"
	sed -i 's/^PACKAGE_VERSION=.*/PACKAGE_VERSION="9.9.9"/' "$tmp/rules/dkms.conf"
	if rules_configure "$tmp/rules"; then
		t "debian/rules: dkms.conf 9.9.9 against changelog $chver refuses to build" false
	else
		t "debian/rules: dkms.conf 9.9.9 against changelog $chver refuses to build" \
			grep -q 'make them equal' "$tmp/rules.log"
	fi
}

# ---- per suite -----------------------------------------------------------------
# README's commands of the Debian route: its build line is "sudo apt-get
# build-dep ./ && dpkg-buildpackage ..."; the build runs the second half.
readme_deb=$(awk '/^#+ / { on = ($0 ~ /^### Debian packages/) } on && /^    [^ ]/ { sub(/^    /, ""); print }' \
	"$repo/README.md")
readme_build=$(head -n1 <<<"$readme_deb")
readme_build=${readme_build#* && }

# debian/control's binary packages and their architectures ("name arch")
control_pkgs() {
	awk '/^Package:/ { p = $2 } /^Architecture:/ && p { print p, $2; p = "" }' "$repo/debian/control"
}
# tree_list DIR: "mode path" of every non-directory under DIR, sorted
tree_list() {
	(cd "$1" && find . ! -type d -printf '%m %P\n') | LC_ALL=C sort
}
field() { dpkg-deb -f "$1" "$2"; }
# pkg_path PATH: where the packages put what make install puts at PATH
pkg_path() {
	case $1 in
	etc/udev/rules.d/*) echo "usr/lib/udev/rules.d/${1#etc/udev/rules.d/}" ;;
	*) echo "$1" ;;
	esac
}

suite_test() { # SUITE
	local suite=$1 root work src log deb p a f g want got pkgs=() d
	echo "# $suite: build root"
	root=$(bash "$repo/tools/build-root.sh" "$suite" deb) || { t "$suite: build root" false; return; }
	work=$cache/deb/$suite
	src=$work/vmamerge-$ver
	rm -rf "$work"
	mkdir -p "$src"
	# A copy of the working tree: what git tracks or would track, as it
	# is now (so uncommitted debian/ changes are tested), or, in a release
	# tarball, everything.
	if git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$repo" ls-files -z --cached --others --exclude-standard |
			(cd "$repo" && tar --null -T - -cf - 2>/dev/null) | tar -xf - -C "$src"
	else
		tar -C "$repo" --exclude=.git -cf - . | tar -xf - -C "$src"
	fi
	log=$work/build.log
	# README's build command, as written, by an unprivileged user (nobody
	# owns the copy); the build dependencies are the root's.
	[[ $readme_build == "dpkg-buildpackage "* ]] ||
		{ t "$suite: README's build command is dpkg-buildpackage ($readme_build)" false; return; }
	chown -R nobody "$work"
	echo "# $suite: $readme_build in $src as nobody (log: $log)"
	if ! bash "$repo/tools/build-root.sh" --run "$root" runuser -u nobody -- /bin/sh -c \
		'cd "$1" && HOME=/tmp eval "$2"' sh "$src" "$readme_build" >"$log" 2>&1; then
		tail -n 30 "$log" | show
		t "$suite: $readme_build (README), not as root" false
		return
	fi
	t "$suite: $readme_build (README), not as root" true
	# shellcheck disable=SC2016 # expanded by the inner shell
	t "$suite: README's build dependencies resolve: apt-get build-dep -s ./" \
		bash "$repo/tools/build-root.sh" --run "$root" /bin/sh -c \
		'cd "$1" && apt-get build-dep -s ./ >/dev/null' sh "$src"
	chown -R root "$work"
	# The reference: make install into a staging directory, same root.
	if ! bash "$repo/tools/build-root.sh" --run "$root" /bin/sh -c \
		'make -s -C "$1" install DESTDIR="$2" PREFIX=/usr' sh "$src" "$work/ref" >"$work/install.log" 2>&1; then
		show <"$work/install.log"
		t "$suite: make install DESTDIR=... PREFIX=/usr" false
		return
	fi
	t "$suite: make install DESTDIR=... PREFIX=/usr" true

	# Names, versions, architectures.
	want=$( {
		control_pkgs | awk -v v="$ver" '{ print $1 "_" v "_" $2 ".deb" }'
		control_pkgs | awk -v v="$ver" '$2 != "all" { print $1 "-dbgsym_" v "_" $2 ".deb" }'
	} | LC_ALL=C sort)
	got=$(cd "$work" && find . -maxdepth 1 -name '*.deb' -printf '%P\n' | LC_ALL=C sort)
	t "$suite: packages $(tr '\n' ' ' <<<"$want")" test "$want" = "$got"
	[[ $want == "$got" ]] || printf '%s\n' "$got" | show
	while read -r p a; do
		deb=$work/${p}_${ver}_$a.deb
		[[ -f $deb ]] || continue
		pkgs+=("$p")
		t "$suite: $p: Package $p, Version $ver, Architecture $a" \
			test "$(field "$deb" Package) $(field "$deb" Version) $(field "$deb" Architecture)" = "$p $ver $a"
		rm -rf "$work/x/$p"
		mkdir -p "$work/x/$p" "$work/ctl/$p"
		dpkg-deb -x "$deb" "$work/x/$p"
		dpkg-deb -e "$deb" "$work/ctl/$p"
		echo "# $p: $(field "$deb" Depends) | Recommends: $(field "$deb" Recommends)"
	done < <(control_pkgs)
	((${#pkgs[@]} == 2)) || { t "$suite: both packages there" false; return; }

	# The file lists.  Each package's own, less its /usr/share/doc, with
	# the manual page uncompressed; against make install's, less the
	# manifest; each file in the package whose .install list has it.
	: >"$work/debs.list"
	for p in "${pkgs[@]}"; do
		d=usr/share/doc/$p
		t "$suite: $p: $d/copyright and changelog.gz" \
			test -f "$work/x/$p/$d/copyright" -a -f "$work/x/$p/$d/changelog.gz"
		tree_list "$work/x/$p" | grep -v " $d/" | sed -E 's#^([0-7]+ usr/share/man/.*)\.gz$#\1#' |
			tee "$work/$p.list" >>"$work/debs.list"
		# the .install list's patterns, as path prefixes
		if awk 'NR == FNR { if ($0 !~ /^#/ && NF) pre[$1] = 1; next }
			{ ok = 0; for (q in pre) if (index($2, q) == 1) ok = 1; if (!ok) { print; bad = 1 } }
			END { exit bad }' "$repo/debian/$p.install" "$work/$p.list" >"$work/$p.stray"; then
			t "$suite: $p: only the files of debian/$p.install ($(wc -l <"$work/$p.list"))" true
		else
			t "$suite: $p: only the files of debian/$p.install" false
			show <"$work/$p.stray"
		fi
	done
	LC_ALL=C sort -o "$work/debs.list" "$work/debs.list"
	tree_list "$work/ref" | grep -v ' var/lib/vmamerge/manifest$' |
		while read -r m f; do echo "$m $(pkg_path "$f")"; done | LC_ALL=C sort >"$work/ref.list"
	if diff -u "$work/ref.list" "$work/debs.list" >"$work/list.diff"; then
		t "$suite: the packages install make install's $(wc -l <"$work/ref.list") files, same modes" true
	else
		t "$suite: the packages install make install's files, same modes (- make install, + .debs)" false
		grep '^[-+][0-7]' "$work/list.diff" | head -n 40 | show
	fi
	# Same bytes (not the binaries - the CLI and kfp -, which dh_strip
	# strips, nor the compressed manual page, compared uncompressed).
	local differ=()
	while read -r _ f; do
		[[ $f != var/lib/vmamerge/manifest && $f != usr/bin/vmamerge &&
			$f != usr/lib/vmamerge/kfp ]] || continue
		g=$(pkg_path "$f")
		for p in "${pkgs[@]}"; do
			if [[ -f $work/x/$p/$g ]]; then
				cmp -s "$work/ref/$f" "$work/x/$p/$g" || differ+=("$f")
			elif [[ -f $work/x/$p/$g.gz ]]; then
				gzip -dc "$work/x/$p/$g.gz" | cmp -s "$work/ref/$f" - || differ+=("$f")
			fi
		done
	done < <(tree_list "$work/ref")
	t "$suite: same contents as make install's (${differ[*]:-all equal})" test ${#differ[@]} = 0
	t "$suite: vmamerge: the CLI is an ELF executable" \
		test "$(head -c 4 "$work/x/vmamerge/usr/bin/vmamerge" | od -An -c | tr -d ' ')" = '177ELF'
	t "$suite: vmamerge: kfp is an ELF executable" \
		test "$(head -c 4 "$work/x/vmamerge/usr/lib/vmamerge/kfp" | od -An -c | tr -d ' ')" = '177ELF'

	# Maintainer scripts, relations, conffiles.
	p=vmamerge-dkms
	t "$suite: $p: postinst from dh_dkms (dkms common.postinst vmamerge $ver)" \
		grep -q "^DKMS_VERSION=$ver\$" "$work/ctl/$p/postinst" -a
	t "$suite: $p: postinst calls /usr/lib/dkms/common.postinst" \
		grep -q /usr/lib/dkms/common.postinst "$work/ctl/$p/postinst"
	# shellcheck disable=SC2016 # the script's own text
	t "$suite: $p: prerm from dh_dkms (dkms remove)" \
		grep -q 'dkms remove -m $DKMS_NAME -v $DKMS_VERSION --all' "$work/ctl/$p/prerm"
	# (the floor is dh_dkms's: bookworm 3.0.3-4~, trixie 3.0.11)
	d=$(field "$work/${p}_${ver}_all.deb" Depends | tr ',' '\n' | sed -n 's/^ *\(dkms (>= [^)]*)\)$/\1/p')
	t "$suite: $p: Depends ${d:-dkms}" test -n "$d"
	t "$suite: $p: Depends vmamerge (= $ver)" \
		grep -qx "vmamerge (= $ver)" <(field "$work/${p}_${ver}_all.deb" Depends | tr ',' '\n' | sed 's/^ *//')
	t "$suite: $p: conffile /etc/kernel/postinst.d/vmamerge (the kernel hook)" \
		test "$(cat "$work/ctl/$p/conffiles")" = /etc/kernel/postinst.d/vmamerge
	p=vmamerge
	t "$suite: $p: Depends libc6 (shlibs)" \
		grep -q '^libc6 (>= ' <(field "$work/${p}_${ver}_amd64.deb" Depends | tr ',' '\n' | sed 's/^ *//')
	t "$suite: $p: Depends libbpf1 and liblzma5 (kfp's shlibs)" \
		bash -c 'd=$(cat); grep -q "libbpf1" <<<"$d" && grep -q "liblzma5" <<<"$d"' \
		< <(field "$work/${p}_${ver}_amd64.deb" Depends)
	t "$suite: $p: Recommends vmamerge-dkms (= $ver)" \
		test "$(field "$work/${p}_${ver}_amd64.deb" Recommends)" = "vmamerge-dkms (= $ver)"
	t "$suite: $p: no conffiles (the udev rule is in /usr/lib/udev/rules.d)" \
		test ! -e "$work/ctl/$p/conffiles"
	t "$suite: $p: no maintainer scripts" \
		test -z "$(find "$work/ctl/$p" -regex '.*/\(pre\|post\)\(inst\|rm\)')"

	# lintian, the suite's, over the .changes (all packages).
	local changes tags unexpected
	changes=$(cd "$work" && ls -- *.changes)
	# (as nobody: lintian warns against running as root)
	bash "$repo/tools/build-root.sh" --run "$root" runuser -u nobody -- /bin/sh -c \
		'cd "$1" && HOME=/tmp lintian --info --display-level ">=pedantic" "$2"' sh "$work" "$changes" \
		>"$work/lintian.log" 2>&1
	echo "# $suite: lintian $(bash "$repo/tools/build-root.sh" --run "$root" lintian --version) (log: $work/lintian.log):"
	grep -E '^[EWIPX]: ' "$work/lintian.log" | grep -v '^N:' | show
	tags=$(sed -nE 's/^([EW]): [^ ]+: ([^ ]+).*/\1 \2/p' "$work/lintian.log" | LC_ALL=C sort -u)
	unexpected=$(printf '%s\n' "$tags" | awk -v kept=" ${lintian_kept[*]} " \
		'NF && ($1 == "E" || index(kept, " " $2 " ") == 0)')
	t "$suite: lintian: no error, no warning but the kept ones (${lintian_kept[*]})" test -z "$unexpected"
	t "$suite: lintian ran (a .changes checked)" grep -q . <(printf '%s' "$changes")

	install_test "$suite" "$root" "$work" "$src"
}

# install_rel SUITE: "RELEASE DEBIAN-VERSION" of a validated build
# compiled with SUITE's gcc (bookworm 12, trixie 14) whose header tree
# tests/setup.sh unpacked
install_rel() {
	local want r
	case $1 in
	bookworm) want=12 ;;
	trixie) want=14 ;;
	*) return 1 ;;
	esac
	while read -r _ r v _; do
		kdir_ready "$r" || continue
		grep -qE "^CONFIG_CC_VERSION_TEXT=\".*gcc.* $want\." "$(kdir_of "$r")/.config" &&
			{ echo "$r $v"; return 0; }
	done < <(builds_of full smoke)
	return 1
}

# install_test SUITE ROOT WORK SRC: tests/deb-install.sh (apt-get install, what
# dh_dkms's postinst does for a validated and an unlisted kernel, the
# kernel hook, apt-get purge, the file list before and after) in a
# throwaway overlay of ROOT: the cached root stays as it is.
install_test() {
	local suite=$1 root=$2 work=$3 src=$4 rel v deps line ovl=$3/ovl unlisted=6.99.0-1-amd64
	if ! read -r rel v < <(install_rel "$suite"); then
		t "$suite install: a validated build of $suite's compiler with headers # SKIP none in $cache/headers" true
		return
	fi
	# What the header tree's tools need: its linux-kbuild package's
	# Depends (libelf, libssl, zlib; pahole on 6.12), which a real
	# linux-headers installation brings along.
	deps=$(for f in "$cache"/debs/linux-kbuild-*_"${v//:/%3a}"_amd64.deb; do
		[[ -f $f ]] && dpkg-deb -f "$f" Depends
	done | tr ',' '\n' | sed -E 's/^ *//; s/[ (|].*//' | grep -vx 'libc6' | LC_ALL=C sort -u | tr '\n' ' ')
	echo "# $suite install: README's apt-get install in an overlay of the build root, module for $rel (logs: $work/dpkg-*.log)"
	rm -rf "$ovl"
	mkdir -p "$ovl"
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --mount --propagation private -- /bin/sh -c '
		o=$1 root=$2; shift 2
		mkdir -p "$o/upper" "$o/wk" "$o/merged" &&
		mount -t overlay overlay -o "lowerdir=$root,upperdir=$o/upper,workdir=$o/wk" "$o/merged" &&
		cp /etc/resolv.conf "$o/merged/etc/resolv.conf" &&
		exec bash "$0" --run "$o/merged" "$@"' "$repo/tools/build-root.sh" "$ovl" "$root" \
		/bin/bash "$src/tests/deb-install.sh" "$work" "$ver" "$rel" "$(kdir_of "$rel")" "$unlisted" "$deps" \
		"$(find "$cache/kernels/$rel/" -path '*/kernel/*' -name '*.ko*' -size -64k 2>/dev/null | head -n1)" \
		>"$work/install-test.log" 2>&1
	while IFS= read -r line; do
		case $line in
		"ok - "*) t "$suite install: ${line#ok - }" true ;;
		"not ok - "*) t "$suite install: ${line#not ok - }" false ;;
		DEB-INSTALL-END) ;;
		*) printf '%s\n' "$line" ;;
		esac
	done <"$work/install-test.log"
	grep -q '^DEB-INSTALL-END' "$work/install-test.log" ||
		t "$suite install: tests/deb-install.sh ran to the end" false
	rm -rf "$ovl"
}

case ${1:-} in
--static) static_test; finish ;;
"") static_test; suites=(bookworm) ;;
*) suites=("$@") ;;
esac
[[ $(id -u) == 0 ]] || { t "root (debootstrap, chroot) for the package builds" false; finish; }
for s in "${suites[@]}"; do
	suite_test "$s"
done
finish
