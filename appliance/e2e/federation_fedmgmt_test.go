package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"outpost/appliance/admin"
	"outpost/appliance/apptest"
	"outpost/appliance/config"
	"outpost/appliance/cot"
	"outpost/appliance/federation"
	"outpost/appliance/federation/fedproto"
	"outpost/appliance/store"
	"outpost/appliance/takclient"
)

// startManagedOnly starts an Outpost whose federation has no
// federationTrust: its identity is a certificate of ca, and only managed
// federates can be trusted.
func startManagedOnly(t testing.TB, ca *fedCA, name string) (*apptest.App, tls.Certificate) {
	t.Helper()
	certFile, keyFile, pair := ca.issue(t, name)
	return apptest.Start(t, func(c *config.Config) {
		c.FederationPort, c.FederationCert, c.FederationKey, c.FederationName = 0, certFile, keyFile, name
	}), pair
}

// fedView is GET /api/federation's answer.
type fedView struct {
	Enabled  bool `json:"enabled"`
	Identity struct {
		Name, ServerID, Subject, Fingerprint, Issuer string
	} `json:"identity"`
	Listening   string                     `json:"listening"`
	ListenError string                     `json:"listenError"`
	Federates   []federation.FederateStats `json:"federates"`
}

func getFedView(t *testing.T, a *apptest.App, token string) fedView {
	t.Helper()
	res := fedAPI(t, a, token, "GET", "/api/federation", nil)
	if res.Status != 200 {
		t.Fatalf("GET /api/federation: %d %s", res.Status, res.Body)
	}
	var v fedView
	res.JSON(t, &v)
	return v
}

// waitListener waits until a's federation listener is open (want) or
// closed.
func waitListener(t *testing.T, a *apptest.App, want bool) {
	t.Helper()
	deadline := time.Now().Add(fedWait)
	for {
		_, on := a.Addrs()[federation.ListenerName]
		if on == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("federation listener open %v, want %v", on, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func fingerprintOf(t testing.TB, pair tls.Certificate) string {
	t.Helper()
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return federation.Fingerprint(leaf.Raw)
}

// TestFederationManagedOnly: two Outposts without federationTrust. Neither
// listens until a managed federate is trusted; GET /api/federation shows
// each one's identity (what the other side pins). B lets A in (inbound,
// pinned), A connects to B (pinned, its own back-off): positions cross.
// Every bad PATCH is refused and changes nothing; disabling ends the link
// and enabling brings it back; a wrong pin is refused at the handshake on
// either side; removing the last federate closes the listener.
func TestFederationManagedOnly(t *testing.T) {
	caA, caB := newFedCA(t, "Alpha Federation CA"), newFedCA(t, "Bravo Federation CA")
	a, pairA := startManagedOnly(t, caA, "alpha-server")
	b, pairB := startManagedOnly(t, caB, "bravo-server")
	tokA, tokB := adminToken(t, a), adminToken(t, b)
	fpA, fpB := fingerprintOf(t, pairA), fingerprintOf(t, pairB)

	// Nothing trusted: no listener, and the API says so and shows the identity.
	waitListener(t, b, false)
	vb := getFedView(t, b, tokB)
	if !vb.Enabled || vb.Listening != "" || vb.Identity.Name != "bravo-server" || vb.Identity.Fingerprint != fpB ||
		!strings.HasPrefix(vb.Identity.ServerID, "outpost-") || !strings.Contains(vb.Identity.Subject, "bravo-server") ||
		!strings.Contains(vb.Identity.Issuer, "Bravo Federation CA") || len(vb.Federates) != 0 {
		t.Fatalf("B before any federate: %+v", vb)
	}

	// B lets A in, pinned to A's certificate: B's listener opens.
	res := fedAPI(t, b, tokB, "POST", "/api/federation/federates", map[string]any{"name": "alpha", "ca": caA.pem(), "pin": strings.ToLower(strings.ReplaceAll(fpA, ":", ""))})
	if res.Status != 201 || !strings.Contains(string(res.Body), `"pin":"`+fpA+`"`) {
		t.Fatalf("B adds alpha: %d %s", res.Status, res.Body)
	}
	waitListener(t, b, true)
	if vb = getFedView(t, b, tokB); vb.Listening != fedListener(t, b) {
		t.Fatalf("B's listener: %+v", vb)
	}
	cliA, cliB := a.DialTCP(t), b.DialTCP(t)
	if err := cliA.Send(takclient.SA("ALPHA-1", "ALPHA", 1, 2)); err != nil {
		t.Fatal(err)
	}
	res = fedAPI(t, a, tokA, "POST", "/api/federation/federates", map[string]any{"name": "bravo", "address": fedListener(t, b), "ca": caB.pem(),
		"pin": fpB, "backoffMin": "200ms", "backoffMax": "2s"})
	if res.Status != 201 || !strings.Contains(string(res.Body), `"backoffMin":"200ms"`) || !strings.Contains(string(res.Body), `"backoffMax":"2s"`) {
		t.Fatalf("A adds bravo: %d %s", res.Status, res.Body)
	}
	if _, err := cliB.WaitFor(func(e *cot.Event) bool { return e.UID == "ALPHA-1" }, fedWait); err != nil {
		t.Fatalf("B's client did not get A's position: %v", err)
	}
	waitFed(t, b, "alpha", func(s federation.FederateStats) bool { return s.Connected && s.Source == "managed" })

	// Bad PATCHes: each refused, nothing changed.
	user, err := a.Store().Accounts().CreateUser(context.Background(), store.UserInput{Name: "plain-user", Password: "a long enough password 1"})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := a.Store().Federates().List(context.Background())
	for _, tc := range []struct {
		what, path, token string
		body              any
		status            int
		msg               string
	}{
		{"nothing to change", "/api/federation/federates/bravo", tokA, map[string]any{}, 400, "nothing to change"},
		{"bad pin", "/api/federation/federates/bravo", tokA, map[string]any{"pin": "12:34"}, 400, "pin"},
		{"bad back-off", "/api/federation/federates/bravo", tokA, map[string]any{"backoffMin": "soon"}, 400, "backoffMin"},
		{"back-off too short", "/api/federation/federates/bravo", tokA, map[string]any{"backoffMin": "1ms"}, 400, "backoffMin"},
		{"max below min", "/api/federation/federates/bravo", tokA, map[string]any{"backoffMin": "10s", "backoffMax": "1s"}, 400, "backoffMax"},
		{"bad address", "/api/federation/federates/bravo", tokA, map[string]any{"address": "nowhere", "enabled": false}, 400, "address"},
		{"enabled not a bool", "/api/federation/federates/bravo", tokA, map[string]any{"enabled": "no"}, 400, ""},
		{"not JSON", "/api/federation/federates/bravo", tokA, "{", 400, ""},
		{"too large", "/api/federation/federates/bravo", tokA, map[string]any{"address": strings.Repeat("a", 100<<10)}, 413, ""},
		{"nobody", "/api/federation/federates/nobody", tokA, map[string]any{"enabled": false}, 404, "no federate"},
		{"not an admin", "/api/federation/federates/bravo", user.Token, map[string]any{"enabled": false}, 403, "administrator"},
		{"no token", "/api/federation/federates/bravo", "", map[string]any{"enabled": false}, 401, ""},
		{"bad pin on add", "/api/federation/federates", tokA, map[string]any{"name": "x", "pin": "nope"}, 400, "pin"},
		{"bad back-off on add", "/api/federation/federates", tokA, map[string]any{"name": "x", "backoffMax": "48h"}, 400, "backoffMax"},
	} {
		method := "PATCH"
		if tc.path == "/api/federation/federates" {
			method = "POST"
		}
		res := fedAPI(t, a, tc.token, method, tc.path, tc.body)
		if res.Status != tc.status || !strings.Contains(res.Message(), tc.msg) {
			t.Errorf("%s: %d %s; want %d %q", tc.what, res.Status, res.Body, tc.status, tc.msg)
		}
	}
	if after, _ := a.Store().Federates().List(context.Background()); len(after) != 1 || after[0] != before[0] {
		t.Fatalf("refused requests changed the federates: %+v, was %+v", after, before)
	}
	if s := fedStats(a, "bravo"); !s.Connected {
		t.Fatalf("refused requests touched the link: %+v", s)
	}

	// Disabled: the link ends on both sides, the federate stays listed.
	res = fedAPI(t, a, tokA, "PATCH", "/api/federation/federates/bravo", map[string]any{"enabled": false})
	if res.Status != 200 || !strings.Contains(string(res.Body), `"enabled":false`) || !strings.Contains(string(res.Body), "Bravo Federation CA") {
		t.Fatalf("disable bravo: %d %s", res.Status, res.Body)
	}
	waitFed(t, b, "alpha", func(s federation.FederateStats) bool { return !s.Connected })
	if s := fedStats(a, "bravo"); s.State != "disabled" || s.Connected {
		t.Fatalf("disabled bravo: %+v", s)
	}
	if err := cliA.Send(takclient.SA("ALPHA-2", "ALPHA", 3, 4)); err != nil {
		t.Fatal(err)
	}
	if n := quietCount(cliB, func(e *cot.Event) bool { return e.UID == "ALPHA-2" }); n != 0 {
		t.Fatalf("B got %d positions over a disabled federate", n)
	}
	// Enabled again on the command line's way (another process's write).
	ctx, log := context.Background(), slog.New(slog.DiscardHandler)
	on := true
	if err := admin.FederateUpdate(ctx, a.Cfg, log, "bravo", admin.FederatePatch{Enabled: &on}); err != nil {
		t.Fatal(err)
	}
	waitFed(t, a, "bravo", func(s federation.FederateStats) bool { return s.Connected })
	if _, err := cliB.WaitFor(func(e *cot.Event) bool { return e.UID == "ALPHA-2" }, fedWait); err != nil {
		t.Fatalf("B's client did not get the position sent while bravo was disabled (the link's replay of latest positions): %v", err)
	}

	// A pin that is not B's certificate: A refuses B at the handshake.
	wrong := fingerprintOf(t, pairA)
	res = fedAPI(t, a, tokA, "PATCH", "/api/federation/federates/bravo", map[string]any{"pin": wrong})
	if res.Status != 200 {
		t.Fatalf("pin bravo wrongly: %d %s", res.Status, res.Body)
	}
	s := waitFed(t, a, "bravo", func(s federation.FederateStats) bool {
		return !s.Connected && strings.Contains(s.LastError, "not the pinned one")
	})
	if s.Reconnects == 0 {
		// The 200 ms back-off lets it try more than once within the wait.
		waitFed(t, a, "bravo", func(s federation.FederateStats) bool { return s.Reconnects > 0 })
	}
	// Back to B's pin; then B pins alpha wrongly: B refuses A.
	if res := fedAPI(t, a, tokA, "PATCH", "/api/federation/federates/bravo", map[string]any{"pin": ""}); res.Status != 200 || !strings.Contains(string(res.Body), `"pin":""`) {
		t.Fatalf("unpin bravo: %d %s", res.Status, res.Body)
	}
	waitFed(t, a, "bravo", func(s federation.FederateStats) bool { return s.Connected })
	if res := fedAPI(t, b, tokB, "PATCH", "/api/federation/federates/alpha", map[string]any{"pin": fpB}); res.Status != 200 {
		t.Fatalf("pin alpha wrongly: %d %s", res.Status, res.Body)
	}
	waitFed(t, a, "bravo", func(s federation.FederateStats) bool {
		return !s.Connected && strings.Contains(s.LastError, "certificate")
	})
	if l := fedStats(b, "alpha"); l.Connected {
		t.Fatalf("B let in a certificate that is not alpha's pinned one: %+v", l)
	}

	// B's last federate removed: its listener closes.
	if res := fedAPI(t, b, tokB, "DELETE", "/api/federation/federates/alpha", nil); res.Status != 200 {
		t.Fatalf("remove alpha: %d %s", res.Status, res.Body)
	}
	waitListener(t, b, false)
	if vb = getFedView(t, b, tokB); vb.Listening != "" {
		t.Fatalf("B still listening: %+v", vb)
	}
}

// TestFederationRevoked: federation certificates issued by this server's
// own CA are checked against its revocation list. B trusts its own CA for
// two managed federates, each pinned to its certificate, and both link.
// Revoked, one loses its link at once, a call on its open connection is
// refused and a new handshake fails; the other keeps its link and still
// gets in.
func TestFederationRevoked(t *testing.T) {
	b := apptest.Start(t, func(c *config.Config) { c.FederationPort = 0 })
	tokB := adminToken(t, b)
	bad, good := b.Issue(t, "fed-revoked"), b.Issue(t, "fed-good")
	for name, cert := range map[string]*tls.Certificate{"revoked": bad, "good": good} {
		res := fedAPI(t, b, tokB, "POST", "/api/federation/federates", map[string]any{"name": name, "ca": string(b.Authority().CAPEM()), "pin": fingerprintOf(t, *cert)})
		if res.Status != 201 {
			t.Fatalf("B adds %s with its own CA: %d %s", name, res.Status, res.Body)
		}
	}
	waitListener(t, b, true)

	dial := func(cert *tls.Certificate) (fedproto.FederatedChannelClient, func()) {
		return fedClient(t, fedListener(t, b), *cert)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sub := &fedproto.Subscription{Identity: &fedproto.Identity{Name: "peer", ServerId: "peer-id"}}
	cli, done := dial(bad)
	defer done()
	in, err := cli.ClientEventStream(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	cliGood, doneGood := dial(good)
	defer doneGood()
	if _, err := cliGood.ClientEventStream(ctx, sub); err != nil {
		t.Fatal(err)
	}
	waitFed(t, b, "revoked", func(s federation.FederateStats) bool { return s.Connected })
	waitFed(t, b, "good", func(s federation.FederateStats) bool { return s.Connected })

	leaf, err := x509.ParseCertificate(bad.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Authority().Revoke(leaf.SerialNumber, "key_compromise"); err != nil {
		t.Fatal(err)
	}
	// Its link ends: the stream it had open ends. The other link stays.
	for {
		if _, err := in.Recv(); err != nil {
			break
		}
	}
	waitFed(t, b, "revoked", func(s federation.FederateStats) bool { return !s.Connected })
	if s := fedStats(b, "good"); !s.Connected || s.Links != 1 {
		t.Fatalf("the good federate's link was touched by another's revocation: %+v", s)
	}
	// A call on the connection made before the revocation is refused.
	// (or, had the connection gone, a new handshake is).
	st, err := cli.ClientEventStream(ctx, &fedproto.Subscription{Identity: &fedproto.Identity{Name: "revoked", ServerId: "revoked-id"}})
	if err == nil {
		_, err = st.Recv()
	}
	if status.Code(err) != codes.PermissionDenied && !strings.Contains(fmtErr(err), "certificate") {
		t.Fatalf("a call of the revoked federate's open connection: %v", err)
	}
	// A new handshake with the revoked certificate fails; the good one gets in.
	try := func(cert *tls.Certificate) error {
		conn, err := tls.Dial("tcp", fedListener(t, b), &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{*cert}, NextProtos: []string{"h2"}})
		if err != nil {
			return err
		}
		defer conn.Close()
		conn.SetReadDeadline(time.Now().Add(fedWait))
		_, err = conn.Read(make([]byte, 1))
		return err
	}
	if err := try(bad); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("the revoked certificate: want refused at the handshake, got %v", err)
	}
	if err := try(good); err != nil {
		t.Fatalf("a good certificate of B's CA refused: %v", err)
	}
	if id, err := cliGood.GetIdentity(ctx, &fedproto.Empty{}); err != nil || id.GetServerId() == "" {
		t.Fatalf("the good federate's getIdentity: %v %v", id, err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
