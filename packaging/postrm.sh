#!/bin/sh
# postrm of the outpost package. remove keeps the configuration, the data
# and the user; purge deletes the data (/var/lib/outpost: database,
# certificates, secrets) and the system user.
set -e

case "$1" in
remove)
	if [ -d /run/systemd/system ]; then
		systemctl daemon-reload || true
	fi
	;;
purge)
	rm -rf /var/lib/outpost
	if getent passwd outpost >/dev/null; then
		userdel outpost
	fi
	if getent group outpost >/dev/null; then
		groupdel outpost
	fi
	rmdir /etc/outpost 2>/dev/null || true
	if [ -d /run/systemd/system ]; then
		systemctl daemon-reload || true
	fi
	;;
esac
exit 0
