package e2e

import (
	"context"
	"encoding/pem"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"outpost/appliance/admin"
	"outpost/appliance/apptest"
	"outpost/appliance/cot"
	"outpost/appliance/federation"
	"outpost/appliance/netx"
	"outpost/appliance/store"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// caPEM is the CA's certificate as PEM text (what an operator pastes).
func (ca *fedCA) pem() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}))
}

// fedAPI calls a federation management route of a with the token.
func fedAPI(t *testing.T, a *apptest.App, token, method, path string, body any) testkit.Response {
	t.Helper()
	return testkit.Do(t, nil, method, a.URL(t, netx.ListenerREST, path), body, "Authorization", "Bearer "+token)
}

// waitFed waits until a's federate name satisfies cond.
func waitFed(t *testing.T, a *apptest.App, name string, cond func(federation.FederateStats) bool) federation.FederateStats {
	t.Helper()
	deadline := time.Now().Add(fedWait)
	for {
		s := fedStats(a, name)
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("federate %s never got there: %+v", name, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFederationManaged: two Outposts of different federation CAs, neither
// trusting the other's by configuration. Through the management API, B
// adds A as an inbound-only federate (A's CA) and A adds B with its address
// (B's CA): the link comes up without a restart and positions cross; every
// bad request is refused with its status and changes nothing; removed, the
// link ends and nothing more crosses.
func TestFederationManaged(t *testing.T) {
	caA, caB := newFedCA(t, "Alpha Federation CA"), newFedCA(t, "Bravo Federation CA")
	b := startFederated(t, caB, "bravo-server", "")
	a := startFederated(t, caA, "alpha-server", "")
	tokA, tokB := adminToken(t, a), adminToken(t, b)

	// Errors first: none may change anything.
	user, err := a.Store().Accounts().CreateUser(context.Background(), store.UserInput{Name: "plain-user", Password: "a long enough password 1"})
	if err != nil {
		t.Fatal(err)
	}
	notCA, _, _ := caA.issue(t, "leaf")
	leaf, err := os.ReadFile(notCA)
	if err != nil {
		t.Fatal(err)
	}
	leafPEM := string(leaf)
	for _, tc := range []struct {
		what, method, path, token string
		body                      any
		status                    int
		msg                       string
	}{
		{"bad address", "POST", "/api/federation/federates", tokA, map[string]any{"name": "x", "address": "10.0.0.2", "ca": caB.pem()}, 400, "address"},
		{"bad port", "POST", "/api/federation/federates", tokA, map[string]any{"name": "x", "address": "10.0.0.2:0", "ca": caB.pem()}, 400, "address"},
		{"bad PEM", "POST", "/api/federation/federates", tokA, map[string]any{"name": "x", "ca": "not a pem"}, 400, "ca"},
		{"not a CA", "POST", "/api/federation/federates", tokA, map[string]any{"name": "x", "ca": leafPEM}, 400, "not a CA"},
		{"bad name", "POST", "/api/federation/federates", tokA, map[string]any{"name": "a b"}, 400, "name"},
		{"no name", "POST", "/api/federation/federates", tokA, map[string]any{"address": "10.0.0.2:9001"}, 400, "name"},
		{"not JSON", "POST", "/api/federation/federates", tokA, "{", 400, ""},
		{"too large", "POST", "/api/federation/federates", tokA, map[string]any{"name": "x", "ca": strings.Repeat("A", 100<<10)}, 413, ""},
		{"trust of nobody", "PUT", "/api/federation/federates/nobody/trust", tokA, map[string]any{"ca": caB.pem()}, 404, "no federate"},
		{"remove nobody", "DELETE", "/api/federation/federates/nobody", tokA, nil, 404, "no federate"},
		{"not an admin", "POST", "/api/federation/federates", user.Token, map[string]any{"name": "x", "ca": caB.pem()}, 403, "administrator"},
		{"not an admin removes", "DELETE", "/api/federation/federates/x", user.Token, nil, 403, "administrator"},
		{"no token", "POST", "/api/federation/federates", "", map[string]any{"name": "x"}, 401, ""},
	} {
		res := fedAPI(t, a, tc.token, tc.method, tc.path, tc.body)
		if res.Status != tc.status || !strings.Contains(res.Message(), tc.msg) {
			t.Errorf("%s: %d %s; want %d %q", tc.what, res.Status, res.Body, tc.status, tc.msg)
		}
	}
	if list, _ := a.Store().Federates().List(context.Background()); len(list) != 0 {
		t.Fatalf("refused requests stored %+v", list)
	}

	// B lets A in (inbound only); A connects to B.
	res := fedAPI(t, b, tokB, "POST", "/api/federation/federates", map[string]any{"name": "alpha", "ca": caA.pem()})
	if res.Status != 201 || !strings.Contains(string(res.Body), `"inboundOnly":true`) || !strings.Contains(string(res.Body), "Alpha Federation CA") || strings.Contains(string(res.Body), "BEGIN") {
		t.Fatalf("B adds alpha: %d %s", res.Status, res.Body)
	}
	cliA := a.DialTCP(t)
	if err := cliA.Send(takclient.SA("ALPHA-M", "ALPHA", 1, 2)); err != nil {
		t.Fatal(err)
	}
	cliB := b.DialTCP(t)
	if err := cliB.Send(takclient.SA("BRAVO-M", "BRAVO", 3, 4)); err != nil {
		t.Fatal(err)
	}
	res = fedAPI(t, a, tokA, "POST", "/api/federation/federates", map[string]any{"name": "bravo", "address": fedListener(t, b), "ca": caB.pem()})
	if res.Status != 201 || !strings.Contains(string(res.Body), `"enabled":true`) {
		t.Fatalf("A adds bravo: %d %s", res.Status, res.Body)
	}
	if res := fedAPI(t, a, tokA, "POST", "/api/federation/federates", map[string]any{"name": "bravo", "ca": caB.pem()}); res.Status != 409 {
		t.Fatalf("bravo twice: %d %s", res.Status, res.Body)
	}
	if _, err := cliB.WaitFor(func(e *cot.Event) bool { return e.UID == "ALPHA-M" }, fedWait); err != nil {
		t.Fatalf("B's client did not get A's position over the managed link: %v", err)
	}
	if _, err := cliA.WaitFor(func(e *cot.Event) bool { return e.UID == "BRAVO-M" }, fedWait); err != nil {
		t.Fatalf("A's client did not get B's position over the managed link: %v", err)
	}
	// B knows the link by its managed name; GET /api/federation shows both.
	waitFed(t, b, "alpha", func(s federation.FederateStats) bool { return s.Connected && s.Source == "managed" })
	res = fedAPI(t, a, tokA, "GET", "/api/federation", nil)
	var view struct {
		Federates []federation.FederateStats `json:"federates"`
	}
	res.JSON(t, &view)
	if res.Status != 200 || len(view.Federates) != 1 || view.Federates[0].Name != "bravo" || view.Federates[0].State != "connected" ||
		view.Federates[0].Source != "managed" || view.Federates[0].Address != fedListener(t, b) || view.Federates[0].EventsOut == 0 || view.Federates[0].LastContact == 0 {
		t.Fatalf("GET /api/federation: %d %s", res.Status, res.Body)
	}
	// A disabled federate is stored and listed, and never connects.
	res = fedAPI(t, a, tokA, "POST", "/api/federation/federates", map[string]any{"name": "charlie", "address": fedListener(t, b), "ca": caB.pem(), "enabled": false})
	if res.Status != 201 || !strings.Contains(string(res.Body), `"enabled":false`) {
		t.Fatalf("A adds a disabled charlie: %d %s", res.Status, res.Body)
	}
	if s := fedStats(a, "charlie"); s.State != "disabled" || s.Source != "managed" || s.Connected || s.Links != 0 {
		t.Fatalf("disabled charlie: %+v", s)
	}
	// Trust can be set again (the link starts over with it).
	if res := fedAPI(t, a, tokA, "PUT", "/api/federation/federates/bravo/trust", map[string]any{"ca": "junk"}); res.Status != 400 {
		t.Fatalf("junk trust: %d %s", res.Status, res.Body)
	}

	// A removes B: the link ends on both sides; nothing more crosses.
	if res := fedAPI(t, a, tokA, "DELETE", "/api/federation/federates/bravo", nil); res.Status != 200 {
		t.Fatalf("remove bravo: %d %s", res.Status, res.Body)
	}
	waitFed(t, b, "alpha", func(s federation.FederateStats) bool { return !s.Connected })
	if s := fedStats(a, "bravo"); s.Name != "" {
		t.Fatalf("A still lists bravo: %+v", s)
	}
	if err := cliA.Send(takclient.SA("ALPHA-M2", "ALPHA2", 5, 6)); err != nil {
		t.Fatal(err)
	}
	if n := quietCount(cliB, func(e *cot.Event) bool { return e.UID == "ALPHA-M2" }); n != 0 {
		t.Fatalf("B's client got %d positions after the federate was removed", n)
	}
	if res := fedAPI(t, a, tokA, "DELETE", "/api/federation/federates/bravo", nil); res.Status != 404 {
		t.Fatalf("remove bravo again: %d %s", res.Status, res.Body)
	}

	// The command line's way (another process's write to the database):
	// the running server picks it up by itself.
	ctx, log := context.Background(), slog.New(slog.DiscardHandler)
	if err := admin.FederateAdd(ctx, a.Cfg, log, admin.Federate{Name: "bravo-cli", Address: fedListener(t, b), Enabled: true}, caB.trust()); err != nil {
		t.Fatal(err)
	}
	waitFed(t, a, "bravo-cli", func(s federation.FederateStats) bool { return s.Connected })
	if _, err := cliB.WaitFor(func(e *cot.Event) bool { return e.UID == "ALPHA-M2" }, fedWait); err != nil {
		t.Fatalf("B's client did not get A's position over the link the command line made: %v", err)
	}
	if err := admin.FederateRemove(ctx, a.Cfg, log, "bravo-cli"); err != nil {
		t.Fatal(err)
	}
	waitFed(t, b, "alpha", func(s federation.FederateStats) bool { return !s.Connected })
}
