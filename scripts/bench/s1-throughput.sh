#!/usr/bin/env bash
# S1 at the throughput target: 500 clients x 4 SA/s all-to-all, 30 s
# measured: 998,000 deliveries per second expected (the 1,000,000
# deliveries/s goal). Usage: s1-throughput.sh [tcp|tls]
# Knobs: as s1-fanout.sh.
CLIENTS=${CLIENTS:-500} RATE=${RATE:-4} exec "$(dirname "$0")/s1-fanout.sh" "$@"
