package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/appliance/store"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

func TestBinaryEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dataDir := t.TempDir()
	p := testkit.Start(t, dataDir)
	for _, name := range []string{netx.ListenerREST, netx.ListenerHTTP, netx.ListenerCoTTCP} {
		if p.Addrs[name] == "" {
			t.Fatalf("no address logged for %s: %v", name, p.Addrs)
		}
	}

	// Management and client API answer.
	body := httpGet(t, "http://"+p.Addrs[netx.ListenerREST]+"/Alive")
	if body != "API is running" {
		t.Fatalf("/Alive = %q", body)
	}
	var vc struct {
		Version, Type string
		Data          map[string]string
	}
	if err := json.Unmarshal([]byte(httpGet(t, "http://"+p.Addrs[netx.ListenerHTTP]+"/Marti/api/version/config")), &vc); err != nil {
		t.Fatal(err)
	}
	if vc.Type != "ServerConfig" || vc.Data["api"] != "3" || vc.Data["hostname"] != "127.0.0.1" {
		t.Fatalf("version/config %+v", vc)
	}

	// Three XML clients and one protobuf client exchange SAs.
	cot8087 := p.Addrs[netx.ListenerCoTTCP]
	dial := func() *takclient.Client {
		c, err := takclient.Dial(cot8087, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	pc := dial()
	if err := pc.Negotiate(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	clients := []*takclient.Client{pc, dial(), dial(), dial()}
	uids := []string{"E2E-PROTO", "E2E-X1", "E2E-X2", "E2E-X3"}
	for i, c := range clients {
		if err := c.Send(takclient.SA(uids[i], "CS-"+uids[i], 10+float64(i), 20)); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range clients {
		seen := map[string]bool{}
		for len(seen) < 3 {
			ev, err := c.WaitFor(func(e *cot.Event) bool { return strings.HasPrefix(e.Type, "a-") }, 10*time.Second)
			if err != nil {
				t.Fatalf("%s: %v (saw %v)", uids[i], err, seen)
			}
			if ev.UID == uids[i] {
				t.Fatalf("%s received its own SA", uids[i])
			}
			seen[ev.UID] = true
		}
	}
	// The client list shows them.
	var eps struct {
		Data []map[string]string
	}
	if err := json.Unmarshal([]byte(httpGet(t, "http://"+p.Addrs[netx.ListenerHTTP]+"/Marti/api/clientEndPoints")), &eps); err != nil {
		t.Fatal(err)
	}
	if len(eps.Data) != 4 {
		t.Fatalf("clientEndPoints lists %d clients: %v", len(eps.Data), eps.Data)
	}

	// A ping gets a pong; a departing client produces t-x-d-d at the others.
	clients[1].Ping(uids[1])
	if _, err := clients[1].WaitFor(takclient.Type("t-x-c-t-r"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	clients[3].Close()
	dep, err := clients[2].WaitFor(takclient.Type("t-x-d-d"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(dep.Detail.Links) != 1 || dep.Detail.Links[0].UID != "E2E-X3" {
		t.Fatalf("departure %+v", dep.Detail.Links)
	}

	// A backup while the server runs.
	backup := filepath.Join(t.TempDir(), "backup.db")
	out, err := exec.Command(testkit.Binary(t), "backup", "--data-dir", dataDir, backup).CombinedOutput()
	if err != nil {
		t.Fatalf("backup: %v: %s", err, out)
	}

	exitErr, took := p.Stop(t, 15*time.Second)
	if exitErr != nil {
		t.Fatalf("outpost exited with %v after SIGTERM", exitErr)
	}
	t.Logf("shutdown took %v", took)
	if !p.Logged("shut down") {
		t.Fatal("no shutdown log line")
	}

	// History was flushed into the one SQLite file before exit.
	st, err := store.Open(context.Background(), filepath.Join(dataDir, "outpost.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, uid := range uids {
		ev, err := st.Events().LatestEvent(context.Background(), uid, store.AllGroups)
		if err != nil {
			t.Fatalf("history has no event for %s: %v", uid, err)
		}
		if ev.Callsign != "CS-"+uid {
			t.Fatalf("stored callsign %q", ev.Callsign)
		}
	}
	// Generated secrets exist, private, and never appear in the logs.
	sec, err := os.ReadFile(filepath.Join(dataDir, "secrets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(dataDir, "secrets.yaml"))
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("secrets.yaml mode %v", fi.Mode().Perm())
	}
	allLogs := []byte(p.LogText())
	for _, line := range strings.Split(string(sec), "\n") {
		if _, v, ok := strings.Cut(line, ": "); ok {
			v = strings.Trim(v, "'")
			if len(v) > 8 && bytes.Contains(allLogs, []byte(v)) {
				t.Fatal("a generated secret appears in the logs")
			}
		}
	}
	if fi, err := os.Stat(backup); err != nil || fi.Size() == 0 {
		t.Fatalf("backup file: %v", err)
	}
}

func TestBinaryCommandLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testkit.Binary(t)
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "outpost ") || !strings.Contains(string(out), "commit") {
		t.Fatalf("version: %v %q", err, out)
	}
	cases := []struct {
		args []string
		key  string
	}{
		{[]string{"--cot-port", "99999"}, "cotPort"},
		{[]string{"--log-format", "yaml"}, "logFormat"},
		{[]string{"--bind", "nowhere"}, "bind"},
		{[]string{"--history-retention", "forever"}, "historyRetention"},
	}
	for _, tc := range cases {
		cmd := exec.Command(bin, tc.args...)
		cmd.Env = append(os.Environ(), "OUTPOST_DATA_DIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 {
			t.Fatalf("%v: exit %v, want 2", tc.args, err)
		}
		if !strings.Contains(string(out), tc.key) {
			t.Fatalf("%v: message %q does not name %s", tc.args, out, tc.key)
		}
	}
	// An environment value that is wrong is named too.
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "OUTPOST_REST_PORT=abc")
	out, _ = cmd.CombinedOutput()
	if !strings.Contains(string(out), "OUTPOST_REST_PORT") || !strings.Contains(string(out), "restPort") {
		t.Fatalf("env error %q", out)
	}
	out, err = exec.Command(bin, "frobnicate").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "unknown command") {
		t.Fatalf("unknown command: %v %q", err, out)
	}
	out, err = exec.Command(bin, "backup", "--data-dir", t.TempDir(), filepath.Join(t.TempDir(), "x.db")).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "no database") {
		t.Fatalf("backup without a database: %v %q", err, out)
	}
}

// TestBinaryDefaults starts the binary with no arguments and no config, as
// on a fresh machine, in an empty working directory: it must create
// ./outpost-data (database, certificates) and come up on all six default
// ports (skipped when one of them is taken on this machine).
func TestBinaryDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, port := range []string{"19023", "8080", "8443", "8087", "8089", "8446"} {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second); err == nil {
			c.Close()
			t.Skipf("port %s is in use on this machine", port)
		}
	}
	dir := t.TempDir()
	cmd := exec.Command(testkit.Binary(t))
	cmd.Dir = dir
	cmd.Env = os.Environ()
	var buf testkit.Buffer
	cmd.Stderr = &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(buf.String(), "Outpost is ready") {
		if time.Now().After(deadline) {
			t.Fatalf("not ready: %s", buf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if httpGet(t, "http://127.0.0.1:19023/Alive") != "API is running" {
		t.Fatal("/Alive on the default port")
	}
	// The collector's default target (gcPercent 50) is applied and logged,
	// unless GOGC says otherwise.
	if _, set := os.LookupEnv("GOGC"); !set && !strings.Contains(buf.String(), "gc_percent=50") {
		t.Fatalf("the default gcPercent was not applied: %s", buf.String())
	}
	for _, port := range []string{"8080", "8443", "8087", "8089", "8446"} {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second)
		if err != nil {
			t.Fatalf("default port %s not listening: %v", port, err)
		}
		c.Close()
	}
	for _, f := range []string{"ca.pem", "ca.key", "server.pem", "server.key", "server.key.unencrypted", "server.p12", "crl.json"} {
		if _, err := os.Stat(filepath.Join(dir, "outpost-data", "certs", f)); err != nil {
			t.Fatalf("first run did not create %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "outpost-data", "outpost.db")); err != nil {
		t.Fatalf("default data directory: %v", err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, buf.String())
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}
