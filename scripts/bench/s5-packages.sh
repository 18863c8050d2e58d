#!/usr/bin/env bash
# S5 packages: 1 GiB up and down through enterprise sync on the client API,
# over HTTP (8080) and mutual TLS (8443), against the real binary: the
# upload and download rates and the server's peak RSS above idle for each
# (appliance/marti TestLargeFileStreaming, as `make large-sync`).
# Knobs: RUNS.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-1}
for ((run = 1; run <= RUNS; run++)); do
	echo "== s5-packages: run $run of $RUNS ($(cut -d' ' -f1-3 /proc/loadavg) load average)"
	CGO_ENABLED=0 \
		go test -tags large -count=1 -run 'TestLargeFileStreaming' -timeout 20m -v ./appliance/marti | grep -E 'MiB|PASS|FAIL|ok'
done
