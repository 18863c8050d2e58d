#!/usr/bin/env bash
# S3 scale: many idle clients, for the server's memory per connection.
# Each connects (evenly over RAMP), then only reads and pings every 15 s;
# SENDERS of them (default none: idle clients send nothing) send one SA
# first, which reaches every client.
#   s3-scale.sh tcp   10,000 TCP clients (SENDERS=1000: 10^7 deliveries
#                     first, the memory after a burst)
#   s3-scale.sh tls   2,000 TLS clients (RSA certificates)
# Knobs: CLIENTS SENDERS RAMP DURATION RUNS KEY_TYPE.
. "$(dirname "$0")/lib.sh"
transport=${1:-tcp}
if [ "$transport" = tls ]; then
	CLIENTS=${CLIENTS:-2000}
else
	CLIENTS=${CLIENTS:-10000}
fi
SENDERS=${SENDERS:-0}
bench_build
bench_run "s3-scale-$transport-$CLIENTS-senders$SENDERS" "${KEY_TYPE:-rsa}" "$transport" -- \
	--idle --clients "$CLIENTS" --senders "$SENDERS" --ramp "${RAMP:-30s}" --duration "${DURATION:-20s}" --settle 10m
