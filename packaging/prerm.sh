#!/bin/sh
# prerm of the outpost package: on removal, stop and disable the service
# (when systemd runs this machine). An upgrade leaves it running; postinst
# restarts it with the new binary.
set -e

case "$1" in
remove|deconfigure)
	if [ -d /run/systemd/system ]; then
		systemctl disable --now outpost.service ||
			echo "outpost: could not stop the service" >&2
	fi
	;;
esac
exit 0
