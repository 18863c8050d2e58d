package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"outpost/appliance/admin"
	"outpost/appliance/netx"
	"outpost/internal/testkit"
)

// logLine waits for the record with msg and returns it.
func logLine(t *testing.T, p *testkit.Proc, msg string) map[string]any {
	t.Helper()
	var line map[string]any
	testkit.WaitFor(t, "log line "+msg, func() bool {
		for _, l := range p.Logs() {
			if l["msg"] == msg {
				line = l
				return true
			}
		}
		return false
	})
	return line
}

// TestStartSaysWhatToDo: the start logs where clients reach the server, the
// bound port of each listener, the console's address and the admin token's
// file, and, until a system user exists, the next step; once one exists
// the next start leaves the next step out.
func TestStartSaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	p := testkit.Start(t, dir, "--enroll-port", "0", "--ssl-cot-port", "0")
	reach := logLine(t, p, "clients connect to")
	if reach["public_host"] != "127.0.0.1" {
		t.Fatalf("public host %v", reach["public_host"])
	}
	if _, ok := reach["other_addresses"]; !ok {
		t.Fatalf("no other_addresses: %v", reach)
	}
	ports := logLine(t, p, "ports")
	for attr, listener := range map[string]string{"cot_tls": netx.ListenerCoTTLS, "enrollment": netx.ListenerEnroll,
		"api_http": netx.ListenerHTTP, "cot_tcp": netx.ListenerCoTTCP, "console": netx.ListenerREST} {
		addr := p.Addr(t, listener)
		if got, ok := ports[attr].(float64); !ok || !strings.HasSuffix(addr, ":"+formatPort(got)) {
			t.Errorf("ports line: %s = %v, listener at %s", attr, ports[attr], addr)
		}
	}
	if _, ok := ports["api_https"]; ok {
		t.Error("the disabled HTTPS listener is in the ports line")
	}
	console := logLine(t, p, "web console")
	if console["url"] != "http://127.0.0.1:"+formatPort(ports["console"].(float64))+"/" || console["admin_token_file"] != filepath.Join(dir, admin.AdminTokenFile) {
		t.Fatalf("console line %v", console)
	}
	next := logLine(t, p, "next step: add a user, then invite a device and scan its QR code in ATAK, iTAK or WinTAK")
	if !strings.Contains(next["invite"].(string), "outpost invite NAME --qr") {
		t.Fatalf("next step %v", next)
	}
	tok, err := os.ReadFile(filepath.Join(dir, admin.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	r := testkit.Do(t, nil, "POST", "http://"+p.Addr(t, netx.ListenerREST)+"/ManageSystemUser/postSystemUser",
		map[string]string{"username": "first", "password": "the first user's password"}, "Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	if r.Status != 201 {
		t.Fatalf("creating a user: %d %s", r.Status, r.Body)
	}
	if err, _ := p.Stop(t, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	q := testkit.Start(t, dir)
	logLine(t, q, "web console")
	if q.Logged(next["msg"].(string)) {
		t.Fatal("the next step is logged although a user exists")
	}
}

func formatPort(f float64) string { return strconv.Itoa(int(f)) }
