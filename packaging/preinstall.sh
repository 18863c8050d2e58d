#!/bin/sh
# Creates the unprivileged system user the service runs as.
set -e
if ! getent passwd outpost >/dev/null; then
  useradd --system --home-dir /var/lib/outpost --no-create-home --shell /usr/sbin/nologin outpost
fi
