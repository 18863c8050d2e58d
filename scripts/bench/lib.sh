# Shared by the scenario scripts of scripts/bench (sourced, not run).
#
# Each run builds nothing twice, starts a fresh server on free loopback ports
# with a temporary data directory, runs bin/outpost-load against it with
# --pid (server CPU and memory), prints the report, keeps the JSON report
# under $BENCH_OUT (default bin/bench) and stops the server. RUNS=3 repeats every run and prints
# the medians (outpost-load summarize).
#
# Every server is started with the limits that would otherwise refuse the
# load tool's clients raised (all of them come from 127.0.0.1):
#   --max-connections-per-source 0        (default 64 per source address)
#   --max-pending-handshakes-per-source 10000, --max-pending-handshakes 10000
#                                         (defaults 16 and 1024: storms)
#   --max-connections 12000               (default 4096 per CoT listener)
# The per-client pacing (--client-events-per-second 100,
# --client-bytes-per-second 1 MiB) stays at its defaults: no scenario sends
# faster than 5 SA/s per client. Instead of lifting the per-source limit, the
# load tool can spread its clients over loopback addresses
# (--local-addrs 127.0.0.1-127.0.0.200).
#
# BENCH_GROUPS=N (TLS runs) makes N groups before the server starts and puts
# the certificates' users in them (the system user load<i> is whom
# certificate load<i> identifies): every user in every group, both ways, so
# every client still sees every other (the cost of groups on the relay);
# with BENCH_GROUP_SPLIT=1, load<i> joins group g<i mod N> only, so the
# clients of one group see only each other (docs/access.md "Groups").
# Unset: no user, no group, everyone in __ANON__.

set -euo pipefail

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# BENCH_BIN, with BENCH_BUILT=1, takes outpost and outpost-load from another
# directory than bin/ (the tests of these scripts do).
BIN=${BENCH_BIN:-"$BENCH_ROOT/bin"}
# SERVER_BIN runs another build of the server (a "before" figure); the
# certificates and the load tool still come from $BIN.
SERVER_BIN=${SERVER_BIN:-"$BIN/outpost"}
RUNS=${RUNS:-1}
BENCH_OUT=${BENCH_OUT:-"$BENCH_ROOT/bin/bench"}
BENCH_TMP=$(mktemp -d -t outpost-bench.XXXXXX)
SERVER_PID=""

SERVER_FLAGS=(--bind 127.0.0.1 --public-host 127.0.0.1 --log-format json --log-level info
	--rest-port -1 --http-port -1 --https-port -1 --enroll-port -1 --cot-port 0 --ssl-cot-port 0
	--max-connections-per-source 0 --max-pending-handshakes-per-source 10000
	--max-pending-handshakes 10000 --max-connections 12000)

bench_cleanup() {
	server_stop
	rm -rf "$BENCH_TMP"
}
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# bench_build builds bin/outpost and bin/outpost-load (once per shell:
# BENCH_BUILT=1 skips it).
bench_build() {
	if [ "${BENCH_BUILT:-}" = 1 ]; then
		return
	fi
	echo "== building bin/outpost and bin/outpost-load"
	(cd "$BENCH_ROOT" && make -s build && CGO_ENABLED=0 go build -trimpath -o bin/outpost-load ./cmd/outpost-load)
	export BENCH_BUILT=1
}

# bench_pki KEYTYPE CLIENTS: a CA, server certificate and one client
# certificate per 64 clients (the server binds at most 64 uids to one
# certificate), issued once per key type and count with `outpost cert
# issue`. Sets PKI_DIR, CERTS, KEYS (comma separated lists) and CA.
bench_pki() {
	local keytype=$1 clients=$2 n i
	n=$(((clients + 63) / 64))
	PKI_DIR="$BENCH_TMP/pki-$keytype-$n"
	if [ ! -d "$PKI_DIR/clients" ]; then
		echo "== issuing $n $keytype client certificates"
		for ((i = 0; i < n; i++)); do
			"$BIN/outpost" cert issue "load$i" --data-dir "$PKI_DIR" --key-type "$keytype" \
				--out "$PKI_DIR/clients" --log-level warn >/dev/null
		done
	fi
	CERTS="" KEYS=""
	for ((i = 0; i < n; i++)); do
		CERTS+="${CERTS:+,}$PKI_DIR/clients/load$i.pem"
		KEYS+="${KEYS:+,}$PKI_DIR/clients/load$i.key"
	done
	CA="$PKI_DIR/certs/ca.pem"
}

# known_flags sets KNOWN_FLAGS: SERVER_FLAGS less the ones SERVER_BIN does
# not know. An older build run for a "before" figure may predate a limit
# (the per-source ones); it then runs as that build always did, and the
# flags left out are named once. Every flag of SERVER_FLAGS takes a value.
known_flags() {
	if [ "${KNOWN_FLAGS_OF:-}" = "$SERVER_BIN" ]; then
		return
	fi
	local help i name dropped=""
	help=$("$SERVER_BIN" run --help 2>&1 || true)
	KNOWN_FLAGS=()
	if ! grep -q -- "-data-dir" <<<"$help"; then
		# Not a flag listing: pass every flag and let the server say.
		KNOWN_FLAGS=("${SERVER_FLAGS[@]}")
		KNOWN_FLAGS_OF=$SERVER_BIN
		return
	fi
	for ((i = 0; i < ${#SERVER_FLAGS[@]}; i += 2)); do
		name=${SERVER_FLAGS[i]#--}
		if grep -qE -- "^  -$name( |\$)" <<<"$help"; then
			KNOWN_FLAGS+=("${SERVER_FLAGS[i]}" "${SERVER_FLAGS[i + 1]}")
		else
			dropped+=" ${SERVER_FLAGS[i]}"
		fi
	done
	if [ -n "$dropped" ]; then
		echo "== $SERVER_BIN does not know$dropped: left out"
	fi
	KNOWN_FLAGS_OF=$SERVER_BIN
}

# server_start KEYTYPE [FLAG...]: a fresh server (the PKI of the last
# bench_pki call, if any) on free ports. Sets SERVER_PID, SERVER_DIR,
# COT_TCP and COT_TLS.
server_start() {
	local keytype=$1 i
	shift
	SERVER_DIR=$(mktemp -d "$BENCH_TMP/server.XXXXXX")
	if [ -n "${PKI_DIR:-}" ] && [ -d "$PKI_DIR/certs" ]; then
		cp -a "$PKI_DIR/certs" "$PKI_DIR/secrets.yaml" "$SERVER_DIR/"
		if [ -n "${BENCH_GROUPS:-}" ]; then
			local all="" g
			for ((g = 0; g < BENCH_GROUPS; g++)); do
				all+="${all:+,}g$g"
			done
			for ((i = 0; i < $(find "$PKI_DIR/clients" -name 'load*.pem' | wc -l); i++)); do
				g=$all
				if [ "${BENCH_GROUP_SPLIT:-}" = 1 ]; then
					g="g$((i % BENCH_GROUPS))"
				fi
				"$SERVER_BIN" user add "load$i" --group "$g" --data-dir "$SERVER_DIR" \
					--log-level warn </dev/null >/dev/null
			done
		fi
	fi
	known_flags
	"$SERVER_BIN" run --data-dir "$SERVER_DIR" --key-type "$keytype" "${KNOWN_FLAGS[@]}" "$@" \
		2>"$SERVER_DIR/server.log" &
	SERVER_PID=$!
	for ((i = 0; i < 600; i++)); do
		if grep -q '"msg":"Outpost is ready"' "$SERVER_DIR/server.log" 2>/dev/null; then
			COT_TCP=$(listener_addr cot-tcp)
			COT_TLS=$(listener_addr cot-tls)
			return
		fi
		if ! kill -0 "$SERVER_PID" 2>/dev/null; then
			echo "outpost exited before it was ready:" >&2
			cat "$SERVER_DIR/server.log" >&2
			SERVER_PID=""
			return 1
		fi
		sleep 0.1
	done
	echo "outpost not ready within 60 s" >&2
	return 1
}

listener_addr() {
	grep -o "\"listener\":\"$1\",\"addr\":\"[^\"]*\"" "$SERVER_DIR/server.log" | head -1 | sed 's/.*"addr":"//; s/"$//'
}

# server_stop [LOG]: stops the server, prints how many warnings and errors
# it logged, by message, and keeps its log as LOG.
server_stop() {
	if [ -n "$SERVER_PID" ]; then
		kill -TERM "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=""
		if grep -q '"level":"\(WARN\|ERROR\)"' "$SERVER_DIR/server.log"; then
			echo "server warnings and errors (count, message):"
			grep '"level":"\(WARN\|ERROR\)"' "$SERVER_DIR/server.log" | grep -o '"msg":"[^"]*"' | sort | uniq -c | sort -rn | head -5
		fi
		# Sessions the server ended by its own policies (the load tool counts
		# every disconnect itself; this says why; the log keeps at most 50
		# such lines a second).
		grep '"msg":"client session closed"' "$SERVER_DIR/server.log" | grep -o '"reason":"[^"]*"' |
			grep -E 'slow consumer|idle timeout|too large|revoked' | sort | uniq -c | sed 's/^/server closed sessions: /' || true
		if [ -n "${1:-}" ]; then
			cp "$SERVER_DIR/server.log" "$1"
		fi
	fi
}

# bench_run NAME KEYTYPE TRANSPORT -- LOAD_FLAG... : RUNS times, a fresh
# server and one load run against it; TRANSPORT tcp or tls (TLS clients use
# the certificates of bench_pki, issued first). Then the medians.
bench_run() {
	local name=$1 keytype=$2 transport=$3 run addr
	shift 4
	local load_args=("$@") clients=100 a prev=""
	for a in "${load_args[@]}"; do
		if [ "$prev" = --clients ]; then clients=$a; fi
		prev=$a
	done
	mkdir -p "$BENCH_OUT"
	PKI_DIR=""
	if [ "$transport" = tls ]; then
		bench_pki "$keytype" "$clients"
	fi
	rm -f "$BENCH_OUT/$name".run*.json
	for ((run = 1; run <= RUNS; run++)); do
		echo "== $name: run $run of $RUNS ($(cut -d' ' -f1-3 /proc/loadavg) load average)"
		server_start "$keytype"
		if [ "$transport" = tls ]; then
			addr=(--addr "$COT_TLS" --tls --cert "$CERTS" --key "$KEYS" --ca "$CA")
		else
			addr=(--addr "$COT_TCP")
		fi
		"$BIN/outpost-load" "${addr[@]}" --pid "$SERVER_PID" --json "$BENCH_OUT/$name.run$run.json" "${load_args[@]}" ||
			echo "== $name: run $run failed" >&2
		server_stop "$BENCH_OUT/$name.run$run.server.log"
	done
	if [ "$RUNS" -gt 1 ]; then
		echo "== $name: medians of $RUNS runs"
		"$BIN/outpost-load" summarize "$BENCH_OUT/$name".run*.json
	fi
}

# median_of NAME FIELD: prints a figure's median over NAME's JSON reports.
median_of() {
	"$BIN/outpost-load" summarize "$BENCH_OUT/$1".run*.json | awk -v f="$2" -F'  +' '$1 ~ f { print $2; exit }'
}
