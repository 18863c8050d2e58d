#!/usr/bin/env bash
# S3 scale: many idle clients, for the server's memory per connection.
# Each connects (over RAMP), sends one SA, then only reads and pings.
#   s3-scale.sh tcp   10,000 TCP clients
#   s3-scale.sh tls   2,000 TLS clients (RSA certificates)
# Knobs: CLIENTS SENDERS RAMP DURATION RUNS KEY_TYPE.
# SENDERS (default: all) limits the clients that send their SA: every SA
# reaches every client, so 10,000 senders mean 10^8 deliveries.
. "$(dirname "$0")/lib.sh"
transport=${1:-tcp}
if [ "$transport" = tls ]; then def=2000; else def=10000; fi
CLIENTS=${CLIENTS:-$def}
extra=()
if [ -n "${SENDERS:-}" ]; then extra=(--senders "$SENDERS"); fi
bench_build
bench_run "s3-scale-$transport-$CLIENTS" "${KEY_TYPE:-rsa}" "$transport" -- \
	--idle --clients "$CLIENTS" --ramp "${RAMP:-30s}" --duration "${DURATION:-20s}" --settle 10m "${extra[@]}"
