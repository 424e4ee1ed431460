#!/bin/sh
# /opt/vmlab/boot.sh in the lab guest (vmlab.service, after
# multi-user.target; stdout is the results channel, ttyS1): mount the
# harness disk the host attached and run its phase script, then power off.
# The host decides what each boot does by what it puts on that disk.
mkdir -p /srv/vmlab
if ! mount -o ro LABEL=vmlab /srv/vmlab; then
	echo "not ok - harness disk (LABEL=vmlab) mounted"
	echo "LAB-DONE"
	systemctl poweroff
	exit 0
fi
echo "LAB-BOOTED $(uname -r) $(cat /proc/uptime)"
sh /srv/vmlab/phase.sh
echo "LAB-DONE"
systemctl poweroff
