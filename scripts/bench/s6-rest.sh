#!/usr/bin/env bash
# S6 REST: CLIENTS operators (default 50) calling the management API
# (19023) at once, each sending its next request when the last is
# answered, for DURATION: geo objects around a point (SEED of them
# created first), emergencies, data packages and system users, with the
# API token the server wrote at first start. Reports requests per second,
# p50/p99 latency, the server's CPU per request and RSS; RUNS runs.
# Knobs: CLIENTS SEED DURATION RUNS.
. "$(dirname "$0")/lib.sh"
CLIENTS=${CLIENTS:-50} SEED=${SEED:-1000} DURATION=${DURATION:-20s}
bench_build
mkdir -p "$BENCH_OUT"
for ((run = 1; run <= RUNS; run++)); do
	echo "== s6-rest-$CLIENTS: run $run of $RUNS ($(cut -d' ' -f1-3 /proc/loadavg) load average)"
	server_start rsa --rest-port 0
	"$BIN/outpost-load" rest --url "http://$(listener_addr rest)" --token-file "$SERVER_DIR/admin.token" \
		--clients "$CLIENTS" --seed "$SEED" --duration "$DURATION" --pid "$SERVER_PID" \
		--json "$BENCH_OUT/s6-rest-$CLIENTS.run$run.json" || echo "== s6-rest: run $run failed" >&2
	server_stop "$BENCH_OUT/s6-rest-$CLIENTS.run$run.server.log"
done
