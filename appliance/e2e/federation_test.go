package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"outpost/appliance/apptest"
	"outpost/appliance/config"
	"outpost/appliance/cot"
	"outpost/appliance/federation"
	"outpost/appliance/federation/fedproto"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// fedWait bounds every wait for something that must cross a federation
// link (links come up with back-off): generous, nothing here measures time.
const fedWait = 30 * time.Second

// fedQuiet is the window over which nothing more may arrive once what is
// expected has: a copy would show in it.
const fedQuiet = 2 * time.Second

// fedCA is a federation certificate authority made for a test: it issues
// each server's federation certificate, and its file is the trust of every
// server.
type fedCA struct {
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newFedCA(t testing.TB, name string) *fedCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &fedCA{dir: t.TempDir(), cert: cert, key: key}
	writePEM(t, ca.trust(), "CERTIFICATE", der)
	return ca
}

func (ca *fedCA) trust() string { return filepath.Join(ca.dir, "trust.pem") }

// issue makes name's federation certificate (server and client use) and
// returns its files.
func (ca *fedCA) issue(t testing.TB, name string) (certFile, keyFile string, pair tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, DNSNames: []string{name},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(ca.dir, name+".pem"), filepath.Join(ca.dir, name+".key")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", kder)
	pair, err = tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pair
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startFederated starts an Outpost named name with federation listening at
// at (a fedHome; "" for any port of 127.0.0.1), connecting to the federates
// given (name=host:port).
func startFederated(t testing.TB, ca *fedCA, name string, at string, federates ...string) *apptest.App {
	t.Helper()
	certFile, keyFile, _ := ca.issue(t, name)
	return apptest.Start(t, func(c *config.Config) {
		c.FederationPort, c.FederationTrust = 0, ca.trust()
		listenAt(t, c, at, &c.FederationPort)
		c.FederationCert, c.FederationKey = certFile, keyFile
		c.FederationName = name
		c.Federates = federates
	})
}

// fedHome is where a federation listener a test must name before its
// server starts (or starts again) will listen: the federation port on an
// address of the test's own, so no other socket can hold it.
func fedHome(t testing.TB) string { return net.JoinHostPort(testkit.OwnLoopback(t), "9001") }

// listenAt binds the appliance c configures to at's address, with *port at
// at's port; at "" leaves both alone (127.0.0.1, port 0).
func listenAt(t testing.TB, c *config.Config, at string, port *int) {
	t.Helper()
	if at == "" {
		return
	}
	host, p, err := net.SplitHostPort(at)
	if err != nil {
		t.Fatal(err)
	}
	c.Bind = host
	if *port, err = strconv.Atoi(p); err != nil {
		t.Fatal(err)
	}
}

// fedListener is the bound address of a's federation listener.
func fedListener(t testing.TB, a *apptest.App) string { return a.Addr(t, federation.ListenerName) }

// fedStats returns the counters of federate name on a.
func fedStats(a *apptest.App, name string) federation.FederateStats {
	for _, s := range a.FederationStats() {
		if s.Name == name {
			return s
		}
	}
	return federation.FederateStats{}
}

// quietCount reads c for fedQuiet and counts the events match accepts.
func quietCount(c *takclient.Client, match func(*cot.Event) bool) int {
	n := 0
	deadline := time.Now().Add(fedQuiet)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return n
		}
		ev, err := c.Next(left)
		if err != nil {
			return n
		}
		if match(ev) {
			n++
		}
	}
}

// TestFederationTwoOutposts: Outpost A connects to Outpost B over
// federation v2 (mutual TLS, each trusting the federation CA). A TCP client
// on A and a TLS client on B see each other's position, the one sent
// before the link was up included (the latest-SA replay); chat addressed
// to a callsign on the other server reaches that client only; /metrics-
// level counters show the events in and out.
func TestFederationTwoOutposts(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	b := startFederated(t, ca, "bravo-server", "")
	// A's client speaks before A even exists as a federate of B.
	a := startFederated(t, ca, "alpha-server", "", "B="+fedListener(t, b))
	ev, chat := twoOutpostsTraffic(t, a, b, "")
	if ev.Detail.Track == nil || ev.Detail.Track.Course != 12.5 {
		t.Fatalf("B's position arrived changed: %+v detail %s", ev, ev.Detail.XML)
	}
	if chat.Detail.Marti != nil {
		t.Fatalf("chat arrived as %s", chat.Detail.XML)
	}
	// The management API shows the same to an administrator.
	res := testkit.Do(t, nil, "GET", a.URL(t, netx.ListenerREST, "/api/federation"), nil, "Authorization", "Bearer "+adminToken(t, a))
	var view struct {
		Enabled   bool                       `json:"enabled"`
		Federates []federation.FederateStats `json:"federates"`
	}
	res.JSON(t, &view)
	if res.Status != 200 || !view.Enabled || len(view.Federates) != 1 || view.Federates[0].Name != "B" || !view.Federates[0].Connected || view.Federates[0].EventsOut == 0 {
		t.Fatalf("GET /api/federation: %d %s", res.Status, res.Body)
	}
	// Prometheus has the same counters.
	res = testkit.Do(t, nil, "GET", a.URL(t, netx.ListenerREST, "/metrics"), nil)
	for _, want := range []string{`outpost_federate_connected{federate="B"} 1`, `outpost_federate_events_total{direction="out",federate="B"}`,
		`outpost_federate_dropped_total{federate="B",reason="duplicate"} 0`, `outpost_cot_refused_events_total{cause="uid_taken",listener="federation"} 0`} {
		if res.Status != 200 || !strings.Contains(string(res.Body), want) {
			t.Fatalf("/metrics lacks %s (status %d)", want, res.Status)
		}
	}
	// The console's server page lists the listener, measured on.
	res = testkit.Do(t, nil, "GET", a.URL(t, netx.ListenerREST, "/api/server"), nil, "Authorization", "Bearer "+adminToken(t, a))
	var server struct {
		Services []struct {
			Name    string `json:"name"`
			Enabled bool   `json:"enabled"`
			Status  string `json:"status"`
		} `json:"services"`
	}
	res.JSON(t, &server)
	found := false
	for _, s := range server.Services {
		found = found || (s.Name == "Federation_server_service" && s.Enabled && s.Status == "on")
	}
	if !found {
		t.Fatalf("GET /api/server lacks the federation service: %s", res.Body)
	}
	if res := testkit.Do(t, nil, "GET", a.URL(t, netx.ListenerREST, "/api/federation"), nil); res.Status != 401 {
		t.Fatalf("GET /api/federation without a token: %d %s", res.Status, res.Body)
	}
}

// With federationPort -1 federation is off: no listener, and the API says
// so. Without federationTrust and without managed federates nothing
// listens either (TestFederationManagedOnly: the listener opens with the
// first managed federate).
func TestFederationOff(t *testing.T) {
	off := apptest.Start(t, func(c *config.Config) { c.FederationPort = -1 })
	res := testkit.Do(t, nil, "GET", off.URL(t, netx.ListenerREST, "/api/federation"), nil, "Authorization", "Bearer "+adminToken(t, off))
	if res.Status != 200 || strings.TrimSpace(string(res.Body)) != `{"enabled":false,"federates":[]}` {
		t.Fatalf("GET /api/federation: %d %s", res.Status, res.Body)
	}
	a := apptest.Start(t, nil)
	if _, on := a.Addrs()[federation.ListenerName]; on {
		t.Fatal("a federation listener without federationTrust or a managed federate")
	}
	res = testkit.Do(t, nil, "GET", a.URL(t, netx.ListenerREST, "/api/federation"), nil, "Authorization", "Bearer "+adminToken(t, a))
	var v struct {
		Enabled   bool   `json:"enabled"`
		Listening string `json:"listening"`
		Identity  struct {
			Fingerprint string `json:"fingerprint"`
		} `json:"identity"`
		Federates []any `json:"federates"`
	}
	res.JSON(t, &v)
	if res.Status != 200 || !v.Enabled || v.Listening != "" || len(v.Identity.Fingerprint) != 95 || len(v.Federates) != 0 {
		t.Fatalf("GET /api/federation: %d %s", res.Status, res.Body)
	}
}

// TestFederationLoopOfThree: A connects to B, B to C, C to A. A position
// from A reaches the clients of B and C exactly once, and never comes back
// to A's sender; copies over the second path are dropped and counted.
func TestFederationLoopOfThree(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	pA := fedHome(t) // C connects to A before A exists
	c := startFederated(t, ca, "charlie", "", "A="+pA)
	b := startFederated(t, ca, "bravo", "", "C="+fedListener(t, c))
	a := startFederated(t, ca, "alpha", pA, "B="+fedListener(t, b))
	for _, x := range []struct {
		app  *apptest.App
		peer string
	}{{a, "B"}, {b, "C"}, {c, "A"}} {
		testkit.WaitForWithin(t, fedWait, "link to "+x.peer, func() bool { return fedStats(x.app, x.peer).Connected })
	}
	ca1, cb, cc := a.DialTCP(t), b.DialTCP(t), c.DialTCP(t)
	// Each client is seen by the others first (their links carry traffic).
	for i, cl := range []*takclient.Client{ca1, cb, cc} {
		if err := cl.Send(takclient.SA("LOOP-"+strconv.Itoa(i), "L"+strconv.Itoa(i), float64(i), 0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := ca1.Send(takclient.SA("LOOP-0", "L0", 50, 50)); err != nil {
		t.Fatal(err)
	}
	moved := func(e *cot.Event) bool { return e.UID == "LOOP-0" && e.Point.Lat == 50 }
	for name, cl := range map[string]*takclient.Client{"B": cb, "C": cc} {
		if _, err := cl.WaitFor(moved, fedWait); err != nil {
			t.Fatalf("%s's client did not get A's position: %v", name, err)
		}
		if n := quietCount(cl, moved); n != 0 {
			t.Fatalf("%s's client got A's position %d more times", name, n+1)
		}
	}
	if n := quietCount(ca1, func(e *cot.Event) bool { return e.UID == "LOOP-0" }); n != 0 {
		t.Fatalf("A's client got its own position back %d times", n)
	}
	var dropped uint64
	for _, s := range append(append(a.FederationStats(), b.FederationStats()...), c.FederationStats()...) {
		dropped += s.DroppedDuplicate + s.DroppedLoop
	}
	if dropped == 0 {
		t.Fatal("no copy was dropped in a loop of three")
	}
}

// TestFederationRefusesUntrusted: a federate whose certificate does not
// chain to the trusted CA, or that has none, is refused at the handshake.
func TestFederationRefusesUntrusted(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	b := startFederated(t, ca, "bravo", "")
	other := newFedCA(t, "Someone else")
	_, _, stranger := other.issue(t, "stranger")
	for name, certs := range map[string][]tls.Certificate{"untrusted": {stranger}, "none": nil} {
		conn, err := tls.Dial("tcp", fedListener(t, b), &tls.Config{InsecureSkipVerify: true, Certificates: certs, NextProtos: []string{"h2"}})
		if err == nil {
			// TLS 1.3: the server's verdict on the client arrives with its first read.
			conn.SetReadDeadline(time.Now().Add(fedWait))
			_, err = conn.Read(make([]byte, 1))
			conn.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("%s: want a certificate error at the handshake, got %v", name, err)
		}
	}
}

// TestFederationBadInput: a trusted federate (the test's own client of the
// generated code) sends malformed, oversized, hop-exhausted and looping
// events between good ones: each bad one is dropped and counted, and the
// link carries the good ones.
func TestFederationBadInput(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	b := startFederated(t, ca, "bravo", "")
	_, _, pair := ca.issue(t, "tester")
	cli, closeCli := fedClient(t, fedListener(t, b), pair)
	defer closeCli()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id, err := cli.GetIdentity(ctx, &fedproto.Empty{})
	if err != nil || id.GetServerId() == "" || id.GetName() != "bravo" {
		t.Fatalf("getIdentity: %v %v", id, err)
	}
	in, err := cli.ClientEventStream(ctx, &fedproto.Subscription{Identity: &fedproto.Identity{Name: "tester", ServerId: "tester-id"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := cli.ServerEventStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	geo := func(uid, other string) *fedproto.GeoEvent {
		return &fedproto.GeoEvent{Uid: uid, Type: "a-h-G", CoordSource: "h-g-i-g-o", SendTime: now, StartTime: now,
			StaleTime: now + 60_000, Lat: 1, Lon: 2, Hae: 3, Ce: 4, Le: 5, Other: other}
	}
	client := b.DialTCP(t)
	send := func(fe *fedproto.FederatedEvent) {
		t.Helper()
		if err := out.Send(fe); err != nil {
			t.Fatal(err)
		}
	}
	send(&fedproto.FederatedEvent{Event: geo("BAD-XML", "<detail><remarks>open</detail>")})
	send(&fedproto.FederatedEvent{Event: geo("BAD-OTHER", "<notdetail/>")})
	send(&fedproto.FederatedEvent{Event: geo("BIG", "<detail><remarks>"+strings.Repeat("x", 1<<20)+"</remarks></detail>")})
	send(&fedproto.FederatedEvent{Event: geo("HOPS", "<detail/>"), FederateHops: &fedproto.FederateHops{MaxHops: 2, CurrentHops: 3}})
	send(&fedproto.FederatedEvent{Event: geo("LOOP", "<detail/>"),
		FederateProvenance: []*fedproto.FederateProvenance{{FederationServerId: id.GetServerId()}}})
	send(&fedproto.FederatedEvent{Event: geo("GOOD", "<detail><remarks>fine</remarks></detail>")})
	send(&fedproto.FederatedEvent{Event: geo("GOOD", "<detail><remarks>fine</remarks></detail>")}) // a copy
	got, err := client.WaitFor(func(e *cot.Event) bool { return e.UID != "" && e.Type == "a-h-G" }, fedWait)
	if err != nil || got.UID != "GOOD" {
		t.Fatalf("first federated event on B: %v %v", got, err)
	}
	if n := quietCount(client, func(e *cot.Event) bool { return e.Type == "a-h-G" }); n != 0 {
		t.Fatalf("%d more federated events reached B's client", n)
	}
	st := fedStats(b, "tester")
	if st.DroppedMalformed != 2 || st.DroppedSize != 1 || st.DroppedHops != 1 || st.DroppedLoop != 1 || st.DroppedDuplicate != 1 || !st.Connected {
		t.Fatalf("counters %+v", st)
	}
	// The link is still up both ways: a client's position on B reaches the tester.
	if err := client.Send(takclient.SA("B-CLIENT", "BEE", 7, 8)); err != nil {
		t.Fatal(err)
	}
	for {
		fe, err := in.Recv()
		if err != nil {
			t.Fatalf("event stream from B ended: %v", err)
		}
		if fe.GetEvent().GetUid() == "B-CLIENT" {
			if len(fe.GetFederateProvenance()) != 1 || fe.GetFederateProvenance()[0].GetFederationServerId() != id.GetServerId() ||
				fe.GetFederateHops().GetCurrentHops() != 1 || !strings.HasPrefix(fe.GetEvent().GetOther(), "<detail>") ||
				fe.GetEvent().GetCourse() != 12.5 || strings.Contains(fe.GetEvent().GetOther(), "<track") {
				t.Fatalf("B sent %v", fe)
			}
			break
		}
	}
	// The tester goes and comes back: the link is down, then up again
	// (each of a link's two streams ending counts it down once).
	cancel()
	testkit.WaitForWithin(t, fedWait, "B to see the tester gone", func() bool { return !fedStats(b, "tester").Connected })
	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel2()
	if _, err := cli.ClientEventStream(ctx2, &fedproto.Subscription{Identity: &fedproto.Identity{Name: "tester"}}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitForWithin(t, fedWait, "B to see the tester back", func() bool { return fedStats(b, "tester").Connected })
}

// TestFederationReconnects: A connects to B's address before B runs, and
// again after B went away and another server took its place: the link
// comes back each time (back-off), counted, and events cross on the new
// link, the replay bringing what was sent while it was down.
func TestFederationReconnects(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	pB := fedHome(t)
	a, local := linkedThenDropped(t, ca, "B1-USER", "B="+pB, func() *apptest.App { return startFederated(t, ca, "bravo", pB) })
	// While B is away, A's client moves.
	if err := local.Send(takclient.SA("A-USER", "ALPHA", 5, 5)); err != nil {
		t.Fatal(err)
	}
	b2 := startFederated(t, ca, "bravo", pB)
	c2 := b2.DialTCP(t)
	if _, err := c2.WaitFor(func(e *cot.Event) bool { return e.UID == "A-USER" && e.Point.Lat == 5 }, fedWait); err != nil {
		t.Fatalf("the new B did not get A's position (replay on the new link): %v", err)
	}
	if st := fedStats(a, "B"); !st.Connected || st.Reconnects < 1 || st.Links != 2 {
		t.Fatalf("A's counters of B: %+v", st)
	}
}

// TestFederationChain: A–B–C in a line (A connects to B, C connects to B).
// A's client and C's client see each other's position through B, and a
// chat from A addressed to C's client's callsign crosses both links to
// reach that client alone; the hop count grows on the way.
func TestFederationChain(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	b := startFederated(t, ca, "bravo", "")
	a := startFederated(t, ca, "alpha", "", "B="+fedListener(t, b))
	c := startFederated(t, ca, "charlie", "", "B="+fedListener(t, b))
	ca1, cc, cb := a.DialTCP(t), c.DialTCP(t), b.DialTCP(t)
	if err := ca1.Send(takclient.SA("CHAIN-A", "ALPHA", 1, 1)); err != nil {
		t.Fatal(err)
	}
	if err := cc.Send(takclient.SA("CHAIN-C", "CHARLIE", 3, 3)); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.WaitFor(func(e *cot.Event) bool { return e.UID == "CHAIN-A" }, fedWait); err != nil {
		t.Fatalf("C's client did not get A's position through B: %v", err)
	}
	if _, err := ca1.WaitFor(func(e *cot.Event) bool { return e.UID == "CHAIN-C" }, fedWait); err != nil {
		t.Fatalf("A's client did not get C's position through B: %v", err)
	}
	if _, err := cb.WaitFor(func(e *cot.Event) bool { return e.UID == "CHAIN-C" }, fedWait); err != nil {
		t.Fatalf("B's client did not get C's position: %v", err)
	}
	if err := ca1.Send(takclient.Chat("GeoChat.CHAIN-A.CHARLIE.1", "two hops", cot.Dest{Callsign: "CHARLIE"})); err != nil {
		t.Fatal(err)
	}
	chat, err := cc.WaitFor(func(e *cot.Event) bool { return e.Type == "b-t-f" }, fedWait)
	if err != nil || !strings.Contains(string(chat.Detail.XML), "two hops") {
		t.Fatalf("chat to CHARLIE over two links: %v %v", chat, err)
	}
	if n := quietCount(cb, func(e *cot.Event) bool { return e.Type == "b-t-f" }); n != 0 {
		t.Fatalf("B's client got %d chats addressed to CHARLIE", n)
	}
	if st := fedStats(c, "B"); st.DroppedDuplicate != 0 || st.DroppedLoop != 0 {
		t.Fatalf("C dropped copies or loops in a chain: %+v", st)
	}
}

// TestFederationAllow: with federationAllow, a certificate of the trusted
// CA gets in only when its common name or fingerprint is listed; others are
// refused at the handshake.
func TestFederationAllow(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	_, _, byName := ca.issue(t, "alpha")
	_, _, byPrint := ca.issue(t, "partner")
	_, _, user := ca.issue(t, "some-atak-user")
	certFile, keyFile, _ := ca.issue(t, "bravo")
	leaf, err := x509.ParseCertificate(byPrint.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	b := apptest.Start(t, func(c *config.Config) {
		c.FederationPort, c.FederationTrust, c.FederationCert, c.FederationKey = 0, ca.trust(), certFile, keyFile
		c.FederationAllow = []string{"alpha", strings.ToLower(federation.Fingerprint(leaf.Raw))}
	})
	try := func(cert tls.Certificate) error {
		conn, err := tls.Dial("tcp", fedListener(t, b), &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}})
		if err != nil {
			return err
		}
		defer conn.Close()
		// TLS 1.3: the server's verdict arrives with the first read; an
		// admitted client reads the server's HTTP/2 settings.
		conn.SetReadDeadline(time.Now().Add(fedWait))
		_, err = conn.Read(make([]byte, 1))
		return err
	}
	for name, cert := range map[string]tls.Certificate{"by name": byName, "by fingerprint": byPrint} {
		if err := try(cert); err != nil {
			t.Errorf("%s: refused: %v", name, err)
		}
	}
	if err := try(user); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a trusted CA's other certificate: want refused at the handshake, got %v", err)
	}
}

// linkedThenDropped starts A connecting to the federate federate, and B
// with start: a position of uid from B's client reaches A's client; then B
// closes, its remote user departs at A and A sees the link down. It
// returns A and A's client.
func linkedThenDropped(t *testing.T, ca *fedCA, uid, federate string, start func() *apptest.App) (*apptest.App, *takclient.Client) {
	t.Helper()
	a := startFederated(t, ca, "alpha", "", federate)
	local := a.DialTCP(t)
	b := start()
	if err := b.DialTCP(t).Send(takclient.SA(uid, "FIRST", 1, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := local.WaitFor(func(e *cot.Event) bool { return e.UID == uid }, fedWait); err != nil {
		t.Fatalf("first link: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The remote user departs with the link.
	if _, err := local.WaitFor(func(e *cot.Event) bool { return e.Type == "t-x-d-d" }, fedWait); err != nil {
		t.Fatalf("no departure when the link ended: %v", err)
	}
	testkit.WaitForWithin(t, fedWait, "A to see the link down", func() bool { return !fedStats(a, "B").Connected })
	return a, local
}

// fedClient is a client of the federation listener at addr presenting cert
// (the test's own federate; the server's certificate is not checked), and
// its close.
func fedClient(t *testing.T, addr string, cert tls.Certificate) (fedproto.FederatedChannelClient, func()) {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true})))
	if err != nil {
		t.Fatal(err)
	}
	return fedproto.NewFederatedChannelClient(cc), func() { cc.Close() }
}

// twoOutpostsTraffic: A (connected to B by the link via names, "" or " over
// v1") and B exchange positions — a TCP client on A, a TLS client on B —
// then a bystander on B reports, and A's client chats to BRAVO, which
// reaches BRAVO only; both servers count the link's traffic. It returns
// B's position as A's client got it and the chat as BRAVO got it.
func twoOutpostsTraffic(t *testing.T, a, b *apptest.App, via string) (bravo, chat *cot.Event) {
	t.Helper()
	ca1 := a.DialTCP(t)
	if err := ca1.Send(takclient.SA("ALPHA-1", "ALPHA", 10, 20)); err != nil {
		t.Fatal(err)
	}
	tlsB := b.DialTLS(t, b.Issue(t, "bravo1"))
	if _, err := tlsB.WaitFor(func(e *cot.Event) bool { return e.UID == "ALPHA-1" && e.Point.Lat == 10 }, fedWait); err != nil {
		t.Fatalf("B's TLS client did not get A's position%s: %v", via, err)
	}
	if err := tlsB.Send(takclient.SA("BRAVO-1", "BRAVO", 30, 40)); err != nil {
		t.Fatal(err)
	}
	bravo, err := ca1.WaitFor(func(e *cot.Event) bool { return e.UID == "BRAVO-1" }, fedWait)
	if err != nil {
		t.Fatalf("A's TCP client did not get B's position%s: %v", via, err)
	}
	if bravo.Detail.Contact == nil || bravo.Detail.Contact.Callsign != "BRAVO" || bravo.Point.Lon != 40 {
		t.Fatalf("B's position arrived changed: %+v detail %s", bravo, bravo.Detail.XML)
	}
	// A bystander on B must not see chat addressed to BRAVO.
	by := b.DialTCP(t)
	if err := by.Send(takclient.SA("BRAVO-2", "BYSTANDER", 1, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := ca1.WaitFor(func(e *cot.Event) bool { return e.UID == "BRAVO-2" }, fedWait); err != nil {
		t.Fatalf("A's TCP client did not get the bystander: %v", err)
	}
	if err := ca1.Send(takclient.Chat("GeoChat.ALPHA-1.BRAVO.1", "hello bravo", cot.Dest{Callsign: "BRAVO"})); err != nil {
		t.Fatal(err)
	}
	chat, err = tlsB.WaitFor(func(e *cot.Event) bool { return e.Type == "b-t-f" }, fedWait)
	if err != nil || !strings.Contains(string(chat.Detail.XML), "hello bravo") {
		t.Fatalf("chat to BRAVO%s: %v %v", via, chat, err)
	}
	if n := quietCount(by, func(e *cot.Event) bool { return e.Type == "b-t-f" }); n != 0 {
		t.Fatalf("the bystander got %d chats addressed to BRAVO", n)
	}
	sa, sb := fedStats(a, "B"), fedStats(b, "alpha-server")
	if !sa.Connected || !sb.Connected || sa.EventsOut == 0 || sa.EventsIn == 0 || sb.Published == 0 || sa.Reconnects != 0 {
		t.Fatalf("counters: A's of B %+v, B's of A %+v", sa, sb)
	}
	return bravo, chat
}
