#!/bin/sh
# postinst of the outpost package: the system user, the configuration's
# permissions, and — only when systemd runs this machine (not in a chroot or
# an image build) — the service: enabled and started on first installation,
# restarted (if running) on upgrade.
set -e

case "$1" in
configure)
	if ! getent group outpost >/dev/null; then
		groupadd --system outpost
	fi
	if ! getent passwd outpost >/dev/null; then
		useradd --system --gid outpost --home-dir /var/lib/outpost --no-create-home \
			--shell /usr/sbin/nologin --comment "Outpost TAK server" outpost
	fi
	# The data directory; systemd's StateDirectory= keeps its ownership right
	# from then on, even after `sudo outpost ...` commands wrote into it.
	install -d -m 0700 -o outpost -g outpost /var/lib/outpost
	if [ -z "$2" ]; then
		# First installation: the service may read its configuration, other
		# users may not (it can hold secrets). Later changes are the admin's.
		chown root:outpost /etc/outpost/outpost.yaml
		chmod 0640 /etc/outpost/outpost.yaml
	fi
	if [ -d /run/systemd/system ]; then
		systemctl daemon-reload
		if [ -z "$2" ]; then
			systemctl enable outpost.service
			systemctl start outpost.service ||
				echo "outpost: the service did not start; see: journalctl -u outpost" >&2
		else
			systemctl try-restart outpost.service ||
				echo "outpost: the service did not restart; see: journalctl -u outpost" >&2
		fi
	fi
	;;
esac
exit 0
