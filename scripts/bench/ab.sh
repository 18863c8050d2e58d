#!/usr/bin/env bash
# A/B: one scenario against two builds of the server, their runs
# alternating (A, B, A, B, ...). On a shared machine the speed moves from
# one minute to the next: a set of runs of one build and then a set of the
# other compares two machines as much as two builds. Usage:
#   ab.sh BUILD_A BUILD_B SCENARIO [ARG...]
#   e.g. DURATION=15s ab.sh /tmp/outpost-before bin/outpost s1-fanout.sh tcp
# Knobs: PAIRS (default 3), and the scenario's own (DURATION, CLIENTS, ...).
# Prints each build's medians (outpost-load summarize; "CPU steal %" says
# which runs the machine disturbed). Reports go under $BENCH_OUT/ab-a and
# $BENCH_OUT/ab-b, one directory per run. Flags of lib.sh an older build
# does not know are left out for it (lib.sh known_flags).
set -euo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 3 ]; then
	echo "usage: ab.sh BUILD_A BUILD_B SCENARIO [ARG...]   (SCENARIO: a script of scripts/bench, e.g. s1-fanout.sh)" >&2
	exit 2
fi
declare -A build=([a]=$(realpath "$1") [b]=$(realpath "$2"))
scenario=$3
shift 3
for b in "${build[@]}"; do
	if [ ! -x "$b" ]; then
		echo "ab.sh: $b is not an executable" >&2
		exit 2
	fi
done
case $scenario in
*/* | all.sh | ab.sh | lib.sh | "")
	echo "ab.sh: $scenario is not a scenario of scripts/bench" >&2
	exit 2
	;;
esac
if [ ! -x "$dir/$scenario" ]; then
	echo "ab.sh: no scenario $scenario in scripts/bench" >&2
	exit 2
fi
export BENCH_OUT=${BENCH_OUT:-"$(cd "$dir/../.." && pwd)/bin/bench"}
. "$dir/lib.sh"
bench_build
PAIRS=${PAIRS:-3}
rm -rf "$BENCH_OUT/ab-a" "$BENCH_OUT/ab-b"
for ((i = 1; i <= PAIRS; i++)); do
	for side in a b; do
		echo "== pair $i of $PAIRS, build $side (${build[$side]})"
		RUNS=1 SERVER_BIN=${build[$side]} BENCH_OUT="$BENCH_OUT/ab-$side/$i" "$dir/$scenario" "$@"
	done
done
for side in a b; do
	echo "== build $side (${build[$side]}): medians of $PAIRS runs"
	"$BIN/outpost-load" summarize "$BENCH_OUT/ab-$side"/*/*.run1.json
done
