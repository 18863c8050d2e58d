package mgmt

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"outpost/internal/testkit"
)

// TestChannelSocketIOClientInterop runs the real socket.io-client (npm)
// against the channel: websocket transport, right and wrong keys, every
// request event, a users push, and a client on long polling alone.
func TestChannelSocketIOClientInterop(t *testing.T) {
	testkit.RequireInterop(t, "socket.io-client")
	f := newChannelFixture(t, func(o *ChannelOptions) {
		o.HealthInterval = -1
		o.Logger = testkit.Logger(t) // only the test's records in the tap
	})
	f.addClient("ANDROID-1", "ALPHA")
	f.log.Warn("interop line", "n", 7)

	cmd := exec.Command("node", "socketio-channel.mjs")
	cmd.Dir = testkit.InteropDir(t)
	cmd.Env = append(os.Environ(), "OUTPOST_URL="+f.ts.URL, "WS_KEY="+testKey, "WRONG_KEY=not-"+testKey,
		"PUSH_UID=ANDROID-PUSHED", "TIMEOUT_MS=15000")
	var stderr testkit.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := testkit.JSONLines(stdout)
	steps := map[string]map[string]any{}
	timeout := time.After(60 * time.Second)
read:
	for {
		select {
		case m, ok := <-lines:
			if !ok {
				break read
			}
			name, _ := m["step"].(string)
			t.Logf("node: %v", m)
			steps[name] = m
			switch name {
			case "fail", "not-json":
				t.Fatalf("interop script: %v\nstderr: %s", m, stderr.String())
			case "ready-for-push":
				f.addClient("ANDROID-PUSHED", "CHARLIE")
				f.ch.NotifyClientsChanged()
			}
		case <-timeout:
			t.Fatalf("interop script did not finish; steps so far %v\nstderr: %s", steps, stderr.String())
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("interop script: %v\nstderr: %s", err, stderr.String())
	}
	if steps["done"] == nil {
		t.Fatalf("script did not finish: %v", steps)
	}
	payload := func(step string) map[string]any {
		p, _ := steps[step]["payload"].(map[string]any)
		if p == nil {
			t.Fatalf("step %s has no payload: %v", step, steps[step])
		}
		return p
	}
	if p := payload("connectUpdate"); p["version"] != "9.8.7" || p["starttime"] != "2026-01-02T03:04:05.600Z" {
		t.Errorf("connectUpdate %v", p)
	}
	if p := payload("authentication"); p["successful"] != "True" {
		t.Errorf("authentication %v", p)
	}
	users, _ := payload("users")["Users"].([]any)
	if len(users) != 1 {
		t.Fatalf("users %v", users)
	}
	if u := users[0].(map[string]any); u["uid"] != "ANDROID-1" || u["callsign"] != "ALPHA" || u["team"] != "Cyan" ||
		u["role"] != "Team Lead" || u["address"] != "10.1.2.3" || u["lastSeen"] == "" {
		t.Errorf("user %v", u)
	}
	logs, _ := payload("logs")["log_data"].([]any)
	if len(logs) != 1 {
		t.Fatalf("logs %v", logs)
	}
	if l := logs[0].(map[string]any); l["message"] != "interop line n=7" || l["type"] != "WARN" ||
		l["file"] != "channel_interop_test.go" || l["time"] == "" {
		t.Errorf("log %v", l)
	}
	info := payload("serviceInfo")
	services, _ := info["services"].(map[string]any)
	tcp, _ := services["TCP_CoT_service"].(map[string]any)
	fed, _ := services["Federation_server_service"].(map[string]any)
	if info["ip"] != "tak.example.org" || len(services) != 6 || tcp["status"] != "on" || tcp["port"] != 8087.0 ||
		fed["status"] != "off" || fed["port"] != 9000.0 {
		t.Errorf("serviceInfo %v", info)
	}
	health := payload("serverHealth")
	for _, k := range []string{"CPU", "memory", "disk"} {
		v, ok := health[k].(float64)
		if !ok || v < 0 || v > 100 || v != float64(int(v)) {
			t.Errorf("serverHealth %s = %v", k, health[k])
		}
	}
	st := payload("systemStatus")
	if len(st) != 3+2*len(ftsServices) || st["TCP_CoT_service"] != "on" || st["SSL_CoT_service"] != "off" || st["Federation_server_service"] != "off" {
		t.Errorf("systemStatus %v", st)
	}
	pushed, _ := payload("users-push")["Users"].([]any)
	if len(pushed) != 2 {
		t.Errorf("users push %v", pushed)
	}
	wrong := steps["wrong-key"]
	answers, _ := wrong["authentication"].([]any)
	others, _ := wrong["other_events"].([]any)
	if len(answers) != 1 || answers[0].(map[string]any)["successful"] != "False" || len(others) != 0 ||
		wrong["disconnect_reason"] != "io server disconnect" {
		t.Errorf("wrong key: %v", wrong)
	}
	p := steps["polling-only"]
	auth, _ := p["authentication"].(map[string]any)
	users, _ = p["users"].(map[string]any)["Users"].([]any)
	if auth["successful"] != "True" || len(users) != 2 || p["transport"] != "polling" {
		t.Errorf("polling client: %v", p)
	}
}
