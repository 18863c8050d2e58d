#!/usr/bin/env bash
# S3 scale: many idle clients, for the server's memory per connection.
# Each connects (evenly over RAMP), then only reads and pings every 15 s;
# SENDERS of them send one SA first, which reaches every client.
#   s3-scale.sh tcp   10,000 TCP clients, 1,000 of them send their SA
#                     (10^7 deliveries; all 10,000 would be 10^8)
#   s3-scale.sh tls   2,000 TLS clients (RSA certificates), all send
# Knobs: CLIENTS SENDERS RAMP DURATION RUNS KEY_TYPE.
. "$(dirname "$0")/lib.sh"
transport=${1:-tcp}
if [ "$transport" = tls ]; then
	CLIENTS=${CLIENTS:-2000} SENDERS=${SENDERS:-$CLIENTS}
else
	CLIENTS=${CLIENTS:-10000} SENDERS=${SENDERS:-$((CLIENTS < 1000 ? CLIENTS : 1000))}
fi
bench_build
bench_run "s3-scale-$transport-$CLIENTS" "${KEY_TYPE:-rsa}" "$transport" -- \
	--idle --clients "$CLIENTS" --senders "$SENDERS" --ramp "${RAMP:-30s}" --duration "${DURATION:-20s}" --settle 10m
