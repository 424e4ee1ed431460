#!/bin/bash
# tools/install.sh: the body of `sudo make install` (and `make uninstall`:
# tools/install.sh uninstall).  Works from a release tarball: no git.
#
# install:
#   1. copies the module source (Kbuild, Makefile, dkms.conf, module/,
#      nothing built) to $DESTDIR/usr/src/vmamerge-$VERSION;
#   2. builds the CLI and kfp (tools/kfp: the equivalence check of
#      unlisted kernel builds) in a private temporary directory (never in
#      the checkout, which belongs to the user who unpacked it), and
#      installs kfp as $DESTDIR$PREFIX/lib/vmamerge/kfp, where the module
#      build (module/admit.sh) and the CLI find it;
#   3. `dkms add` and `dkms install -k $KVER` for a listed or equivalent
#      build (skipped with DESTDIR: a package does that in its postinst);
#   4. installs the CLI, man page, bash completion, uapi header under
#      $DESTDIR$PREFIX, the udev rule in $DESTDIR$UDEVRULESDIR
#      (/etc/udev/rules.d; the Debian package: /usr/lib/udev/rules.d), the
#      kernel hook in $DESTDIR/etc/kernel/postinst.d, and a manifest of
#      everything it wrote: $DESTDIR/var/lib/vmamerge/manifest.
# Any failure undoes what this run did (in reverse order; files it
# replaced are put back) and exits 1.
#
# uninstall: unloads the module (livepatch disable, transition - at most
# $VMAMERGE_UNLOAD_WAIT_S seconds, 60 by default: tools/klp-wait.sh -, rmmod), dkms
# remove of every registered vmamerge version, removes the source tree and
# the files of the manifest (or, without one, the files `make install` puts
# under $PREFIX), and the boot-time configuration README.md has the
# administrator write (/etc/modules-load.d/vmamerge.conf,
# /etc/modprobe.d/vmamerge.conf).  Whatever it cannot undo is listed at the
# end, exit status 1.
#
# Environment (from the Makefile): VERSION, KVER, PREFIX, DESTDIR,
# UDEVRULESDIR;
# VMAMERGE_UNLOAD_WAIT_S (uninstall).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
action=${1:-install}
VERSION=${VERSION:?}
KVER=${KVER:-$(uname -r)}
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
UDEVRULESDIR=${UDEVRULESDIR:-/etc/udev/rules.d}
srcdir=$DESTDIR/usr/src/vmamerge-$VERSION
manifest=$DESTDIR/var/lib/vmamerge/manifest
# The administrator's boot-time configuration (README.md, "Install").
admin_conf=(/etc/modules-load.d/vmamerge.conf /etc/modprobe.d/vmamerge.conf)

say() { printf 'vmamerge: %s\n' "$*"; }

# ---- install -------------------------------------------------------------------
# $tmp/undo: one shell command a line that undoes a step, newest last;
# $tmp/manifest: what the install wrote (paths without DESTDIR; "dir PATH"
# for a directory it created).
tmp=
cleanup() { [[ -z $tmp ]] || rm -rf "$tmp"; }
trap cleanup EXIT

rollback() {
	local cmds=() i
	say "install failed: undoing what it did"
	mapfile -t cmds <"$tmp/undo"
	for ((i = ${#cmds[@]} - 1; i >= 0; i--)); do
		say "  undo: ${cmds[$i]}"
		eval "${cmds[$i]}" || say "  could not undo: ${cmds[$i]}"
	done
}
on_undo() { printf '%s\n' "$*" >>"$tmp/undo"; }

# put_file MODE SRC DEST: install SRC as DEST (directories as needed),
# remembering how to undo it
put_file() {
	local mode=$1 src=$2 dest=$3 d=$3 new=() i backup
	while d=$(dirname "$d") && [[ ! -d $d ]]; do new+=("$d"); done
	for ((i = ${#new[@]} - 1; i >= 0; i--)); do
		mkdir "${new[$i]}"
		on_undo "rmdir '${new[$i]}'"
		printf 'dir %s\n' "${new[$i]#"$DESTDIR"}" >>"$tmp/manifest"
	done
	if [[ -e $dest ]]; then
		backup=$tmp/backup.$(printf '%s' "$dest" | md5sum | cut -c1-12)
		cp -a "$dest" "$backup"
		on_undo "cp -a '$backup' '$dest'"
	else
		on_undo "rm -f '$dest'"
	fi
	install -m "$mode" "$src" "$dest"
	printf '%s\n' "${dest#"$DESTDIR"}" >>"$tmp/manifest"
}

# validated RELEASE: is RELEASE in module/builds.list?
validated() {
	awk -v series=all -v out=releases -f "$top/module/builds.awk" \
		"$top/module/builds.list" | grep -qxF "$1"
}

install_steps() {
	local need_dkms=1 out f d
	[[ -n $DESTDIR ]] && need_dkms=0
	# The CLI, built from a copy: the checkout stays the user's.
	say "building the CLI (in $tmp)"
	mkdir -p "$tmp/src/module"
	cp -a "$top/userspace" "$top/dkms.conf" "$tmp/src/"
	cp -a "$top/module/uapi" "$top/module/builds.h" "$top/module/builds.list" \
		"$top/module/builds.awk" "$tmp/src/module/"
	make -s -C "$tmp/src/userspace" clean >/dev/null
	out=$(make -s -C "$tmp/src/userspace" PREFIX="$PREFIX" vmamerge 2>&1) || { printf '%s\n' "$out"; return 1; }
	say "building kfp (in $tmp)"
	cp -a "$top/tools/kfp" "$tmp/src/kfp"
	make -s -C "$tmp/src/kfp" clean >/dev/null
	out=$(make -s -C "$tmp/src/kfp" 2>&1) || {
		printf '%s\n' "$out"
		say "kfp needs: apt-get install liblzma-dev libzstd-dev liblz4-dev libelf-dev libbpf-dev binutils-dev"
		return 1
	}

	# The module source, nothing built in the checkout comes along.
	if [[ -e $srcdir ]]; then
		say "$srcdir exists (an earlier install): replacing it"
		mv "$srcdir" "$tmp/old-src"
		on_undo "rm -rf '$srcdir'; mv '$tmp/old-src' '$srcdir'"
	else
		on_undo "rm -rf '$srcdir'"
	fi
	mkdir -p "$srcdir"
	(cd "$top" && tar -cf - --exclude='*.o' --exclude='*.ko' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude='*.cmd' --exclude='*.order' \
		--exclude='*.symvers' --exclude='.tmp_versions' --exclude=ksyms-weak.h \
		--exclude='hook_offsets.s' \
		--exclude=module/klp-convert/klp-convert \
		Kbuild Makefile dkms.conf module) | tar -xf - --no-same-owner -C "$srcdir"
	echo "/usr/src/vmamerge-$VERSION" >>"$tmp/manifest"

	# before dkms: the module build of an unlisted kernel runs it
	put_file 0755 "$tmp/src/kfp/kfp" "$DESTDIR$PREFIX/lib/vmamerge/kfp"
	if ((need_dkms)); then
		if [[ -n $(dkms status -m vmamerge -v "$VERSION" 2>/dev/null) ]]; then
			say "vmamerge/$VERSION is registered with dkms already: removing it first (not undoable)"
			dkms remove vmamerge/"$VERSION" --all >/dev/null
		fi
		on_undo "dkms remove vmamerge/$VERSION --all >/dev/null"
		dkms add vmamerge/"$VERSION"
		# Only a validated build, or one proven equivalent to one,
		# gets the module: on any other it could not load (admit.sh
		# says why).  Kernels installed later: the hook below decides
		# the same way.
		if ! validated "$KVER" &&
			! KFP=$DESTDIR$PREFIX/lib/vmamerge/kfp sh "$srcdir/module/admit.sh" --release "$KVER"; then
			say "kernel $KVER: the module is not built for it"
			say "  validated builds: $srcdir/module/builds.list; to port: make port KVER=$KVER"
		elif ! dkms install vmamerge/"$VERSION" -k "$KVER"; then
			f=/var/lib/dkms/vmamerge/$VERSION/build/make.log
			[[ -f $f ]] && { say "last lines of $f:"; tail -n 30 "$f"; }
			return 1
		fi
	else
		say "DESTDIR set: not running dkms (module source in $srcdir)"
	fi

	put_file 0755 "$tmp/src/userspace/vmamerge" "$DESTDIR$PREFIX/bin/vmamerge"
	# the bounded livepatch wait README.md names (tools/klp-wait.sh)
	put_file 0755 "$top/tools/klp-wait.sh" "$DESTDIR$PREFIX/bin/vmamerge-klp-wait"
	put_file 0644 "$top/module/uapi/vmamerge.h" "$DESTDIR$PREFIX/include/linux/vmamerge.h"
	put_file 0644 "$top/userspace/99-vmamerge.rules" "$DESTDIR$UDEVRULESDIR/99-vmamerge.rules"
	# kernels installed later (apt upgrade): tools/kernel-postinst
	sed "s/@VERSION@/$VERSION/" "$top/tools/kernel-postinst" >"$tmp/kernel-postinst"
	put_file 0755 "$tmp/kernel-postinst" "$DESTDIR/etc/kernel/postinst.d/vmamerge"
	sed "s/@VERSION@/$VERSION/" "$top/userspace/vmamerge.8" >"$tmp/vmamerge.8"
	put_file 0644 "$tmp/vmamerge.8" "$DESTDIR$PREFIX/share/man/man8/vmamerge.8"
	sed "s/@VERSION@/$VERSION/" "$top/userspace/vmamerge-klp-wait.8" >"$tmp/vmamerge-klp-wait.8"
	put_file 0644 "$tmp/vmamerge-klp-wait.8" "$DESTDIR$PREFIX/share/man/man8/vmamerge-klp-wait.8"
	put_file 0644 "$top/userspace/vmamerge.bash-completion" \
		"$DESTDIR$PREFIX/share/bash-completion/completions/vmamerge"
	# The manifest lists itself (and the directory it creates, if any).
	cp "$tmp/manifest" "$tmp/manifest.body"
	printf '%s\n' "${manifest#"$DESTDIR"}" >>"$tmp/manifest.body"
	d=$(dirname "$manifest")
	[[ -d $d ]] || { mkdir -p "$d"; on_undo "rmdir '$d'"; echo "dir ${d#"$DESTDIR"}" >>"$tmp/manifest.body"; }
	on_undo "rm -f '$manifest'"
	install -m 0644 "$tmp/manifest.body" "$manifest"
}

do_install() {
	local rc
	if [[ -z $DESTDIR ]]; then
		[[ $(id -u) == 0 ]] || { say "make install needs root (sudo make install), or DESTDIR=..."; exit 1; }
		command -v dkms >/dev/null ||
			{ say "dkms is not installed: sudo apt-get install dkms linux-headers-$KVER"; exit 1; }
		[[ -f /lib/modules/$KVER/build/Makefile ]] ||
			{ say "no kernel headers for $KVER: sudo apt-get install linux-headers-$KVER"; exit 1; }
	fi
	tmp=$(mktemp -d /tmp/vmamerge-install.XXXXXX)
	: >"$tmp/manifest"
	: >"$tmp/undo"
	set +e
	(
		set -e
		install_steps
	)
	rc=$?
	set -e
	if ((rc != 0)); then
		rollback
		exit 1
	fi
	if [[ -z $DESTDIR ]] && command -v udevadm >/dev/null; then
		udevadm control --reload-rules || true
	fi
	say "installed $VERSION: module for $KVER (dkms), CLI $PREFIX/bin/vmamerge"
	[[ -n $DESTDIR ]] || say "load it now: sudo modprobe vmamerge; at boot: README.md, \"Install\""
}

# ---- uninstall ----------------------------------------------------------------
left=() # what could not be undone

do_uninstall() {
	local v f files=()
	if [[ -z $DESTDIR && $(id -u) != 0 ]]; then
		say "make uninstall needs root (sudo make uninstall)"
		exit 1
	fi
	if [[ -z $DESTDIR && -d /sys/module/vmamerge ]]; then
		# disable, and wait (bounded) for the transition; on a timeout
		# klp-wait.sh names the tasks that hold it and what to do
		if ! sh "$top/tools/klp-wait.sh" disable "${VMAMERGE_UNLOAD_WAIT_S:-60}"; then
			left+=("the module is still loaded: its livepatch transition has not finished (above: the tasks that hold it); once it has, 'sudo rmmod vmamerge' - or it goes away at the next boot")
		elif rmmod vmamerge 2>/dev/null; then
			say "module unloaded"
		else
			left+=("the module is still loaded (rmmod vmamerge failed); it goes away at the next boot")
		fi
	fi
	if [[ -z $DESTDIR ]] && command -v dkms >/dev/null; then
		for v in $(dkms status -m vmamerge 2>/dev/null | sed -nE 's#^vmamerge/([^,:]+).*#\1#p' | sort -u); do
			if dkms remove vmamerge/"$v" --all >/dev/null 2>&1; then
				say "dkms: removed vmamerge/$v"
			else
				left+=("dkms remove vmamerge/$v --all failed")
			fi
		done
	fi
	if [[ -f $manifest ]]; then
		mapfile -t files <"$manifest"
	else
		say "no $manifest: removing the files make install puts under $PREFIX"
		files=("$PREFIX/bin/vmamerge" "$PREFIX/bin/vmamerge-klp-wait"
			"$PREFIX/lib/vmamerge/kfp"
			"$PREFIX/include/linux/vmamerge.h"
			"$UDEVRULESDIR/99-vmamerge.rules" "$PREFIX/share/man/man8/vmamerge.8"
			"$PREFIX/share/man/man8/vmamerge-klp-wait.8"
			"$PREFIX/share/bash-completion/completions/vmamerge"
			"/usr/src/vmamerge-$VERSION")
	fi
	[[ -n $DESTDIR ]] || files+=("${admin_conf[@]}")
	for f in "${files[@]}"; do
		[[ $f == /?* && $f != "dir "* ]] || continue
		[[ -e $DESTDIR$f || -L $DESTDIR$f ]] || continue
		if rm -rf -- "$DESTDIR$f"; then
			say "removed $f"
		else
			left+=("could not remove $DESTDIR$f")
		fi
	done
	# The directories it created, deepest first, if nothing else is in them.
	for f in $(printf '%s\n' "${files[@]}" | sed -n 's/^dir //p' | awk '{ print length, $0 }' |
		sort -rn | cut -d' ' -f2-); do
		[[ -d $DESTDIR$f ]] || continue
		rmdir -- "$DESTDIR$f" 2>/dev/null && say "removed $f/" ||
			say "kept $f/ (not empty: not only ours)"
	done
	# What dkms or an older install may have left.
	for f in "$DESTDIR"/lib/modules/*/updates/dkms/vmamerge.ko* "$DESTDIR/var/lib/dkms/vmamerge" \
		"$DESTDIR"/usr/src/vmamerge-*; do
		[[ -e $f ]] && left+=("$f is still there")
	done
	if [[ -z $DESTDIR ]] && command -v udevadm >/dev/null; then
		udevadm control --reload-rules || true
	fi
	if ((${#left[@]})); then
		say "uninstall could not undo everything:"
		printf '  %s\n' "${left[@]}"
		exit 1
	fi
	say "uninstalled"
}

case $action in
install) do_install ;;
uninstall) do_uninstall ;;
*) echo "usage: $0 install|uninstall" >&2; exit 2 ;;
esac
