package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"outpost/internal/testkit"
)

// These tests run the load tool in-process against the real outpost binary
// (testkit.Start) with a handful of clients for a couple of seconds.

// startServer runs outpost with the per-source connection limit lifted and
// the TLS CoT port on, and returns it.
func startServer(t *testing.T, dir string, extra ...string) *testkit.Proc {
	t.Helper()
	args := append([]string{"--max-connections-per-source", "0", "--ssl-cot-port", "0", "--key-type", "ecdsa-p256",
		"--log-level", "info"}, extra...)
	return testkit.Start(t, dir, args...)
}

// loadRun parses args as the command line would and runs the load.
func loadRun(t *testing.T, args ...string) *report {
	t.Helper()
	o, err := parseOptions(append(args, "--quiet"), io.Discard)
	if err != nil {
		t.Fatalf("options %v: %v", args, err)
	}
	rep, err := run(o, io.Discard)
	if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return rep
}

// issue runs `outpost cert issue NAME` into dir/clients.
func issue(t *testing.T, dir, name string) (pem, key, p12 string) {
	t.Helper()
	out := filepath.Join(dir, "clients")
	cmd := exec.Command(testkit.Binary(t), "cert", "issue", name, "--data-dir", dir, "--key-type", "ecdsa-p256", "--out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cert issue: %v\n%s", err, b)
	}
	base := filepath.Join(out, name)
	return base + ".pem", base + ".key", base + ".p12"
}

// p12Password reads the generated PKCS#12 password from secrets.yaml.
func p12Password(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "secrets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "password:"); ok {
			return strings.Trim(strings.TrimSpace(v), `'"`)
		}
	}
	t.Fatal("no password in secrets.yaml")
	return ""
}

// checkAllDelivered asserts the counts of an all-to-all run on a machine
// that is not overloaded: everything expected arrived, once.
func checkAllDelivered(t *testing.T, rep *report, clients int, rate, seconds float64) {
	t.Helper()
	c, l := rep.Clients, rep.Load
	if c.Connected != clients || c.Failed != 0 || c.Disconnected != 0 || c.NegotiationKO != 0 {
		t.Fatalf("clients: %+v", c)
	}
	if c.ReplayComplete != clients || c.ReplaySec < 0 {
		t.Errorf("replay: %d of %d complete after %v s", c.ReplayComplete, clients, c.ReplaySec)
	}
	if l == nil {
		t.Fatal("no load section")
	}
	// Every sender sends rate SA/s in the window (±1 per sender for the
	// random phase); each goes to every other client.
	want := float64(clients) * rate * seconds
	if s := float64(l.Sent); s < want-float64(clients)-1 || s > want+float64(clients)+1 {
		t.Errorf("sent %d measured SAs, want about %.0f", l.Sent, want)
	}
	if l.Expected != l.Sent*int64(clients-1) {
		t.Errorf("expected %d deliveries for %d SAs to %d others", l.Expected, l.Sent, clients-1)
	}
	if l.Received != l.Expected || l.Missing != 0 || l.Coalesced != 0 || l.Duplicates != 0 || l.Percent != 100 {
		t.Errorf("deliveries: %d of %d (%.2f %%), %d missing, %d coalesced, %d duplicates",
			l.Received, l.Expected, l.Percent, l.Missing, l.Coalesced, l.Duplicates)
	}
	lat := l.Normal.Latency
	if lat.Count != uint64(l.Received) || lat.P50 <= 0 || lat.P50 > lat.P99 || lat.P99 > lat.Max {
		t.Errorf("latency: %+v for %d deliveries", lat, l.Received)
	}
	if l.PerSecond <= 0 || l.Arrived <= 0 {
		t.Errorf("throughput: %d arrived, %.0f per second", l.Arrived, l.PerSecond)
	}
}

func TestFanOutTCPWithProtobufShare(t *testing.T) {
	t.Parallel()
	srv := startServer(t, t.TempDir())
	jsonPath := filepath.Join(t.TempDir(), "report.json")
	rep := loadRun(t, "--addr", srv.Addr(t, "cot-tcp"), "--clients", "6", "--rate", "5", "--proto", "0.5",
		"--duration", "2s", "--warmup", "500ms", "--ramp", "300ms", "--pid", strconv.Itoa(srv.PID()), "--json", jsonPath)
	checkAllDelivered(t, rep, 6, 5, 2)
	if rep.Clients.Protobuf != 3 {
		t.Errorf("%d protobuf clients, want 3", rep.Clients.Protobuf)
	}
	s := rep.Server
	if s == nil || s.RSSIdle <= 0 || s.RSSPeak < s.RSSConnected || s.CPUWindow < 0 || s.Error != "" {
		t.Fatalf("server: %+v", s)
	}
	if rep.Tool.Messages < rep.Load.Received || rep.Tool.Bytes <= 0 {
		t.Errorf("tool: %+v", rep.Tool)
	}
	// The JSON report holds the same figures.
	if err := rep.writeJSON(jsonPath); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var back report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, b)
	}
	if back.Load == nil || back.Load.Received != rep.Load.Received || back.Server.PID != srv.PID() ||
		back.Config["clients"] != float64(6) || back.Clients.Protobuf != 3 {
		t.Errorf("JSON report differs: %s", b)
	}
	var raw map[string]map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"deliveries_per_second", "delivered_percent", "expected", "received"} {
		if _, ok := raw["load"][k]; !ok {
			t.Errorf("JSON load section has no %q", k)
		}
	}
	// The machine's steal over the window (Linux has /proc/stat).
	if runtime.GOOS == "linux" {
		if st, ok := raw["machine"]["steal_percent"].(float64); !ok || st < 0 || st > 100 {
			t.Errorf("machine steal_percent %v in %s", raw["machine"]["steal_percent"], b)
		}
	}
}

func TestTLSWithPEM(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Two certificates: clients alternate between them.
	c0, k0, _ := issue(t, dir, "load0")
	c1, k1, _ := issue(t, dir, "load1")
	srv := startServer(t, dir)
	rep := loadRun(t, "--addr", srv.Addr(t, "cot-tls"), "--tls", "--cert", c0+","+c1, "--key", k0+","+k1,
		"--ca", filepath.Join(dir, "certs", "ca.pem"), "--clients", "4", "--rate", "4", "--duration", "2s", "--warmup", "500ms")
	checkAllDelivered(t, rep, 4, 4, 2)
	if rep.Config["credentials"] != 2 {
		t.Errorf("credentials: %v", rep.Config["credentials"])
	}
}

func TestTLSWithPKCS12AndStorm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, _, p12 := issue(t, dir, "load0")
	srv := startServer(t, dir, "--max-pending-handshakes-per-source", "1000")
	// No --ca: the server is verified against the CA inside the .p12. All
	// clients connect at once, send one SA and read.
	rep := loadRun(t, "--addr", srv.Addr(t, "cot-tls"), "--tls", "--p12", p12, "--p12-password", p12Password(t, dir),
		"--clients", "12", "--idle", "--ramp", "0", "--duration", "500ms", "--proto", "0.25")
	c := rep.Clients
	if c.Connected != 12 || c.Failed != 0 || c.Disconnected != 0 || c.Protobuf != 3 || c.NegotiationKO != 0 {
		t.Fatalf("clients: %+v", c)
	}
	if c.ReplayComplete != 12 || c.ReplaySec <= 0 || c.ReplayP99Sec > c.ReplaySec {
		t.Errorf("replay: %+v", c)
	}
	if rep.Idle == nil || rep.Load != nil || rep.Idle.Senders != 12 {
		t.Errorf("idle run sections: idle %+v, load %+v", rep.Idle, rep.Load)
	}
	// Each client received the SA of each other client: 12 x 11.
	if got := rep.Tool.Messages - rep.Tool.Other - rep.Tool.Pongs - rep.Tool.Departures; got < 12*11 {
		t.Errorf("%d SAs received, want at least %d (tool %+v)", got, 12*11, rep.Tool)
	}

	// A wrong password fails before connecting.
	o, err := parseOptions([]string{"--addr", srv.Addr(t, "cot-tls"), "--tls", "--p12", p12, "--p12-password", "wrong", "--quiet"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(o, io.Discard); err == nil || !strings.Contains(err.Error(), "--p12") {
		t.Errorf("wrong password: %v", err)
	}
}

func TestSlowConsumersAndSpreadSources(t *testing.T) {
	t.Parallel()
	// Two connections per source address at most: four clients fit only
	// when spread over two loopback addresses.
	srv := testkit.Start(t, t.TempDir(), "--max-connections-per-source", "2", "--log-level", "info")
	rep := loadRun(t, "--addr", srv.Addr(t, "cot-tcp"), "--local-addrs", "127.0.0.1-127.0.0.2", "--clients", "4",
		"--rate", "5", "--duration", "1500ms", "--warmup", "300ms", "--slow", "0.25", "--slow-rate", "0")
	c, l := rep.Clients, rep.Load
	if c.Connected != 4 || c.Failed != 0 || c.Disconnected != 0 || c.Slow != 1 {
		t.Fatalf("clients: %+v", c)
	}
	// The three that read get everything; the one that stopped reading
	// counts nothing once the load starts.
	n, s := l.Normal, l.SlowConsumers
	if n.Clients != 3 || n.Received != n.Expected || n.Expected == 0 || n.Percent != 100 {
		t.Errorf("normal clients: %+v", n)
	}
	if s.Clients != 1 || s.Received != 0 || s.Missing != s.Expected || s.Expected == 0 {
		t.Errorf("slow client: %+v", s)
	}
	if l.Expected != n.Expected+s.Expected || l.Expected != l.Sent*3 {
		t.Errorf("expected %d = %d + %d for %d SAs", l.Expected, n.Expected, s.Expected, l.Sent)
	}

	// From one address, a fresh server (the first one may still count the
	// closed connections) refuses the third and fourth client.
	srv = testkit.Start(t, t.TempDir(), "--max-connections-per-source", "2", "--log-level", "info")
	rep = loadRun(t, "--addr", srv.Addr(t, "cot-tcp"), "--clients", "4", "--idle", "--duration", "200ms",
		"--connect-timeout", "1s", "--settle", "1s")
	// It accepts them and closes them at once: they retry until
	// --connect-timeout, then count as failed.
	if c := rep.Clients; c.Connected != 2 || c.Failed != 2 || c.FailedBy["closed before any data"] != 2 || c.DialErrors < 2 || c.ReplayComplete != 2 {
		t.Errorf("one source, limit 2: %+v", rep.Clients)
	}
}
