#!/usr/bin/env bash
# Every load scenario, short or full (make bench / make bench-full).
#   all.sh short   S1-S4 cut down (10 s windows, 2,000 idle clients,
#                  500-client storms), one run each: a few minutes
#   all.sh full    the scenarios as specified, RUNS (default 3) runs each
#                  with their medians: about half an hour
# JSON reports and server logs go to $BENCH_OUT (default bin/bench).
set -euo pipefail
dir=$(dirname "$0")
mode=${1:-short}
export BENCH_OUT=${BENCH_OUT:-"$(cd "$dir/../.." && pwd)/bin/bench"}
. "$dir/lib.sh"
bench_build
case $mode in
short)
	export RUNS=1
	DURATION=10s WARMUP=2s RAMP=2s "$dir/s1-fanout.sh" tcp
	S2_BASELINE=s1-fanout-tcp-200x5 DURATION=10s WARMUP=2s RAMP=2s "$dir/s2-mixed.sh"
	CLIENTS=2000 SENDERS=200 RAMP=5s DURATION=3s "$dir/s3-scale.sh" tcp
	CLIENTS=500 DURATION=2s "$dir/s4-storm.sh"
	;;
full)
	export RUNS=${RUNS:-3}
	"$dir/s1-fanout.sh" tcp
	"$dir/s1-fanout.sh" tls
	"$dir/s1-throughput.sh" tcp
	"$dir/s1-throughput.sh" tls
	S2_BASELINE=s1-fanout-tcp-200x5 "$dir/s2-mixed.sh"
	"$dir/s3-scale.sh" tcp
	"$dir/s3-scale.sh" tls
	"$dir/s4-storm.sh"
	CLIENTS=4000 "$dir/s4-storm.sh"
	;;
*)
	echo "usage: all.sh short|full" >&2
	exit 2
	;;
esac
"$dir/s5-packages.sh"
"$dir/s6-rest.sh"
