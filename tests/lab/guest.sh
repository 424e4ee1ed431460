#!/bin/bash
# tests/lab/guest.sh: the lab guest's side (a real Debian system, systemd,
# no network).  /opt/vmlab/boot.sh runs it at every boot from the harness
# disk (/srv/vmlab); the phase comes from the kernel command line
# (vmlab.phase=...), the host chooses kernel and phase per boot:
#   install   (validated kernel) apt-get the prerequisites, a failing
#             `make install` must undo itself, then README's install
#             commands as the administrator, README's boot-time config;
#             INSTALL=deb (tests/lab/suites.sh): README's Debian packages
#             instead - built in the guest, installed with apt
#   use       (validated kernel, rebooted) loaded at boot with the
#             configured defaults, /dev/vmamerge, the CLI as user and root,
#             a realloc loop, README's quick start (status, stats, maps
#             --summary, unload, load); then the upgrade: a newer kernel
#             the list does not name
#   upgraded  (the new kernel) NEWTIER=equivalent: loaded at boot with the
#             configured defaults, its tier, merging; else what dkms left,
#             `vmamerge status`
#   back      (validated kernel again) loaded at boot; the upgrade kernel
#             purged; README's uninstall (INSTALL=deb: its apt-get purge);
#             file lists before/after
# Output (stdout = ttyS1, the results channel): TAP lines "ok - ..." /
# "not ok - ...", "# ..." notes, "  | " command output.  State between boots
# lives in /var/lib/vmlab (outside the trees the file lists compare).
set -u
phase=$(sed -n 's/.*vmlab\.phase=\([a-z]*\).*/\1/p' /proc/cmdline)
H=/srv/vmlab
S=/var/lib/vmlab
mkdir -p "$S"
export LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC1091
. "$H/lab.env" # VER REL NEW INSTALL NEWTIER
INSTALL=${INSTALL:-make} NEWTIER=${NEWTIER:-refused}

ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; }
check() { # DESC CMD...: ok if CMD succeeds
	local d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
show() { sed 's/^/  | /'; }
# as USER CMD: a login shell of USER runs CMD (a string), its output
# shown as it comes (and kept in $S/out), then its exit status and
# seconds; its exit status is returned
as() {
	local u=$1 rc t0=$SECONDS
	shift
	echo "  \$ ($u) $*"
	runuser -u "$u" -- bash -lc "$*" 2>&1 </dev/null | tee "$S/out" | show
	rc=${PIPESTATUS[0]}
	echo "  (exit $rc, $((SECONDS - t0)) s)"
	return $rc
}
# README's commands: the indented lines of a section, up to the next
# heading of any level ("## Install", "### Debian packages (...)")
readme_cmds() { # SECTION-HEADING (a prefix of the heading line)
	awk -v h="$1" '/^##+ / { on = (index($0, h) == 1) } on && /^    [^ ]/ { sub(/^    /, ""); print }' \
		"/home/admin/vmamerge-$VER"/README.md
}
# The file list of the system: the package database and the trees an
# install touches.  Not compared: dkms's signing key, which dkms makes at
# its first build for every module it signs (docs/install.md, "Uninstall").
snapshot() { # OUT
	{
		# (installed packages only: a purged one may stay in the
		# database as "pn"; no versions: the kernel upgrade of "use"
		# may need newer dependencies - trixie's 7.x needs linux-base
		# 4.17~ from backports - which purging that kernel leaves)
		dpkg-query -W -f='pkg ${db:Status-Abbrev} ${Package}:${Architecture}\n' |
			awk '$2 !~ /^.n/'
		# (the Debian packages also write under /usr: CLI, man page,
		# completion, udev rule, docs)
		find /etc /usr/local /usr/src /usr/include /lib/modules /var/lib/dkms /boot /var/lib/vmamerge \
			${deb_trees[@]+"${deb_trees[@]}"} \
			-xdev -path '/var/lib/dkms/mok.*' -prune -o -printf 'file %y %m %u:%g %p\n' 2>/dev/null
	} | LC_ALL=C sort >"$1"
}
diff_snap() { # A B DESC
	if diff -U0 "$1" "$2" >"$S/diff"; then
		ok "$3"
	else
		nok "$3"
		grep -v '^@@' "$S/diff" | head -n 60 | show
	fi
}
deb_trees=()
[[ $INSTALL != deb ]] || deb_trees=(/usr/bin /usr/share/man/man8 /usr/share/bash-completion /usr/lib/udev
	/usr/share/doc)
# realloc_compare WHERE: ~/realloc-loop (built in the use phase) run not
# opted in, then under `vmamerge run`: opted in, its counters show merges
# and it ends with fewer VMAs (WHERE: "" or " on RELEASE", in the names)
realloc_compare() {
	local where=$1 off on merges
	as user "\$HOME/realloc-loop" >/dev/null
	off=$(sed -n 's/^vmas //p' "$S/out")
	as user "vmamerge run -- ~/realloc-loop"
	on=$(sed -n 's/^vmas //p' "$S/out")
	merges=$(grep '^{' "$S/out" | perl -MJSON::PP -ne '$c = decode_json($_)->{counters}; print $c->{merge_renumber} + $c->{merge_both}')
	echo "# realloc-loop$where: $off VMAs not opted in, $on opted in; renumber merges: ${merges:-none}"
	check "realloc loop opted in$where: merges in its counters (${merges:-none})" test "${merges:-0}" -gt 0
	check "realloc loop$where: fewer VMAs opted in ($on < $off)" test "${on:-999}" -lt "${off:-0}"
}
dmesg_clean() {
	! dmesg | grep -qE 'BUG:|WARNING:|Oops|general protection|Call Trace'
}

echo "# lab phase $phase: $(uname -r), $(. /etc/os-release; echo "$PRETTY_NAME")"
case $phase in
install)
	check "booted the validated kernel $REL" test "$(uname -r)" = "$REL"
	check "systemd is PID 1" test "$(cat /proc/1/comm)" = systemd
	as admin "tar -xzf $H/vmamerge-$VER.tar.gz -C ~ && ls ~/vmamerge-$VER | head -n 3"
	check "release tarball unpacked, no git inside" test ! -e "/home/admin/vmamerge-$VER"/.git
	mapfile -t inst < <(readme_cmds "## Install")
	echo "# README install: ${inst[0]}"
	prereq=${inst[0]%% && *} main=${inst[0]#* && }
	as root "apt-get update -q" >/dev/null
	if [[ $INSTALL == deb ]]; then
		# README's Debian packages: build (its build dependencies are
		# in the "before" file list: the removal leaves them), the
		# prerequisites of the make route (dkms, headers: the same),
		# then the packages.
		mapfile -t debc < <(readme_cmds "### Debian packages")
		echo "# README Debian packages: ${debc[*]}"
		check "build the packages (README): ${debc[0]}" as admin "cd ~/vmamerge-$VER && yes | ${debc[0]}"
		check "prerequisites (README): $prereq" as admin "cd ~/vmamerge-$VER && yes | $prereq"
		snapshot "$S/before"
		check "install the packages (README): ${debc[1]}" as admin "cd ~/vmamerge-$VER && yes | ${debc[1]}"
		check "nothing of the checkout is owned by root" \
			test -z "$(find "/home/admin/vmamerge-$VER" -user root | head -n 3)"
		as root "dpkg -l 'vmamerge*' | tail -n 3"
		check "vmamerge and vmamerge-dkms $VER installed" \
			test "$(dpkg-query -W -f='${Version} ' vmamerge vmamerge-dkms)" = "$VER $VER "
	else
		check "prerequisites (README): $prereq" as admin "cd ~/vmamerge-$VER && yes | $prereq"
		snapshot "$S/before"
		# A failing dkms: make install must leave nothing behind.
		mkdir -p /tmp/fakedkms
		printf '#!/bin/sh\n[ "$1" = install ] && { echo "fake dkms: install fails"; exit 10; }\nexec /usr/sbin/dkms "$@"\n' \
			>/tmp/fakedkms/dkms
		chmod 755 /tmp/fakedkms/dkms
		if as admin "cd ~/vmamerge-$VER && sudo env PATH=/tmp/fakedkms:/usr/sbin:/usr/bin:/sbin:/bin make install"; then
			nok "make install with a failing dkms fails"
		else
			ok "make install with a failing dkms fails"
		fi
		snapshot "$S/after-failed"
		diff_snap "$S/before" "$S/after-failed" "a failed make install leaves the file list as it was"
		check "install (README): $main" as admin "cd ~/vmamerge-$VER && $main"
		check "nothing of the checkout is owned by root" \
			test -z "$(find "/home/admin/vmamerge-$VER" -user root | head -n 3)"
	fi
	for c in "${inst[@]:1}"; do
		case $c in
		*modprobe.d* | *modules-load.d*) check "boot-time config (README): $c" as admin "$c" ;;
		esac
	done
	as root "dkms status; modinfo -F version vmamerge; cat /etc/modprobe.d/vmamerge.conf /etc/modules-load.d/vmamerge.conf"
	check "dkms: vmamerge/$VER installed for $REL" \
		bash -c "dkms status vmamerge/$VER -k $REL | grep -q installed"
	;;
use)
	check "booted the validated kernel $REL again" test "$(uname -r)" = "$REL"
	check "module loaded at boot" test -d /sys/module/vmamerge
	check "systemd-modules-load succeeded" systemctl is-active -q systemd-modules-load
	as root "cat /sys/module/vmamerge/parameters/mode /sys/module/vmamerge/parameters/features /sys/kernel/debug/vmamerge/mode /sys/kernel/debug/vmamerge/features; vmamerge status"
	check "configured default mode=always (debugfs)" grep -q '\[always\]' /sys/kernel/debug/vmamerge/mode
	check "configured default features=renumber (debugfs)" \
		test "$(cat /sys/kernel/debug/vmamerge/features)" = "[renumber] transplant"
	check "module version $VER (sysfs)" test "$(cat /sys/module/vmamerge/version)" = "$VER"
	check "README: vmamerge check-kernel (as user): exit 0, validated" as user "vmamerge check-kernel"
	check "  ... says $REL is validated" grep -q "^$REL: validated" "$S/out"
	check "sudo vmamerge-klp-wait enable 30 (installed with the CLI; docs/admin.md): the transition is over" \
		as admin "sudo vmamerge-klp-wait enable 30"
	check "README: vmamerge status (as user): exit 0" as user "vmamerge status"
	check "  ... livepatch enabled, no transition in progress" \
		grep -qx 'livepatch:    enabled, no transition in progress' "$S/out"
	# (the configured features=renumber: the transplant case is skipped)
	check "README: vmamerge selftest (as user): exit 0" as user "vmamerge selftest"
	check "  ... ok: the renumber merge left one VMA, the transplant case skipped (feature off)" \
		grep -q '^selftest: ok (renumber merge: 1 VMA; transplant merge: skipped, feature transplant off; counters: .*merge_renumber +1' "$S/out"
	as root "ls -l /dev/vmamerge"
	check "/dev/vmamerge: crw-rw-rw- root root" test "$(stat -c '%A %U %G' /dev/vmamerge)" = "crw-rw-rw- root root"
	# As the unprivileged user.
	out=$(runuser -u user -- vmamerge run -- /bin/sh -c 'printf "%s|" "$@"; exit 7' sh a 'b c' '' d)
	rc=$?
	echo "  | $out (exit $rc)"
	check "user: vmamerge run -- sh -c ... prints a|b c||d| and exits 7" test "$out|$rc" = "a|b c||d||7"
	out=$(runuser -u user -- vmamerge run --no-exec -- /bin/sh -c 'printf "%s|" "$@"; exit 7' sh a 'b c' '' d)
	rc=$?
	echo "  | $out (exit $rc)"
	check "user: vmamerge run --no-exec -- ... the same" test "$out|$rc" = "a|b c||d||7"
	as user "vmamerge stats --json" >/dev/null
	check "user: vmamerge stats --json parses" \
		bash -c "runuser -u user -- vmamerge stats --json | perl -MJSON::PP -e 'decode_json(join q(), <STDIN>)'"
	check "user: vmamerge enable -p on its own process" \
		as user 'sleep 30 & p=$!; vmamerge enable -p $p; r=$?; vmamerge stats -p $p --json; kill $p; exit $r'
	sleep 60 &
	rootpid=$!
	if as user "vmamerge enable -p $rootpid"; then
		nok "user: vmamerge enable -p on root's process is refused"
	else
		ok "user: vmamerge enable -p on root's process is refused"
	fi
	kill $rootpid
	# As root: mode and features through debugfs and the CLI.
	echo never >/sys/kernel/debug/vmamerge/mode
	check "root: debugfs mode never" grep -q '\[never\]' /sys/kernel/debug/vmamerge/mode
	echo all >/sys/kernel/debug/vmamerge/features
	check "root: debugfs features all" \
		test "$(cat /sys/kernel/debug/vmamerge/features)" = "[renumber] [transplant]"
	check "root: vmamerge mode optin" as root "vmamerge mode optin && vmamerge mode"
	check "root: ... reads back [optin] (debugfs)" grep -q '\[optin\]' /sys/kernel/debug/vmamerge/mode
	check "root: vmamerge features -transplant" as root "vmamerge features -transplant && vmamerge features"
	check "root: ... reads back through debugfs" \
		test "$(cat /sys/kernel/debug/vmamerge/features)" = "[renumber] transplant"
	as root "vmamerge features all" >/dev/null
	# A real program that fragments: not opted in, then opted in.
	as user "cp $H/realloc-loop.c ~ && gcc -O2 -o ~/realloc-loop ~/realloc-loop.c"
	realloc_compare ""
	# README's quick start, as typed: stats, maps --summary (of a
	# process of the user's), then unload and load again
	check "README: vmamerge stats (as user): exit 0" as user "vmamerge stats"
	check "  ... the global counters (merge_attempts)" grep -q '^merge_attempts  *[0-9][0-9]*$' "$S/out"
	# shellcheck disable=SC2016 # expanded by the user's shell
	check "README: vmamerge maps -p PID --summary (as user, its own process): exit 0" \
		as user 'sleep 30 & p=$!; sleep 1; vmamerge maps -p $p --summary; r=$?; kill $p; exit $r'
	check "  ... its VMAs and the distance to vm.max_map_count" \
		grep -q '^pid [0-9]*: [0-9]* vmas, vm.max_map_count [0-9]* ([0-9]* to go)$' "$S/out"
	check "  ... the missed merges" grep -q '^missed merges: [0-9]* (vmamerge compact would leave [0-9]* vmas at best)$' "$S/out"
	check "README: sudo vmamerge-klp-wait disable 60 && sudo rmmod vmamerge: exit 0" \
		as admin "sudo vmamerge-klp-wait disable 60 && sudo rmmod vmamerge"
	check "  ... module unloaded" test ! -d /sys/module/vmamerge
	check "README: sudo modprobe vmamerge && sudo vmamerge-klp-wait enable 30: exit 0" \
		as admin "sudo modprobe vmamerge && sudo vmamerge-klp-wait enable 30"
	check "  ... loaded again with the configured default mode=always (debugfs)" \
		grep -q '\[always\]' /sys/kernel/debug/vmamerge/mode
	check "no kernel warnings" dmesg_clean
	# The upgrade: a newer kernel that is not a listed build.
	echo "# upgrade: apt-get install linux-image-$NEW linux-headers-$NEW"
	check "apt-get install of the unlisted kernel $NEW exits 0" \
		as admin "sudo apt-get install -y linux-image-$NEW linux-headers-$NEW"
	if [[ $NEWTIER == equivalent ]]; then
		check "the kernel hook: $NEW is equivalent to a validated build" \
			grep -q "vmamerge: kernel $NEW is equivalent to the validated build " "$S/out"
	else
		check "the kernel hook: not building the module for $NEW" \
			grep -q "vmamerge: .*not building the module for $NEW" "$S/out"
	fi
	as root "dkms status; ls -l /lib/modules/$NEW/updates/dkms/ 2>&1; ls /boot"
	;;
upgraded)
	check "booted the unlisted kernel $NEW" test "$(uname -r)" = "$NEW"
	as root "systemctl status --no-pager systemd-modules-load | tail -n 8; dkms status"
	if [[ $NEWTIER == equivalent ]]; then
		check "module loaded at boot" test -d /sys/module/vmamerge
		check "/sys/module/vmamerge/build: equivalent to a validated build" \
			grep -q '^equivalent [0-9]' /sys/module/vmamerge/build
		check "modinfo -F tier vmamerge: the same" \
			test "$(modinfo -F tier vmamerge)" = "$(cat /sys/module/vmamerge/build)"
		check "the administrator's default mode=always (debugfs)" grep -q '\[always\]' /sys/kernel/debug/vmamerge/mode
		as root "vmamerge status"
		check "vmamerge status: tier equivalent" grep -qi "equivalent" "$S/out"
		check "README: vmamerge check-kernel (as user): exit 0, equivalent" as user "vmamerge check-kernel"
		check "  ... says $NEW is equivalent to a validated build" grep -q "^$NEW: equivalent to " "$S/out"
		# mode always merges the run that is not opted in too: optin
		# for the comparison, as in the use phase
		check "root: vmamerge mode optin" as root "vmamerge mode optin"
		realloc_compare " on $NEW"
		check "no kernel warnings" dmesg_clean
	else
		if ko=$(modinfo -n vmamerge 2>/dev/null); then
			echo "# dkms left $ko for $NEW"
			check "the module dkms left for $NEW loads" as root "modprobe vmamerge"
		else
			ok "dkms left no module for $NEW"
		fi
		as root "vmamerge status"
		as admin "vmamerge status" >/dev/null
		check "vmamerge status names the running build $NEW" grep -q "$NEW" "$S/out"
		check "vmamerge status says it is not validated" grep -qi "not validated" "$S/out"
		check "vmamerge status says why no module loads (not: modprobe it)" \
			grep -q "no module is built for $NEW, which is not a validated build" "$S/out"
		check "no kernel warnings" dmesg_clean
	fi
	;;
back)
	check "booted back into the validated kernel $REL" test "$(uname -r)" = "$REL"
	check "module loaded at boot" test -d /sys/module/vmamerge
	# every package of that kernel version: from 7.x on, Debian splits a
	# kernel into linux-image, -binary, -modules and -base-VERSION, and
	# purging linux-image and linux-headers leaves the others installed
	# ("no longer required") with their /lib/modules/VERSION tree
	# - of those the install found installed, none: dkms recommends
	# linux-headers-amd64, so on an up-to-date Debian 12 README's
	# prerequisites already bring the newest kernel's headers
	upg=$(comm -23 <(dpkg-query -W -f='${db:Status-Abbrev} ${Package}:${Architecture}\n' "*${NEW%-amd64}*" 2>/dev/null |
		awk '$1 !~ /^.n/ { print $2 }' | LC_ALL=C sort) \
		<(awk '$1 == "pkg" { print $NF }' "$S/before" | LC_ALL=C sort) | tr '\n' ' ')
	check "purge the upgrade kernel: ${upg:-nothing the install did not find}" \
		as admin "sudo apt-get purge -y --autoremove $upg"
	mapfile -t un < <(readme_cmds "## Uninstall")
	echo "# README uninstall: ${un[*]}"
	if [[ $INSTALL == deb ]]; then
		# README: the packages' removal does not unload the module
		# (it goes at the next boot): what is checked is that nothing
		# is left on disk.
		unc=$(printf '%s\n' "${un[@]}" | grep -m1 'apt-get purge')
		check "uninstall (README): $unc" as admin "cd ~/vmamerge-$VER && yes | $unc"
		unc=$(printf '%s\n' "${un[@]}" | grep -m1 'rm -f /etc/modprobe.d')
		check "uninstall (README): $unc" as admin "$unc"
		check "no vmamerge.ko left under /lib/modules" \
			test -z "$(find /lib/modules -name 'vmamerge.ko*' | head -n 3)"
		check "packages purged" test -z "$(dpkg-query -W -f='${db:Status-Abbrev}\n' vmamerge vmamerge-dkms 2>/dev/null | grep -v '^.n')"
		check "no udev rule of the package (/usr/lib/udev/rules.d)" test ! -e /usr/lib/udev/rules.d/99-vmamerge.rules
	else
		check "uninstall (README): ${un[0]}" as admin "cd ~/vmamerge-$VER && ${un[0]}"
		check "module unloaded" test ! -d /sys/module/vmamerge
		check "no /dev/vmamerge" test ! -e /dev/vmamerge
	fi
	check "no CLI" test -z "$(command -v vmamerge)"
	check "no dkms tree" test ! -e /var/lib/dkms/vmamerge
	check "no udev rule in /etc/udev/rules.d" test ! -e /etc/udev/rules.d/99-vmamerge.rules
	snapshot "$S/after"
	diff_snap "$S/before" "$S/after" "file list after removal equals the one before the install"
	echo "# file-list lines compared: $(wc -l <"$S/before")"
	;;
*) nok "unknown phase '$phase'" ;;
esac
echo "LAB-PHASE-END $phase"
