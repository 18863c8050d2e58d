package mgmt_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"outpost/internal/testkit"
)

// ftsScript runs scripts/interop/fts-ui.mjs against e and hands its steps
// to the test as they come; the test answers the script's waits.
type ftsScript struct {
	t     *testing.T
	stdin io.WriteCloser
	lines <-chan map[string]any
	steps map[string]map[string]any
	err   *testkit.Buffer
}

func runFTSScript(t *testing.T, e *env, newUser string) *ftsScript {
	t.Helper()
	cmd := exec.Command("node", "fts-ui.mjs")
	cmd.Dir = testkit.InteropDir(t)
	cmd.Env = append(os.Environ(), "OUTPOST_URL="+e.base, "WS_KEY="+e.app.Cfg.WebsocketKey, "NEW_USER="+newUser, "TIMEOUT_MS=15000")
	fs := &ftsScript{t: t, steps: map[string]map[string]any{}, err: &testkit.Buffer{}}
	cmd.Stderr = fs.err
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if fs.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	fs.lines = testkit.JSONLines(stdout)
	return fs
}

// until reads steps until the named one (a wait, "waiting:<name>").
func (fs *ftsScript) until(name string) map[string]any {
	fs.t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case m, ok := <-fs.lines:
			if !ok {
				fs.t.Fatalf("the script ended before %s; steps %v\nstderr: %s", name, fs.steps, fs.err.String())
			}
			step, _ := m["step"].(string)
			if step == "waiting" {
				step += ":" + fmt.Sprint(m["for"])
			}
			fs.t.Logf("node: %.600v", m)
			fs.steps[step] = m
			if step == "fail" || step == "not-json" {
				fs.t.Fatalf("interop script: %v\nstderr: %s", m, fs.err.String())
			}
			if step == name {
				return m
			}
		case <-timeout:
			fs.t.Fatalf("no %s within 60 s; steps %v\nstderr: %s", name, fs.steps, fs.err.String())
		}
	}
}

func (fs *ftsScript) proceed(name string) {
	fs.t.Helper()
	fs.until("waiting:" + name)
	if _, err := io.WriteString(fs.stdin, "go "+name+"\n"); err != nil {
		fs.t.Fatal(err)
	}
}

// payload is a step's payload as an object.
func (fs *ftsScript) payload(step string) map[string]any {
	fs.t.Helper()
	p, _ := fs.steps[step]["payload"].(map[string]any)
	if p == nil {
		fs.t.Fatalf("step %s has no payload: %v", step, fs.steps[step])
	}
	return p
}

// TestFTSWebUI replays FreeTAKServer's web UI against the appliance with
// the real socket.io-client on its default transports: every event name
// and key the UI reads arrives; users are added and removed over the
// channel (the added one, with certificates, is offered its package over
// CoT); a socket that has not authenticated changes nothing and hears
// nothing; bad bodies get clear answers and change nothing.
func TestFTSWebUI(t *testing.T) {
	testkit.RequireInterop(t, "socket.io-client")
	e := newEnv(t, offersOn)
	connectAs(t, e, "ANDROID-FTS", "ECHO")
	want(t, "emergency", e.do("POST", "/ManageEmergency/postEmergency", e.admin,
		map[string]any{"emergencyType": "911 Alert", "latitude": 1, "longitude": 2, "name": "<b>Ops</b>"}), 200)
	testkit.WaitFor(t, "the client to be listed", func() bool {
		return strings.Contains(string(e.do("GET", "/Clients", e.admin, nil).Body), "ANDROID-FTS")
	})
	fs := runFTSScript(t, e, "frank")

	// The dashboard.
	fs.until("systemUsersUpdate")
	if p := fs.payload("connectUpdate"); p["version"] == "" || p["starttime"] == "" {
		t.Errorf("connectUpdate %v", p)
	}
	if a := fs.steps["authentication"]; a["successful"] != "True" {
		t.Errorf("authentication %v", a)
	}
	if tr := fs.steps["transport"]["name"]; tr != "websocket" {
		t.Errorf("after the dashboard the client is on %v, want the websocket (upgraded from polling)", tr)
	}
	if users, _ := fs.payload("userUpdate")["Users"].([]any); len(users) != 1 {
		t.Errorf("userUpdate %v", fs.payload("userUpdate"))
	}
	logs, _ := fs.payload("logUpdate")["log_data"].([]any)
	if len(logs) == 0 {
		t.Errorf("logUpdate since 2000 is empty")
	}
	for _, l := range logs {
		l := l.(map[string]any)
		for _, k := range []string{"time", "type", "file", "message"} {
			if _, ok := l[k].(string); !ok {
				t.Fatalf("log row without %s: %v", k, l)
			}
		}
	}
	info := fs.payload("serviceInfoUpdate")
	services, _ := info["services"].(map[string]any)
	for _, name := range []string{"TCP_CoT_service", "SSL_CoT_service", "TCP_DataPackage_service", "SSL_DataPackage_service",
		"Rest_API_service", "Federation_server_service"} {
		svc, _ := services[name].(map[string]any)
		if _, ok := svc["port"].(float64); !ok || (svc["status"] != "on" && svc["status"] != "off") {
			t.Errorf("serviceInfoUpdate %s = %v", name, services[name])
		}
	}
	if info["ip"] != "127.0.0.1" || services["Rest_API_service"].(map[string]any)["status"] != "on" {
		t.Errorf("serviceInfoUpdate %v", info)
	}
	health := fs.payload("serverHealthUpdate")
	for _, k := range []string{"CPU", "memory", "disk"} {
		if _, ok := health[k].(float64); !ok {
			t.Errorf("serverHealthUpdate %s = %v", k, health[k])
		}
	}
	st := fs.payload("systemStatusUpdate")
	for k, v := range map[string]string{"TCPCoTStatus": "on", "TCPCoTStatusExpected": "on", "SSLCoTStatus": "on",
		"SSLCoTStatusExpected": "on", "TCPDataPackageStatus": "on", "TCPDataPackageStatusExpected": "on",
		"SSLDataPackageStatus": "on", "SSLDataPackageStatusExpected": "on", "RestAPIStatus": "on",
		"RestAPIStatusExpected": "on", "FederationServerStatus": "off", "FederationServerExpected": "off"} {
		if st[k] != v {
			t.Errorf("systemStatusUpdate %s = %v, want %s", k, st[k], v)
		}
	}
	events, _ := fs.payload("eventsUpdate")["events"].([]any)
	if len(events) == 0 || events[0] != "&lt;b&gt;Ops&lt;/b&gt; 911 Alert" {
		t.Errorf("eventsUpdate %v (the UI sets each item as HTML: it must come escaped)", events)
	}
	if now, _ := fs.payload("logUpdate-now")["log_data"].([]any); len(now) > len(logs) {
		t.Errorf("logs since now: %d records, since 2000: %d", len(now), len(logs))
	}
	before, _ := fs.payload("systemUsersUpdate")["SystemUsers"].([]any)

	// Add a user with certificates, as the UI's form does.
	fs.proceed("add")
	added := fs.until("addSystemUser")["answer"].(map[string]any)
	if added["status"] != 201.0 || added["message"] != "user(s) created" {
		t.Fatalf("addSystemUser answer %v", added)
	}
	after, _ := fs.until("systemUsersUpdate-after-add")["payload"].(map[string]any)["SystemUsers"].([]any)
	if len(after) != len(before)+1 {
		t.Fatalf("users before %d, after adding %d", len(before), len(after))
	}
	var frank map[string]any
	for _, u := range after {
		if u := u.(map[string]any); u["Name"] == "frank" {
			frank = u
		}
	}
	if frank == nil || frank["Group"] != "Blue" || frank["Certs"] != "true" || frank["DeviceType"] != "mobile" ||
		frank["Uid"] == "" || frank["token"] != "" || frank["Password"] != nil {
		t.Fatalf("frank in systemUsersUpdate: %v", frank)
	}
	// The same keys in GET /ManageSystemUser/getAll.
	r := e.do("GET", "/ManageSystemUser/getAll", e.admin, nil)
	var all struct{ SystemUsers []map[string]any }
	r.JSON(t, &all)
	found := false
	for _, u := range all.SystemUsers {
		if u["Name"] == "frank" {
			found = u["Uid"] == frank["Uid"] && u["id"] == frank["Uid"] && u["username"] == "frank" && u["Group"] == "Blue" &&
				u["Certs"] == "true" && u["DeviceType"] == "mobile" && u["token"] == "" && strings.HasSuffix(fmt.Sprint(u["certificatePackageName"]), ".zip")
		}
	}
	if !found || strings.Contains(string(r.Body), "pass-word-1") || strings.Contains(string(r.Body), "frank-token-0123456789") {
		t.Fatalf("getAll %s", r.Body)
	}
	// frank's device connects over TCP and is offered its package.
	dev := connectAs(t, e, "ANDROID-FRANK", "frank")
	_, share := waitFileShare(t, dev, 10*time.Second)
	want(t, "frank's package through the link", testkit.Do(t, nil, "GET", share.SenderURL, nil), 200)

	// Change his password, token and group, as the UI's user page does.
	fs.proceed("update")
	updated := fs.until("updateSystemUser")["answer"].(map[string]any)
	if updated["status"] != 200.0 || updated["message"] != "user updated" {
		t.Fatalf("updateSystemUser answer %v", updated)
	}
	want(t, "frank's new token", e.do("GET", "/api/whoami", "frank-token2-0123456789", nil), 200)
	want(t, "frank's old token", e.do("GET", "/api/whoami", "frank-token-0123456789", nil), 401)
	want(t, "frank's new password", e.do("POST", "/api/login", "", map[string]string{"username": "frank", "password": "pass-word-2"}), 200)
	want(t, "frank's old password", e.do("POST", "/api/login", "", map[string]string{"username": "frank", "password": "pass-word-1"}), 401)
	r = e.do("GET", "/ManageSystemUser/getAll", e.admin, nil)
	r.JSON(t, &all)
	for _, u := range all.SystemUsers {
		if u["Name"] == "frank" && u["Group"] != "Green" {
			t.Fatalf("frank's group after updateSystemUser: %v", u)
		}
	}

	// Remove him, as the UI does, by the Uid of its list.
	fs.proceed("remove")
	removed := fs.until("removeSystemUser")["answer"].(map[string]any)
	if removed["status"] != 200.0 || removed["message"] != "user deleted" {
		t.Fatalf("removeSystemUser answer %v", removed)
	}
	if _, _, ok := e.users(e.admin).byName("frank"); ok {
		t.Fatal("frank still listed after removeSystemUser")
	}
	want(t, "frank's link after his removal", testkit.Do(t, nil, "GET", share.SenderURL, nil), 404)

	// Without authentication: nothing heard, nothing changed.
	snap := e.snapshot()
	refused := fs.until("refused")
	if ev, _ := refused["events"].([]any); len(ev) != 0 {
		t.Errorf("an unauthenticated socket heard %v", ev)
	}
	if _, _, ok := e.users(e.admin).byName("intruder"); ok {
		t.Fatal("an unauthenticated socket added a user")
	}
	// Bad bodies: each answered with a status and a message naming the
	// fault; nothing changed.
	bad, _ := fs.until("bad-input")["answers"].([]any)
	wantStatus := []float64{400, 400, 400, 400, 400, 404, 400, 400, 400, 400, 400, 404, 400, 400, 400}
	if len(bad) != len(wantStatus) {
		t.Fatalf("bad input answers %v", bad)
	}
	if m := bad[5].(map[string]any)["answer"].(map[string]any)["message"]; m != `systemUsers[0].uid: no system user with id "no-such-uid"` {
		t.Errorf("unknown uid: %v", m)
	}
	for i, msg := range map[int]string{9: "systemUsers: must hold", 10: "systemUsers[0].uid: required", 11: `systemUsers[0].uid: no system user with id "no-such-uid"`,
		12: "Token, Password or Group: at least one is required", 13: "systemUsers[0].Token:", 14: "systemUsers[0].Group:"} {
		if m := fmt.Sprint(bad[i].(map[string]any)["answer"].(map[string]any)["message"]); !strings.Contains(m, msg) {
			t.Errorf("bad input %d: %q, want %q", i, m, msg)
		}
	}
	for i, b := range bad {
		b := b.(map[string]any)
		a := b["answer"].(map[string]any)
		if a["status"] != wantStatus[i] || a["message"] == "" {
			t.Errorf("%s %v: %v, want status %v", b["event"], b["arg"], a, wantStatus[i])
		}
	}
	fs.until("done")
	sameSnapshot(t, "refused and bad requests", withoutHistory(snap), withoutHistory(e.snapshot()))
	if !strings.Contains(e.logs.String(), "socket.io user operation refused") {
		t.Error("the refusals are not logged (the UI shows no answer)")
	}
	if strings.Contains(e.logs.String(), "pass-word-1") || strings.Contains(e.logs.String(), "frank-token-0123456789") ||
		strings.Contains(e.logs.String(), "pass-word-2") || strings.Contains(e.logs.String(), "frank-token2-0123456789") {
		t.Fatal("a secret of the channel's requests is in the log")
	}
}

// withoutHistory leaves out the CoT history tables, which the connected
// clients' reports fill meanwhile.
func withoutHistory(snap map[string]string) map[string]string {
	for k := range snap {
		if strings.HasPrefix(k, "cot_") {
			delete(snap, k)
		}
	}
	return snap
}
