#!/usr/bin/env bash
# S2 mixed: S1's load (200 x 5 SA/s over TCP) with half the clients on
# protobuf and 10 % slow consumers reading 1 KiB/s once the load starts.
# Runs S1 first as the baseline, then S2, and compares the p99 latency of
# the clients that read at full speed.
# Knobs: CLIENTS RATE DURATION WARMUP RAMP RUNS SLOW SLOW_RATE PROTO.
. "$(dirname "$0")/lib.sh"
CLIENTS=${CLIENTS:-200} RATE=${RATE:-5} DURATION=${DURATION:-30s}
common=(--clients "$CLIENTS" --rate "$RATE" --duration "$DURATION" --warmup "${WARMUP:-5s}" --ramp "${RAMP:-5s}")
bench_build
bench_run "s2-baseline-${CLIENTS}x$RATE" rsa tcp -- "${common[@]}"
bench_run "s2-mixed-${CLIENTS}x$RATE" rsa tcp -- "${common[@]}" \
	--proto "${PROTO:-0.5}" --slow "${SLOW:-0.1}" --slow-rate "${SLOW_RATE:-1024}"
echo "== S2: p99 of the full-speed clients: $(median_of "s2-mixed-${CLIENTS}x$RATE" 'p99 ms') ms mixed," \
	"$(median_of "s2-baseline-${CLIENTS}x$RATE" 'p99 ms') ms in the S1 baseline (medians of $RUNS)"
