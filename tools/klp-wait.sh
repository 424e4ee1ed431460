#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# klp-wait.sh - wait, bounded, for the vmamerge livepatch transition, and
# say what holds it when it does not finish.
#
#   klp-wait.sh enable  [SECONDS]   after `modprobe vmamerge`: until every
#                                   task runs the new code
#   klp-wait.sh disable [SECONDS]   disable the livepatch (echo 0 >
#                                   enabled) and wait until it is gone, so
#                                   that `rmmod vmamerge` can unload it
#
# SECONDS defaults to 60.  Exit status: 0 done, 1 timed out (the message
# on stderr names the tasks that have not switched and what to do), 2
# usage or nothing to wait for (module not loaded, no livepatch support).
#
# Why a transition can take long: livepatch switches a task only when none
# of the functions the module replaces is on its stack (disable: none of
# the module's replacements).  A task asleep inside one of them holds the
# transition open until it leaves; livepatch's fake signals wake only
# interruptible sleeps.  /proc/PID/task/TID/patch_state says which tasks
# have not switched yet (it differs from the target state while a
# transition is pending); their /proc/PID/task/TID/stack (root) shows
# where they sleep.  POSIX sh: runs under busybox too (the test guests).
# VMAMERGE_LIVEPATCH overrides /sys/kernel/livepatch/vmamerge (tests).

lp=${VMAMERGE_LIVEPATCH:-/sys/kernel/livepatch/vmamerge}
name=$(basename "$lp")

say() { printf 'vmamerge: %s\n' "$*" >&2; }

usage() {
	echo "usage: $0 enable|disable [SECONDS]" >&2
	exit 2
}

# the replaced functions, from the livepatch's sysfs (OBJECT/FUNC,SYMPOS)
replaced_funcs() {
	for d in "$lp"/*/*,*; do
		[ -d "$d" ] || continue
		f=${d##*/}
		echo "${f%,*}"
	done
}

# blockers TARGET: "PID TID COMM" of every task whose patch_state is not
# TARGET (while the transition is pending), then its matching frames
blockers() {
	target=$1
	funcs=$(replaced_funcs | tr '\n' ' ')
	n=0
	for st in /proc/[0-9]*/task/[0-9]*/patch_state; do
		s=$(cat "$st" 2>/dev/null) || continue
		case "$s" in "" | -1 | "$target") continue ;; esac
		t=${st%/patch_state}
		tid=${t##*/}
		p=${t%/task/*}
		pid=${p##*/}
		comm=$(cat "$t/comm" 2>/dev/null)
		n=$((n + 1))
		echo "  pid $pid (thread $tid, $comm)"
		if ! stack=$(cat "$t/stack" 2>/dev/null); then
			echo "      (its kernel stack is readable by root only)"
			continue
		fi
		# the frames livepatch looks for: the module's code on disable,
		# the replaced functions on enable
		printf '%s\n' "$stack" | while read -r _ fr _; do
			fn=${fr%%+*}
			hit=
			if [ "$target" = 0 ]; then
				case "$fr" in vmamerge_*) hit=1 ;; esac
			else
				for f in $funcs; do
					[ "$fn" = "$f" ] && hit=1
				done
			fi
			[ -z "$hit" ] || echo "      in $fr"
		done
	done
	[ "$n" -gt 0 ] || echo "  (none found: /proc/*/task/*/patch_state unreadable, or the transition just finished)"
}

explain() { # WHAT TARGET SECONDS
	what=$1 target=$2 secs=$3
	say "the livepatch transition ($what) has not finished after $secs s."
	say "tasks that have not switched yet (asleep in a function the module replaces):"
	blockers "$target" >&2
	say "the transition goes on in the background and completes by itself once these"
	say "tasks leave the kernel function they sleep in (whatever they wait for happens:"
	say "a userfaultfd monitor reads its events, I/O completes), or when they are"
	say "killed (kill -KILL PID); 'cat $lp/transition' reads 0 then."
	say "do NOT write 1 to $lp/force: it ends the transition at once but"
	say "leaves the module loaded for good (it can no longer be removed until reboot)."
	if [ "$target" = 1 ]; then
		say "to go back instead: echo 0 > $lp/enabled (reverses the pending enable);"
		say "then, once $lp is gone, rmmod $name."
	else
		say "to go back instead: echo 1 > $lp/enabled (reverses the pending disable)."
		say "once $lp is gone: rmmod $name."
	fi
}

what=${1:-}
secs=${2:-60}
case "$what" in enable | disable) ;; *) usage ;; esac
case "$secs" in '' | *[!0-9]*) usage ;; esac

if [ ! -d "$lp" ]; then
	# disable: not loaded, or already gone - done
	[ "$what" = disable ] && exit 0
	say "$lp is not there: the module is not loaded ('sudo modprobe $name')"
	exit 2
fi
if [ "$what" = enable ] && [ "$(cat "$lp/enabled" 2>/dev/null)" != 1 ]; then
	say "the livepatch is disabled or being disabled: no enable to wait for"
	exit 2
fi
if [ "$what" = disable ] && [ "$(cat "$lp/enabled" 2>/dev/null)" = 1 ]; then
	if ! echo 0 >"$lp/enabled" 2>/dev/null; then
		say "cannot write 0 to $lp/enabled (root needed)"
		exit 2
	fi
fi

i=0
while :; do
	if [ "$what" = disable ]; then
		[ -d "$lp" ] || exit 0
	else
		[ "$(cat "$lp/transition" 2>/dev/null)" != 0 ] || exit 0
	fi
	[ "$i" -lt "$secs" ] || break
	sleep 1
	i=$((i + 1))
done
if [ "$what" = disable ]; then explain disable 0 "$secs"; else explain enable 1 "$secs"; fi
exit 1
