package web_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outpost/appliance/admin"
	"outpost/internal/testkit"
)

// fedNode is one Outpost of the federation browser test: its REST base
// URL and its admin token.
type fedNode struct {
	p     *testkit.Proc
	base  string
	token string
}

func startFedNode(t *testing.T, dir string) fedNode {
	t.Helper()
	p := testkit.Start(t, dir, "--federation-port", "0", "--key-type", "ecdsa-p256")
	tok, err := os.ReadFile(filepath.Join(dir, admin.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	return fedNode{p: p, base: "http://" + p.Addr(t, "rest") + "/", token: strings.TrimSpace(string(tok))}
}

func (n fedNode) do(t *testing.T, method, path string, body any) testkit.Response {
	t.Helper()
	return testkit.Do(t, nil, method, n.base+path, body, "Authorization", "Bearer "+n.token)
}

// fedState is GET /api/federation as the test reads it.
type fedState struct {
	Identity struct {
		Fingerprint string `json:"fingerprint"`
	} `json:"identity"`
	Listening string `json:"listening"`
	Federates []struct {
		Name, State string
		Connected   bool
	} `json:"federates"`
}

func (n fedNode) state(t *testing.T) fedState {
	t.Helper()
	r := n.do(t, "GET", "api/federation", nil)
	var s fedState
	if r.Status != 200 {
		t.Fatalf("GET api/federation: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &s)
	return s
}

// TestConsoleFederationInBrowser runs two real binaries without
// federationTrust and drives A's Federation page in headless Chromium
// (web/test/federation.mjs): B lets A in by A's CA (through the API); on
// A's page the administrator reads A's identity, adds B with its address,
// its CA file, its pinned fingerprint and protocol v2, sees the link
// connected with its counters, maps its groups (an outbound and an inbound
// pair of A's group Blue, saved and summed up in the row; a federate group
// over 255 bytes refused, nothing changed; cleared after confirming), edits
// the protocol to v1 (no link: B has no v1 listener) and back to v2
// (connected again), disables it (the link ends on B too), and removes it
// after confirming. Afterwards the API holds no managed federate on A and
// no mapping of bravo.
func TestConsoleFederationInBrowser(t *testing.T) {
	node, chromium := requireBrowser(t)
	dir := t.TempDir()
	a, b := startFedNode(t, filepath.Join(dir, "a")), startFedNode(t, filepath.Join(dir, "b"))
	caA, err := os.ReadFile(filepath.Join(dir, "a", "certs", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if r := b.do(t, "POST", "api/federation/federates", map[string]string{"name": "alpha", "ca": string(caA)}); r.Status != 201 {
		t.Fatalf("B adds alpha: %d %s", r.Status, r.Body)
	}
	var bState fedState
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if bState = b.state(t); bState.Listening != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("B's federation listener did not open")
		}
	}
	caB := filepath.Join(dir, "bravo-ca.pem")
	if err := copyFile(filepath.Join(dir, "b", "certs", "ca.pem"), caB); err != nil {
		t.Fatal(err)
	}
	// A client of B: its position is what A receives first when the link
	// comes up (the replay every new link gets), so the page has counters.
	cot, err := net.Dial("tcp", b.p.Addr(t, "cot-tcp"))
	if err != nil {
		t.Fatal(err)
	}
	defer cot.Close()
	now := time.Now().UTC()
	sa := fmt.Sprintf(`<event version="2.0" uid="BRAVO-SCOUT" type="a-f-G-U-C" how="m-g" time="%s" start="%s" stale="%s">`+
		`<point lat="48.85" lon="2.35" hae="35" ce="5" le="9999999"/><detail><contact callsign="Bravo Scout" endpoint="*:-1:stcp"/></detail></event>`,
		now.Format(time.RFC3339), now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339))
	if _, err := cot.Write([]byte(sa)); err != nil {
		t.Fatal(err)
	}
	// A group of A for the page's group mapping editor.
	if r := a.do(t, "POST", "api/groups", map[string]string{"name": "Blue"}); r.Status != 201 {
		t.Fatalf("A makes the group Blue: %d %s", r.Status, r.Body)
	}
	aState := a.state(t)
	if aState.Listening != "" || aState.Identity.Fingerprint == "" {
		t.Fatalf("A before the console: %+v", aState)
	}

	shots := artifactDir(t)
	t.Logf("screenshots: %s", shots)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("test", "federation.mjs"))
	cmd.Dir = filepath.Join(testkit.ModuleRoot(t), "web")
	cmd.Env = append(os.Environ(), "OUTPOST_URL="+a.base, "OUTPOST_TOKEN="+a.token, "OUTPOST_ARTIFACTS="+shots, "OUTPOST_CHROMIUM="+chromium,
		"OUTPOST_FED_ADDRESS="+strings.Replace(bState.Listening, "[::]", "127.0.0.1", 1), "OUTPOST_FED_CA="+caB,
		"OUTPOST_FED_PIN="+bState.Identity.Fingerprint, "OUTPOST_FED_SELF="+aState.Identity.Fingerprint)
	stderr := &testkit.Buffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	steps := 0
	for sc := bufio.NewScanner(out); sc.Scan(); {
		if strings.HasPrefix(sc.Text(), "step: ") {
			steps++
		}
		t.Log(sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the browser test failed (%v):\n%s\nscreenshots: %s", err, stderr.String(), shots)
	}
	if steps < 5 {
		t.Fatalf("the browser test reported %d steps", steps)
	}
	// What the console did is what the servers hold.
	r := a.do(t, "GET", "api/federation/federates", nil)
	if r.Status != 200 || strings.TrimSpace(string(r.Body)) != `{"federates":[]}` {
		t.Fatalf("A's managed federates after the console: %d %s", r.Status, r.Body)
	}
	var groups struct {
		Outbound, Inbound []struct{ Local, Federate string }
	}
	if r = a.do(t, "GET", "api/federation/federates/bravo/groups", nil); r.Status != 200 {
		t.Fatalf("A's groups of bravo after the console: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &groups)
	if len(groups.Outbound) != 0 || len(groups.Inbound) != 0 {
		t.Fatalf("A's groups of bravo after the console cleared them: %s", r.Body)
	}
	for _, f := range b.state(t).Federates {
		if f.Name == "alpha" && f.Connected {
			t.Fatalf("B still has a link to alpha after the console removed bravo: %+v", f)
		}
	}
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}
