#!/usr/bin/env bash
# S2 mixed: S1's load (200 x 5 SA/s over TCP) with half the clients on
# protobuf and 10 % slow consumers reading 1 KiB/s once the load starts.
# Compares the p99 latency of the clients that read at full speed with an
# S1 baseline: the reports named by S2_BASELINE (e.g. s1-fanout-tcp-200x5,
# from an s1-fanout.sh run with the same knobs), or a baseline run here.
# Knobs: CLIENTS RATE DURATION WARMUP RAMP RUNS SLOW SLOW_RATE PROTO S2_BASELINE.
. "$(dirname "$0")/lib.sh"
CLIENTS=${CLIENTS:-200} RATE=${RATE:-5} DURATION=${DURATION:-30s}
common=(--clients "$CLIENTS" --rate "$RATE" --duration "$DURATION" --warmup "${WARMUP:-5s}" --ramp "${RAMP:-5s}")
bench_build
baseline=${S2_BASELINE:-}
if [ -z "$baseline" ]; then
	baseline="s2-baseline-${CLIENTS}x$RATE"
	bench_run "$baseline" rsa tcp -- "${common[@]}"
fi
mixed="s2-mixed-${CLIENTS}x$RATE"
bench_run "$mixed" rsa tcp -- "${common[@]}" \
	--proto "${PROTO:-0.5}" --slow "${SLOW:-0.1}" --slow-rate "${SLOW_RATE:-1024}"
echo "== S2: p99 latency of the full-speed clients: $(median_of "$mixed" 'p99 ms') ms mixed," \
	"$(median_of "$baseline" 'p99 ms') ms in the S1 baseline ($baseline); slow consumers received" \
	"$(median_of "$mixed" 'slow: delivered %') % of theirs (medians of $RUNS)"
