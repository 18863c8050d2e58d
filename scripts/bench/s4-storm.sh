#!/usr/bin/env bash
# S4 storm: TLS clients all connecting at once (after an outage), each
# sending its SA; reports how long until every client holds every other
# client's SA (the latest-SA replay, protocol.md §5) and the server's CPU
# for it. The server's --max-pending-handshakes(-per-source) are lifted
# (lib.sh), so the handshakes themselves are the limit.
#   s4-storm.sh [rsa|ecdsa|tcp]   (default: rsa and ecdsa, one after the
#                                 other; tcp: the same storm on 8087)
# Knobs: CLIENTS (1,000) DURATION RUNS.
. "$(dirname "$0")/lib.sh"
CLIENTS=${CLIENTS:-1000}
bench_build
for kt in ${1:-rsa ecdsa}; do
	case $kt in
	rsa) key_type=rsa transport=tls ;;
	ecdsa) key_type=ecdsa-p256 transport=tls ;;
	tcp) key_type=rsa transport=tcp ;;
	*) echo "usage: s4-storm.sh [rsa|ecdsa|tcp]" >&2; exit 2 ;;
	esac
	bench_run "s4-storm-$kt-$CLIENTS" "$key_type" "$transport" -- \
		--idle --clients "$CLIENTS" --ramp 0 --duration "${DURATION:-5s}" --settle 10m --connect-timeout 5m
done
