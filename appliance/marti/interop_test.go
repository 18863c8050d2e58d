package marti_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/appliance/store"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

type nodeStep struct {
	Step        string   `json:"step"`
	OK          bool     `json:"ok"`
	Error       string   `json:"error"`
	ClientLimit string   `json:"clientLimit"`
	Hash        string   `json:"hash"`
	Hashes      []string `json:"hashes"`
	Submitter   string   `json:"submitter"`
	Link        string   `json:"link"`
	Deviations  []string `json:"deviations"`
	Groups      []struct {
		Name      string `json:"name"`
		Direction string `json:"direction"`
		Bitpos    int    `json:"bitpos"`
		Active    bool   `json:"active"`
	} `json:"groups"`
}

// runNode runs a script of scripts/interop and returns its steps by name.
func runNode(t *testing.T, script string, env ...string) map[string]nodeStep {
	t.Helper()
	cmd := exec.Command("node", script)
	cmd.Dir = testkit.InteropDir(t)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", script, err, stdout.String(), stderr.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not finish\nstdout:\n%s\nstderr:\n%s", script, stdout.String(), stderr.String())
	}
	steps := map[string]nodeStep{}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var s nodeStep
		if json.Unmarshal(sc.Bytes(), &s) == nil && s.Step != "" {
			steps[s.Step] = s
			t.Logf("%s: %s", script, sc.Text())
		}
	}
	return steps
}

// writePEM issues a certificate for name and writes it as PEM files.
func writePEM(t *testing.T, e *env, name string) (certFile, keyFile string) {
	t.Helper()
	cc, err := e.Authority().IssueClient(name)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, cc.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, cc.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestNodeTakREST drives the client API with @tak-ps/node-tak 8.9.0's REST
// client (TAKAPI) on both listeners: version, groups, contacts, the latest
// event of a uid and its events of a window (parsed into GeoJSON by
// node-tak, an empty window too), uploads (raw and data package), the
// package list, a download and video connections.
//
// On the HTTP port (no certificate) node-tak uses undici's fetch instead of
// its certificate client, and two of its methods cannot work there, whatever
// the server: Files.upload passes a stream body without duplex: 'half',
// which fetch refuses before sending anything; Files.uploadPackage passes
// its form-data object, which fetch sends as the text "[object FormData]"
// under a multipart Content-Type, which the server must refuse as a
// malformed body (400, nothing stored). The download on HTTP fetches the
// file uploaded over HTTPS. Everything else must pass on both ports.
// Files.meta and Files.delete are TestNodeTakFiles'.
func TestNodeTakREST(t *testing.T) {
	testkit.RequireInterop(t, "@tak-ps/node-tak")
	e := start(t, nil)
	storedSA(t, e, "ANDROID-NODE", "NODECALL")
	certFile, keyFile := writePEM(t, e, "nodetak")

	httpsSteps := runNode(t, "marti-rest.mjs", "OUTPOST_URL="+strings.TrimSuffix(e.URL(t, netx.ListenerHTTPS, "/"), "/"),
		"CERT="+certFile, "KEY="+keyFile, "OUTPOST_CONTACT_UID=ANDROID-NODE")
	for _, name := range []string{"version", "groups", "contacts", "cot", "history", "historyNone", "upload", "mpupload", "list", "download", "video", "done"} {
		if s, ok := httpsSteps[name]; !ok || !s.OK {
			t.Errorf("https step %s: %+v", name, s)
		}
	}
	if s := httpsSteps["upload"]; s.Submitter != "nodetak" {
		t.Errorf("https upload submitter %q, want the certificate's name", s.Submitter)
	}
	if l := httpsSteps["mpupload"].Link; !strings.HasPrefix(l, "https://127.0.0.1:"+e.port(t, netx.ListenerHTTPS)+"/") {
		t.Errorf("https missionupload link %q", l)
	}
	if !strings.Contains(strings.Join(httpsSteps["list"].Hashes, ","), httpsSteps["upload"].Hash) {
		t.Errorf("the upload is not in node-tak's package list: %+v", httpsSteps["list"])
	}

	httpSteps := runNode(t, "marti-rest.mjs", "OUTPOST_URL="+strings.TrimSuffix(e.URL(t, netx.ListenerHTTP, "/"), "/"),
		"OUTPOST_CONTACT_UID=ANDROID-NODE", "OUTPOST_CREATOR_UID=NODE-TAK-ANON", "DOWNLOAD_HASH="+httpsSteps["upload"].Hash)
	for _, name := range []string{"version", "groups", "contacts", "cot", "history", "historyNone", "list", "download", "video", "done"} {
		if s, ok := httpSteps[name]; !ok || !s.OK {
			t.Errorf("http step %s: %+v", name, s)
		}
	}
	if s := httpSteps["upload"]; !s.OK && s.ClientLimit == "" {
		t.Errorf("http upload failed for another reason than node-tak's fetch: %+v", s)
	}
	if s := httpSteps["mpupload"]; !s.OK && !strings.Contains(s.Error, "assetfile: the upload ended early or is malformed; nothing was stored") {
		t.Errorf("http missionupload failed for another reason than node-tak's form body: %+v", s)
	}
}

// TestWebsocketInterop: a third-party websocket stack (the npm ws client
// with a client certificate, @tak-ps/node-cot's protobuf codec) and a TCP
// client exchange position reports and a chat through /takproto/1.
func TestWebsocketInterop(t *testing.T) {
	testkit.RequireInterop(t, "ws")
	testkit.RequireInterop(t, "@tak-ps/node-cot")
	e := start(t, nil)
	tcp := e.DialTCP(t)
	tcp.Send(takclient.SA("GO-TCP", "GOCALL", 59.9, 10.7))
	testkit.WaitFor(t, "the TCP client identified", func() bool { return len(e.Broker().Clients()) == 1 })
	certFile, keyFile := writePEM(t, e, "nodews")
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.Authority().CACert().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command("node", "ws-cot.mjs")
	cmd.Dir = testkit.InteropDir(t)
	cmd.Env = append(os.Environ(), "OUTPOST_WS_URL=wss://"+e.Addr(t, netx.ListenerHTTPS)+"/takproto/1",
		"CERT="+certFile, "KEY="+keyFile, "CA="+caFile, "OUTPOST_PEER_UID=GO-TCP", "OUTPOST_PEER_CHAT_UID=GO-CHAT", "TIMEOUT_MS=20000")
	var stdout, stderr testkit.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	done := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill() // no-op once it exited
		<-done
	})
	// Both of the socket's SAs (framed, then bare) reach the TCP client.
	for _, lat := range []float64{52.52, 52.53} {
		ev, err := tcp.WaitFor(func(ev *cot.Event) bool { return ev.UID == "NODE-WS" && ev.Point.Lat == lat }, 20*time.Second)
		if err != nil {
			t.Fatalf("the node socket's SA at %v: %v\nstdout:\n%s\nstderr:\n%s", lat, err, stdout.String(), stderr.String())
		}
		if ev.Detail.Contact == nil || ev.Detail.Contact.Callsign != "NODE-WS-CALL" {
			t.Fatalf("SA detail: %s", ev.Detail.XML)
		}
	}
	tcp.Send(takclient.Chat("GO-CHAT", "hello node"))
	select {
	case <-done:
		if waitErr != nil {
			t.Fatalf("ws-cot.mjs: %v\nstdout:\n%s\nstderr:\n%s", waitErr, stdout.String(), stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("ws-cot.mjs did not finish\nstdout:\n%s", stdout.String())
	}
	for _, s := range []string{`"step":"connected"`, `"step":"replay"`, `"step":"sent"`, `"step":"pong"`, `"step":"chat"`, `"step":"done"`} {
		if !strings.Contains(stdout.String(), s) {
			t.Fatalf("step %s missing:\n%s", s, stdout.String())
		}
	}
	if users := findEndpoint(e.endpoints(t, both[0], ""), "NODE-WS"); users == nil || users["username"] != "nodews" {
		t.Fatalf("the socket's endpoint: %v", users)
	}
	// Its departure reaches the TCP client.
	if dep, err := tcp.WaitFor(takclient.Type("t-x-d-d"), 10*time.Second); err != nil || !strings.Contains(string(dep.Detail.XML), `uid="NODE-WS"`) {
		t.Fatalf("departure: %v", err)
	}
}

// storedSA has a TCP client send its SA and waits until the history holds
// it, so the Marti routes can answer for that uid.
func storedSA(t *testing.T, e *env, uid, callsign string) {
	t.Helper()
	e.DialTCP(t).Send(takclient.SA(uid, callsign, 48.85, 2.35))
	// Stored, not only relayed: cot/xml answers from the live state at
	// once, while the mission routes read the history, which the writer
	// fills a moment later.
	testkit.WaitFor(t, "the SA in the history", func() bool {
		_, err := e.Store().Events().LatestEvent(context.Background(), uid, store.AllGroups)
		return err == nil
	})
}

// TestNodeTakMissions drives the mission routes with @tak-ps/node-tak
// 8.9.0's Mission and MissionLog APIs on both listeners, every answer
// checked against node-tak's own schemas (marti-missions.mjs): create,
// list, subscribe, subscription roles and list, a log entry, contents by
// hash and uid, get with logs and changes, the change history, the CoT
// list (parsed into GeoJSON by node-tak), removal and unsubscribe.
func TestNodeTakMissions(t *testing.T) {
	testkit.RequireInterop(t, "@tak-ps/node-tak")
	e := start(t, nil)
	storedSA(t, e, "ANDROID-MISSION", "MCALL")
	file := []byte("a file for node-tak's mission")
	if resp := e.do(t, both[0], "POST", "/Marti/sync/upload?filename=node.txt&creatorUid=NODE-1", file, "Content-Type", "text/plain"); resp.Status != 200 {
		t.Fatalf("upload: %d %s", resp.Status, resp.Body)
	}
	certFile, keyFile := writePEM(t, e, "nodemission")
	for _, l := range both {
		env := []string{"OUTPOST_URL=" + strings.TrimSuffix(e.URL(t, l, "/"), "/"), "MISSION=node-" + l, "HASH=" + sha(file),
			"CONTACT_UID=ANDROID-MISSION"}
		if l == netx.ListenerHTTPS {
			env = append(env, "CERT="+certFile, "KEY="+keyFile)
		}
		steps := runNode(t, "marti-missions.mjs", env...)
		for _, name := range []string{"create", "list", "subscribe", "roles", "subscriptions", "log", "attach", "get", "changes", "cot", "detach", "unsubscribe", "done"} {
			if s, ok := steps[name]; !ok || !s.OK {
				t.Errorf("%s step %s: %+v", l, name, s)
			}
		}
	}
}

// TestNodeTakMissionLayers drives the layer routes with node-tak's
// MissionLayer API on both listeners, every answer checked against its
// schemas (marti-layers.mjs): create a layer and an ITEM for a uid, list
// and get (and node-tak's latestFeats through the layer), rename, delete
// (the uid leaves the mission).
func TestNodeTakMissionLayers(t *testing.T) {
	testkit.RequireInterop(t, "@tak-ps/node-tak")
	e := start(t, nil)
	storedSA(t, e, "ANDROID-LAYER", "LCALL")
	certFile, keyFile := writePEM(t, e, "nodelayers")
	for _, l := range both {
		env := []string{"OUTPOST_URL=" + strings.TrimSuffix(e.URL(t, l, "/"), "/"), "MISSION=layers-" + l, "CONTACT_UID=ANDROID-LAYER"}
		if l == netx.ListenerHTTPS {
			env = append(env, "CERT="+certFile, "KEY="+keyFile)
		}
		steps := runNode(t, "marti-layers.mjs", env...)
		for _, name := range []string{"create", "layer", "item", "list", "get", "rename", "delete", "done"} {
			if s, ok := steps[name]; !ok || !s.OK {
				t.Errorf("%s step %s: %+v", l, name, s)
			}
		}
	}
}
