package e2e

import (
	"context"
	"strings"
	"testing"

	"outpost/appliance/cot"
	"outpost/appliance/federation"
	"outpost/appliance/takclient"
)

// TestFederationManagedProtocol: B adds A as a managed federate speaking
// federation v1, at A's v1 listener; positions cross both ways. A bad
// protocol is refused and changes nothing. Changed to v2 with A's v2
// listener, B's link starts again (over gRPC: A's v2 listener speaks
// nothing else) and positions cross again; the protocol alone changed
// back to v1 ends the link (docs/federation.md "Federates one by one").
func TestFederationManagedProtocol(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	a := startFederatedV1(t, ca, "alpha-server", "")
	b, _ := startManagedOnly(t, ca, "bravo-server")
	tokB := adminToken(t, b)
	cliA, cliB := a.DialTCP(t), b.DialTCP(t)

	res := fedAPI(t, b, tokB, "POST", "/api/federation/federates", map[string]any{"name": "alpha", "address": fedV1Listener(t, a),
		"ca": ca.pem(), "protocol": "v1", "backoffMin": "200ms", "backoffMax": "1s"})
	if res.Status != 201 || !strings.Contains(string(res.Body), `"protocol":"v1"`) {
		t.Fatalf("B adds alpha over v1: %d %s", res.Status, res.Body)
	}
	waitFed(t, b, "alpha", func(s federation.FederateStats) bool { return s.Connected })
	crosses := func(uid string, lat float64) {
		t.Helper()
		if err := cliA.Send(takclient.SA("ALPHA-"+uid, "ALPHA", lat, 1)); err != nil {
			t.Fatal(err)
		}
		if _, err := cliB.WaitFor(func(e *cot.Event) bool { return e.UID == "ALPHA-"+uid && e.Point.Lat == lat }, fedWait); err != nil {
			t.Fatalf("B's client did not get A's position %s: %v", uid, err)
		}
		if err := cliB.Send(takclient.SA("BRAVO-"+uid, "BRAVO", lat, 2)); err != nil {
			t.Fatal(err)
		}
		if _, err := cliA.WaitFor(func(e *cot.Event) bool { return e.UID == "BRAVO-"+uid && e.Point.Lat == lat }, fedWait); err != nil {
			t.Fatalf("A's client did not get B's position %s: %v", uid, err)
		}
	}
	crosses("1", 11)

	// A protocol other than v1 or v2: refused, nothing changed, the link kept.
	before, err := b.Store().Federates().List(context.Background())
	if err != nil || len(before) != 1 || before[0].Protocol != "v1" {
		t.Fatalf("stored: %+v %v", before, err)
	}
	for _, tc := range []struct {
		what, method, path string
		body               any
	}{
		{"v3", "PATCH", "/api/federation/federates/alpha", map[string]any{"protocol": "v3"}},
		{"upper case", "PATCH", "/api/federation/federates/alpha", map[string]any{"protocol": "V2", "address": fedListener(t, a)}},
		{"not a string", "PATCH", "/api/federation/federates/alpha", map[string]any{"protocol": 2}},
		{"on add", "POST", "/api/federation/federates", map[string]any{"name": "charlie", "protocol": "grpc"}},
	} {
		res := fedAPI(t, b, tokB, tc.method, tc.path, tc.body)
		if res.Status != 400 || (tc.what != "not a string" && !strings.Contains(res.Message(), "protocol")) {
			t.Errorf("%s: %d %s; want 400 naming the protocol", tc.what, res.Status, res.Body)
		}
	}
	if after, _ := b.Store().Federates().List(context.Background()); len(after) != 1 || after[0] != before[0] {
		t.Fatalf("refused requests changed the federates: %+v, was %+v", after, before)
	}
	if s := fedStats(b, "alpha"); !s.Connected || s.Links != 1 {
		t.Fatalf("refused requests touched the link: %+v", s)
	}

	// To v2, at A's v2 listener: the link starts again over gRPC.
	res = fedAPI(t, b, tokB, "PATCH", "/api/federation/federates/alpha", map[string]any{"protocol": "v2", "address": fedListener(t, a)})
	if res.Status != 200 || !strings.Contains(string(res.Body), `"protocol":"v2"`) {
		t.Fatalf("alpha to v2: %d %s", res.Status, res.Body)
	}
	waitFed(t, b, "alpha", func(s federation.FederateStats) bool {
		return s.Connected && s.Links >= 2 && s.Address == fedListener(t, a)
	})
	crosses("2", 22)
	res = fedAPI(t, b, tokB, "GET", "/api/federation/federates", nil)
	if res.Status != 200 || !strings.Contains(string(res.Body), `"protocol":"v2"`) {
		t.Fatalf("listed: %d %s", res.Status, res.Body)
	}
	// The protocol alone changed back to v1, the address still A's v2
	// listener: the link ends and cannot stay up (v1 to a gRPC listener:
	// the handshake, or the first frame, fails).
	if res := fedAPI(t, b, tokB, "PATCH", "/api/federation/federates/alpha", map[string]any{"protocol": "v1"}); res.Status != 200 {
		t.Fatalf("alpha back to v1: %d %s", res.Status, res.Body)
	}
	waitFed(t, b, "alpha", func(s federation.FederateStats) bool {
		return !s.Connected && strings.Contains(s.LastError, "federation v1")
	})
}
