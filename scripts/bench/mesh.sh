#!/usr/bin/env bash
# Mesh bridge: DEVICES mesh devices (default 100), each a UDP socket on its
# own loopback address (127.0.1.1, 127.0.1.2, ...), send RATE SA/s (default
# 1) to the SA multicast group 239.2.3.1:6969 as MESH_FORMAT datagrams (xml,
# or v1: TAK protocol v1); the server runs with --mesh MESH_FORMAT on the
# default interface and bridges them to CLIENTS TCP receivers (default
# 200), DURATION measured (default 60s) after WARMUP (default 5s). Reports
# datagrams sent, deliveries expected and received, lost, duplicated,
# latency, the server's CPU per bridged event and per delivery, its peak
# RSS; RUNS runs, then the medians. A run that lost or duplicated anything
# fails, and so does the script (exit 1).
#
# Needs root: everything runs in a private network namespace (unshare -n)
# with multicast on loopback, so no datagram leaves the machine. Build
# first and pass the environment through sudo if go is not on root's PATH:
#   make build && go build -o bin/outpost-load ./cmd/outpost-load
#   sudo BENCH_BUILT=1 scripts/bench/mesh.sh
# Knobs: DEVICES CLIENTS RATE DURATION WARMUP MESH_FORMAT RUNS.
set -euo pipefail
DEVICES=${DEVICES:-100} CLIENTS=${CLIENTS:-200} RATE=${RATE:-1} DURATION=${DURATION:-60s}
WARMUP=${WARMUP:-5s} MESH_FORMAT=${MESH_FORMAT:-xml}
case $MESH_FORMAT in
xml | v1) ;;
*)
	echo "mesh.sh: MESH_FORMAT=$MESH_FORMAT is neither xml nor v1" >&2
	exit 2
	;;
esac

if [ -z "${MESH_BENCH_NETNS:-}" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "mesh.sh: needs root (it runs the server and the devices in a network namespace of their own: unshare -n)" >&2
		exit 2
	fi
	for tool in unshare ip; do
		if ! command -v "$tool" >/dev/null; then
			echo "mesh.sh: $tool not found (util-linux, iproute2)" >&2
			exit 2
		fi
	done
	# Build here: the namespace has no network to fetch modules with.
	. "$(dirname "$0")/lib.sh"
	bench_build
	status=0
	MESH_BENCH_NETNS=1 BENCH_BUILT=1 unshare -n "$0" "$@" || status=$?
	exit "$status"
fi

# In the namespace: loopback up, multicast on it, and the multicast route
# through it (the server joins the groups on the default interface).
ip link set lo up
ip link set lo multicast on
ip route add 224.0.0.0/4 dev lo

. "$(dirname "$0")/lib.sh"
name="mesh-$MESH_FORMAT-${DEVICES}x$RATE-$CLIENTS"
mkdir -p "$BENCH_OUT"
rm -f "$BENCH_OUT/$name".run*.json
failed=0
for ((run = 1; run <= RUNS; run++)); do
	echo "== $name: run $run of $RUNS ($(cut -d' ' -f1-3 /proc/loadavg) load average)"
	server_start rsa --mesh "$MESH_FORMAT"
	if ! "$BIN/outpost-load" mesh --addr "$COT_TCP" --clients "$CLIENTS" --devices "$DEVICES" --rate "$RATE" \
		--format "$MESH_FORMAT" --warmup "$WARMUP" --duration "$DURATION" --pid "$SERVER_PID" \
		--json "$BENCH_OUT/$name.run$run.json"; then
		echo "== $name: run $run failed" >&2
		failed=1
	fi
	server_stop "$BENCH_OUT/$name.run$run.server.log"
done
if [ "$RUNS" -gt 1 ]; then
	echo "== $name: medians of $RUNS runs"
	"$BIN/outpost-load" summarize "$BENCH_OUT/$name".run*.json
fi
exit "$failed"
