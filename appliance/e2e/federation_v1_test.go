package e2e

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"outpost/appliance/apptest"
	"outpost/appliance/config"
	"outpost/appliance/cot"
	"outpost/appliance/federation"
	"outpost/appliance/federation/fedproto"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// startFederatedV1 starts an Outpost like startFederated, with a
// federation v1 listener too, at at ("" for any port of 127.0.0.1).
func startFederatedV1(t testing.TB, ca *fedCA, name string, at string, federates ...string) *apptest.App {
	t.Helper()
	certFile, keyFile, _ := ca.issue(t, name)
	return apptest.Start(t, func(c *config.Config) {
		c.FederationPort, c.FederationV1Port, c.FederationTrust = 0, 0, ca.trust()
		listenAt(t, c, at, &c.FederationV1Port)
		c.FederationCert, c.FederationKey = certFile, keyFile
		c.FederationName = name
		c.Federates = federates
	})
}

// fedV1Listener is the bound address of a's federation v1 listener.
func fedV1Listener(t testing.TB, a *apptest.App) string {
	return a.Addr(t, federation.ListenerV1Name)
}

// TestFederationV1TwoOutposts: A connects to B's federation v1 listener
// (a federates entry ending in /v1). Positions cross both ways, the one
// sent before the link was up included; chat addressed to a callsign on
// the other server reaches that client only; the counters show the link.
// Without federationV1Port there is no v1 listener.
func TestFederationV1TwoOutposts(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	b := startFederatedV1(t, ca, "bravo-server", "")
	a := startFederated(t, ca, "alpha-server", "", "B="+fedV1Listener(t, b)+"/v1")
	if _, on := a.Addrs()[federation.ListenerV1Name]; on {
		t.Fatal("a federation v1 listener without federationV1Port")
	}
	twoOutpostsTraffic(t, a, b, " over v1")
}

// TestFederationV1Loop: A–B over v1, B–C over v2, C–A over v1 (C connects
// to A's v1 port before A runs). A position from A reaches B's and C's
// clients once and never comes back to A: provenance, hops and the memory
// of copies work the same over v1.
func TestFederationV1Loop(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	pA := fedHome(t)
	c := startFederated(t, ca, "charlie", "", "A="+pA+"/v1")
	b := startFederatedV1(t, ca, "bravo", "", "C="+fedListener(t, c))
	a := startFederatedV1(t, ca, "alpha", pA, "B="+fedV1Listener(t, b)+"/v1")
	for _, x := range []struct {
		app  *apptest.App
		peer string
	}{{a, "B"}, {b, "C"}, {c, "A"}} {
		testkit.WaitForWithin(t, fedWait, "link to "+x.peer, func() bool { return fedStats(x.app, x.peer).Connected })
	}
	ca1, cb, cc := a.DialTCP(t), b.DialTCP(t), c.DialTCP(t)
	if err := ca1.Send(takclient.SA("V1LOOP-0", "L0", 50, 50)); err != nil {
		t.Fatal(err)
	}
	moved := func(e *cot.Event) bool { return e.UID == "V1LOOP-0" && e.Point.Lat == 50 }
	for name, cl := range map[string]*takclient.Client{"B": cb, "C": cc} {
		if _, err := cl.WaitFor(moved, fedWait); err != nil {
			t.Fatalf("%s's client did not get A's position: %v", name, err)
		}
		if n := quietCount(cl, moved); n != 0 {
			t.Fatalf("%s's client got A's position %d more times", name, n+1)
		}
	}
	if n := quietCount(ca1, func(e *cot.Event) bool { return e.UID == "V1LOOP-0" }); n != 0 {
		t.Fatalf("A's client got its own position back %d times", n)
	}
	// And the other way round: C's client reaches A's.
	if err := cc.Send(takclient.SA("V1LOOP-C", "LC", 5, 5)); err != nil {
		t.Fatal(err)
	}
	if _, err := ca1.WaitFor(func(e *cot.Event) bool { return e.UID == "V1LOOP-C" }, fedWait); err != nil {
		t.Fatalf("A's client did not get C's position: %v", err)
	}
	if n := quietCount(ca1, func(e *cot.Event) bool { return e.UID == "V1LOOP-C" }); n != 0 {
		t.Fatalf("A's client got C's position %d more times", n+1)
	}
}

// v1Frame frames fe as federation v1 does: its length, 4 bytes big-endian,
// then its bytes (written here apart from Outpost's codec).
func v1Frame(t testing.TB, fe *fedproto.FederatedEvent) []byte {
	t.Helper()
	b, err := proto.Marshal(fe)
	if err != nil {
		t.Fatal(err)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// v1Dial connects to a federation v1 listener with cert.
func v1Dial(t testing.TB, addr string, cert tls.Certificate) *tls.Conn {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// v1Ended reports whether the server ended conn (a read returns an error
// other than a timeout, within fedWait).
func v1Ended(conn *tls.Conn) error {
	conn.SetReadDeadline(time.Now().Add(fedWait))
	_, err := io.Copy(io.Discard, conn)
	if err == nil {
		err = io.EOF
	}
	return err
}

// TestFederationV1BadInput: a trusted federate on B's v1 listener sends a
// frame that is not a FederatedEvent (dropped and counted; the link
// carries the next, good one), then a length over the limit (the
// connection ends, counted); another federate's connection that ends
// inside a frame is closed too; a federate linked over v1 all along is not
// disturbed, and an untrusted certificate is refused at the handshake.
func TestFederationV1BadInput(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	b := startFederatedV1(t, ca, "bravo", "")
	a := startFederated(t, ca, "alpha", "", "B="+fedV1Listener(t, b)+"/v1")
	testkit.WaitForWithin(t, fedWait, "A's v1 link", func() bool { return fedStats(a, "B").Connected })
	onA := a.DialTCP(t)
	client := b.DialTCP(t)
	now := time.Now().UnixMilli()
	geo := func(uid string) *fedproto.FederatedEvent {
		return &fedproto.FederatedEvent{Event: &fedproto.GeoEvent{Uid: uid, Type: "a-h-G", CoordSource: "h-g-i-g-o", SendTime: now,
			StartTime: now, StaleTime: now + 60_000, Lat: 1, Lon: 2, Hae: 3, Ce: 4, Le: 5, Other: "<detail><remarks>v1</remarks></detail>"}}
	}
	_, _, pair := ca.issue(t, "tester")
	conn := v1Dial(t, fedV1Listener(t, b), pair)
	var stream []byte
	stream = append(stream, 0, 0, 0, 3, 0xFF, 0xFF, 0xFF) // not a FederatedEvent
	stream = append(stream, 0, 0, 0, 0)                   // a keep-alive
	stream = append(stream, v1Frame(t, geo("V1-GOOD"))...)
	if _, err := conn.Write(stream); err != nil {
		t.Fatal(err)
	}
	if _, err := client.WaitFor(func(e *cot.Event) bool { return e.UID == "V1-GOOD" }, fedWait); err != nil {
		t.Fatalf("the good event after a malformed one: %v", err)
	}
	if st := fedStats(b, "tester"); st.DroppedMalformed != 1 || !st.Connected || st.Published != 1 {
		t.Fatalf("after the malformed frame: %+v", st)
	}
	// A length of 1 GiB: the connection ends.
	if _, err := conn.Write(binary.BigEndian.AppendUint32(nil, 1<<30)); err != nil {
		t.Fatal(err)
	}
	if err := v1Ended(conn); err == nil {
		t.Fatal("the connection stayed open after an oversized frame")
	}
	testkit.WaitForWithin(t, fedWait, "B to end the tester's link", func() bool { return !fedStats(b, "tester").Connected })
	if st := fedStats(b, "tester"); st.DroppedSize != 1 || !strings.Contains(st.LastError, "larger than the limit") {
		t.Fatalf("after the oversized frame: %+v", st)
	}
	// A federate that stops inside a frame: its link ends.
	_, _, pair2 := ca.issue(t, "truncator")
	conn2 := v1Dial(t, fedV1Listener(t, b), pair2)
	if _, err := conn2.Write(append(binary.BigEndian.AppendUint32(nil, 100), "short"...)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitForWithin(t, fedWait, "B to see the truncator", func() bool { return fedStats(b, "truncator").Connected })
	conn2.CloseWrite()
	if err := v1Ended(conn2); err == nil {
		t.Fatal("the connection stayed open")
	}
	testkit.WaitForWithin(t, fedWait, "B to end the truncator's link", func() bool { return !fedStats(b, "truncator").Connected })
	// A's link was never disturbed: a position from B's client still crosses.
	if err := client.Send(takclient.SA("V1-AFTER", "AFTER", 3, 3)); err != nil {
		t.Fatal(err)
	}
	if _, err := onA.WaitFor(func(e *cot.Event) bool { return e.UID == "V1-AFTER" }, fedWait); err != nil {
		t.Fatalf("A's link after the bad federates: %v", err)
	}
	if st := fedStats(b, "alpha"); !st.Connected || st.Links != 1 || st.DroppedMalformed != 0 {
		t.Fatalf("A's link on B: %+v", st)
	}
	// An untrusted certificate: refused at the handshake.
	_, _, stranger := newFedCA(t, "Someone else").issue(t, "stranger")
	sc, err := tls.Dial("tcp", fedV1Listener(t, b), &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{stranger}})
	if err == nil {
		sc.SetReadDeadline(time.Now().Add(fedWait))
		_, err = bufio.NewReader(sc).ReadByte() // TLS 1.3: the verdict comes with the first read
		sc.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("an untrusted federate on v1: %v", err)
	}
}

// TestFederationV1Reconnects: A's v1 link to B ends when B goes away;
// what A's client sends meanwhile is queued, and a new B on the same port
// receives it when the link is made again.
func TestFederationV1Reconnects(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	pB := fedHome(t)
	a, local := linkedThenDropped(t, ca, "V1B1-USER", "B="+pB+"/v1", func() *apptest.App { return startFederatedV1(t, ca, "bravo", pB) })
	chat := takclient.Chat("GeoChat.A.All.1", "sent while B was away")
	if err := local.Send(chat); err != nil {
		t.Fatal(err)
	}
	testkit.WaitForWithin(t, fedWait, "A to queue the chat", func() bool { return fedStats(a, "B").Queued > 0 })
	b2 := startFederatedV1(t, ca, "bravo", pB)
	c2 := b2.DialTCP(t)
	if _, err := c2.WaitFor(func(e *cot.Event) bool {
		return e.Type == "b-t-f" && strings.Contains(string(e.Detail.XML), "sent while B was away")
	}, fedWait); err != nil {
		t.Fatalf("the new B did not get the queued chat: %v", err)
	}
	// The counters are taken after the write returns: the chat can be at
	// B before A counts it.
	testkit.WaitForWithin(t, fedWait, "A's counters of B: connected again, the queue sent", func() bool {
		st := fedStats(a, "B")
		return st.Connected && st.Reconnects >= 1 && st.Links == 2 && st.QueueSent > 0
	})
}
