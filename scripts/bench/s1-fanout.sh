#!/usr/bin/env bash
# S1 fan-out: 200 clients, every one sending 5 SA/s to all the others
# (all-to-all, as ATAK does), 30 s measured: 199,000 deliveries per second
# expected. Usage: s1-fanout.sh [tcp|tls]   (tls: port 8089, RSA certificates)
# Knobs: CLIENTS RATE DURATION WARMUP RAMP RUNS KEY_TYPE.
. "$(dirname "$0")/lib.sh"
transport=${1:-tcp}
CLIENTS=${CLIENTS:-200} RATE=${RATE:-5} DURATION=${DURATION:-30s}
bench_build
bench_run "s1-fanout-$transport-${CLIENTS}x$RATE" "${KEY_TYPE:-rsa}" "$transport" -- \
	--clients "$CLIENTS" --rate "$RATE" --duration "$DURATION" --warmup "${WARMUP:-5s}" --ramp "${RAMP:-5s}"
