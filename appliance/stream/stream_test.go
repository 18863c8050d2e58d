package stream

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

const wait = 5 * time.Second

type server struct {
	l *Listener
	b *broker.Broker

	mu       sync.Mutex
	observed []*cot.Event
}

func (s *server) observedTypes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, ev := range s.observed {
		out = append(out, ev.Type)
	}
	return out
}

func start(t *testing.T, cfg Config, bo broker.Options) *server {
	t.Helper()
	s := &server{}
	bo.Observer = func(env *broker.Envelope, _ *broker.Session) {
		s.mu.Lock()
		s.observed = append(s.observed, env.Event)
		s.mu.Unlock()
	}
	bo.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s.b = broker.New(bo)
	cfg.Name = "cot-tcp"
	cfg.Net.Addr = "127.0.0.1:0"
	cfg.Broker = s.b
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s.l = New(cfg)
	s.l.noWaiter = withoutWaiter
	if err := s.l.Listen(); err != nil {
		t.Fatal(err)
	}
	s.l.Serve()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.l.Shutdown(ctx)
		s.b.Close()
	})
	return s
}

func (s *server) dial(t *testing.T) *takclient.Client {
	t.Helper()
	c, err := takclient.Dial(s.l.Addr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// joinAs connects a client, sends its SA and waits until the broker knows it.
func (s *server) joinAs(t *testing.T, uid, callsign string) *takclient.Client {
	t.Helper()
	c := s.dial(t)
	if err := c.Send(takclient.SA(uid, callsign, 59.3, 18.0)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, uid+" in the registry", func() bool {
		for _, ci := range s.b.Clients() {
			if ci.UID == uid {
				return true
			}
		}
		return false
	})
	return c
}

func isSAFrom(uid string) func(*cot.Event) bool {
	return func(ev *cot.Event) bool { return ev.UID == uid && strings.HasPrefix(ev.Type, "a-") }
}

// TestMixedFormatsExchangeSAs: three XML clients and one client negotiated
// to protobuf each receive the others' SAs, in their own format, and never
// their own.
func TestMixedFormatsExchangeSAs(t *testing.T) {
	s := start(t, Config{}, broker.Options{})
	pc := s.dial(t)
	if err := pc.Negotiate(wait); err != nil {
		t.Fatal(err)
	}
	xml := []*takclient.Client{s.dial(t), s.dial(t), s.dial(t)}
	all := append([]*takclient.Client{pc}, xml...)
	uids := []string{"PROTO", "X1", "X2", "X3"}
	for i, c := range all {
		if err := c.Send(takclient.SA(uids[i], "CS-"+uids[i], 59+float64(i), 18)); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range all {
		got := map[string]bool{}
		for len(got) < 3 {
			ev, err := c.Next(wait)
			if err != nil {
				t.Fatalf("client %s: %v (got %v)", uids[i], err, got)
			}
			if !strings.HasPrefix(ev.Type, "a-") {
				continue
			}
			if ev.UID == uids[i] {
				t.Fatalf("client %s received its own SA", uids[i])
			}
			got[ev.UID] = true
			if ev.Detail.Contact == nil || ev.Detail.Contact.Callsign != "CS-"+ev.UID {
				t.Fatalf("client %s: SA of %s lost its contact: %+v", uids[i], ev.UID, ev.Detail.Contact)
			}
		}
	}
	if !pc.Protobuf() {
		t.Fatal("client did not switch") // TestProtobufOnTheWire checks the bytes
	}
	if st := s.l.Stats(); st.SyntaxErrors != 0 {
		t.Fatalf("server saw %d malformed messages", st.SyntaxErrors)
	}
}

// TestProtobufOnTheWire reads the negotiated connection's bytes directly.
func TestProtobufOnTheWire(t *testing.T) {
	s := start(t, Config{}, broker.Options{})
	conn, err := net.Dial("tcp", s.l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dec := cot.NewStreamDecoder(conn, 0)
	conn.SetReadDeadline(time.Now().Add(wait))
	msg, err := dec.Next()
	if err != nil || msg.Event.Type != "t-x-takp-v" {
		t.Fatalf("first message %v %v, want the protocol offer", msg.Event, err)
	}
	if tc := msg.Event.Detail.TakControl; tc == nil || tc.SupportVersion != 1 {
		t.Fatalf("offer detail %q", msg.Event.Detail.XML)
	}
	now := time.Now().UTC()
	req := &cot.Event{Version: "2.0", UID: "c", Type: "t-x-takp-q", How: "m-g", Time: now, Start: now, Stale: now.Add(time.Minute),
		Detail: cot.Detail{XML: []byte(`<TakControl><TakRequest version="1"/></TakControl>`)}}
	// The request and a protobuf SA in the same write: the server must
	// switch its reader at the byte after the request.
	pb, err := takclient.SA("P", "PEE", 1, 2).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(cot.AppendStreamFrame(req.AppendXML(nil), pb)); err != nil {
		t.Fatal(err)
	}
	msg, err = dec.Next()
	if err != nil || msg.Event.Type != "t-x-takp-r" || msg.Event.Detail.TakControl == nil ||
		msg.Event.Detail.TakControl.Response == nil || !*msg.Event.Detail.TakControl.Response {
		t.Fatalf("response %+v %v", msg.Event, err)
	}
	testkit.WaitFor(t, "the protobuf SA to be routed", func() bool {
		for _, c := range s.b.Clients() {
			if c.UID == "P" && c.Callsign == "PEE" {
				return true
			}
		}
		return false
	})
	// Now everything the server sends is 0xBF-framed.
	x := s.dial(t)
	x.Send(takclient.SA("X", "EX", 3, 4))
	buf := make([]byte, 1)
	conn.SetReadDeadline(time.Now().Add(wait))
	if _, err := io.ReadFull(conn, buf); err != nil || buf[0] != 0xBF {
		t.Fatalf("first byte after the switch = %#x (%v), want 0xBF", buf[0], err)
	}
}

func TestSingleByteWrites(t *testing.T) {
	s := start(t, Config{}, broker.Options{})
	rx := s.dial(t)
	tx := s.dial(t)
	ev := takclient.SA("SPLIT", "SPLITTER", 12.5, -45.25)
	raw := ev.AppendXML(nil)
	for i := range raw {
		if err := tx.SendRaw(raw[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := rx.WaitFor(isSAFrom("SPLIT"), wait)
	if err != nil {
		t.Fatal(err)
	}
	if got.Point.Lat != 12.5 || got.Point.Lon != -45.25 || got.Detail.Contact.Callsign != "SPLITTER" {
		t.Fatalf("event arrived damaged: %+v", got)
	}
}

func TestPingPong(t *testing.T) {
	s := start(t, Config{}, broker.Options{})
	a, other := s.dial(t), s.dial(t)
	if err := a.Ping("ANDROID-1"); err != nil {
		t.Fatal(err)
	}
	pong, err := a.WaitFor(takclient.Type("t-x-c-t-r"), wait)
	if err != nil {
		t.Fatal(err)
	}
	if pong.UID != "takPong" || pong.How != "h-g-i-g-o" || pong.Stale.Before(pong.Time) {
		t.Fatalf("pong %+v", pong)
	}
	// The pong goes to the pinger only, and the ping is not relayed.
	other.Send(takclient.Chat("marker", "after"))
	a.Send(takclient.Chat("marker2", "after"))
	ev, err := other.WaitFor(func(e *cot.Event) bool { return e.Type != "t-x-takp-v" }, wait)
	if err != nil || ev.UID != "marker2" {
		t.Fatalf("other client got %+v %v before the marker", ev, err)
	}
	for _, typ := range s.observedTypes() {
		if strings.HasPrefix(typ, "t-x-c-t") {
			t.Fatal("ping stored in history")
		}
	}
	// The same with a protobuf client.
	p := s.dial(t)
	if err := p.Negotiate(wait); err != nil {
		t.Fatal(err)
	}
	p.Ping("P")
	if _, err := p.WaitFor(takclient.Type("t-x-c-t-r"), wait); err != nil {
		t.Fatalf("protobuf pong: %v", err)
	}
}

func TestDepartureAndDirected(t *testing.T) {
	s := start(t, Config{}, broker.Options{})
	a := s.joinAs(t, "A", "ALPHA")
	b := s.joinAs(t, "B", "BRAVO")
	c := s.joinAs(t, "C", "CHARLIE")
	// Directed chat from A to BRAVO only, then a broadcast marker.
	a.Send(takclient.Chat("chat-1", "for bravo", cot.Dest{Callsign: "BRAVO"}))
	a.Send(takclient.Chat("chat-2", "for everyone"))
	got, err := b.WaitFor(takclient.Type("b-t-f"), wait)
	if err != nil || got.UID != "chat-1" {
		t.Fatalf("bravo got %+v %v", got, err)
	}
	if strings.Contains(string(got.Detail.XML), "marti") {
		t.Fatalf("<marti> forwarded: %s", got.Detail.XML)
	}
	got, err = c.WaitFor(takclient.Type("b-t-f"), wait)
	if err != nil || got.UID != "chat-2" {
		t.Fatalf("charlie got %+v %v; the directed chat must not reach it", got, err)
	}
	// A leaves: B and C learn it.
	a.Close()
	for name, cl := range map[string]*takclient.Client{"B": b, "C": c} {
		dep, err := cl.WaitFor(takclient.Type("t-x-d-d"), wait)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(dep.Detail.Links) != 1 || dep.Detail.Links[0].UID != "A" || dep.Detail.Links[0].Type != "a-f-G-U-C" {
			t.Fatalf("%s: departure links %+v", name, dep.Detail.Links)
		}
	}
	testkit.WaitFor(t, "A's close reason", func() bool { return s.b.Stats().Closed[broker.ReasonClientClosed] == 1 })
}

func TestReplayThenOffer(t *testing.T) {
	s := start(t, Config{}, broker.Options{})
	s.joinAs(t, "A", "ALPHA")
	s.joinAs(t, "B", "BRAVO")
	n := s.dial(t)
	var order []string
	for len(order) < 3 {
		ev, err := n.Next(wait)
		if err != nil {
			t.Fatalf("after %v: %v", order, err)
		}
		order = append(order, ev.Type+"/"+ev.UID)
	}
	sort.Strings(order[:2])
	if !strings.HasSuffix(order[0], "/A") || !strings.HasSuffix(order[1], "/B") || !strings.HasPrefix(order[2], "t-x-takp-v") {
		t.Fatalf("order %v, want the latest SAs of A and B, then the offer", order)
	}
}

func TestTooLargeMessage(t *testing.T) {
	s := start(t, Config{MaxMessage: 4096}, broker.Options{})
	bad := s.dial(t)
	good := s.joinAs(t, "G", "GOOD")
	bad.SendRaw([]byte(`<event version="2.0" uid="big" type="a-f-G" time="2026-01-01T00:00:00Z" start="2026-01-01T00:00:00Z" stale="2026-01-01T00:10:00Z" how="m-g"><detail><remarks>` + strings.Repeat("x", 8192)))
	select {
	case <-bad.Done():
	case <-time.After(wait):
		t.Fatal("oversized sender not disconnected")
	}
	testkit.WaitFor(t, "close reason", func() bool { return s.b.Stats().Closed[broker.ReasonTooLarge] == 1 })
	// The server keeps serving others.
	other := s.dial(t)
	other.Send(takclient.SA("O", "OTHER", 1, 1))
	if _, err := good.WaitFor(isSAFrom("O"), wait); err != nil {
		t.Fatal(err)
	}
}

func TestMalformedMessageSkipped(t *testing.T) {
	s := start(t, Config{}, broker.Options{})
	tx, rx := s.dial(t), s.dial(t)
	tx.SendRaw([]byte(`<event version="2.0" type="a-f-G"><point lat="x"/></event>`))
	tx.Send(takclient.SA("OK", "OKAY", 1, 1))
	if _, err := rx.WaitFor(isSAFrom("OK"), wait); err != nil {
		t.Fatalf("a malformed event broke the stream: %v", err)
	}
	if s.l.Stats().SyntaxErrors != 1 {
		t.Fatalf("syntax errors %d", s.l.Stats().SyntaxErrors)
	}
}

func TestIdleTimeout(t *testing.T) {
	s := start(t, Config{IdleTimeout: 200 * time.Millisecond}, broker.Options{})
	c := s.dial(t)
	select {
	case <-c.Done():
	case <-time.After(wait):
		t.Fatal("idle client not closed")
	}
	testkit.WaitFor(t, "idle reason", func() bool { return s.b.Stats().Closed[broker.ReasonIdle] == 1 })
}

// TestTrickleIsIdle: a client that sends the bytes of a message it never
// completes, one every 50 ms, is closed as idle like a silent one.
func TestTrickleIsIdle(t *testing.T) {
	s := start(t, Config{IdleTimeout: 300 * time.Millisecond}, broker.Options{})
	c, err := net.Dial("tcp", s.l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	part := []byte(`<event version="2.0" uid="slow" type="a-f-G" how="m-g"><detail><remarks>`)
	deadline := time.Now().Add(wait)
	for s.b.Stats().Closed[broker.ReasonIdle] == 0 {
		if time.Now().After(deadline) {
			t.Fatal("a client trickling an incomplete message was never closed as idle")
		}
		if _, err := c.Write(part[:1]); err != nil {
			break // closed
		}
		part = append(part[1:], 'x')
		time.Sleep(50 * time.Millisecond)
	}
	testkit.WaitFor(t, "idle reason", func() bool { return s.b.Stats().Closed[broker.ReasonIdle] == 1 })
}

func TestPingsKeepAlive(t *testing.T) {
	s := start(t, Config{IdleTimeout: 300 * time.Millisecond}, broker.Options{})
	c := s.dial(t)
	for i := 0; i < 8; i++ {
		if err := c.Ping("K"); err != nil {
			t.Fatalf("ping %d: %v", i, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case <-c.Done():
		t.Fatal("a pinging client was closed as idle")
	default:
	}
}

func TestMaxConnections(t *testing.T) {
	s := start(t, Config{Net: netx.Config{Conns: []*netx.Limits{netx.NewLimits(0, 2)}}}, broker.Options{})
	s.dial(t)
	s.dial(t)
	testkit.WaitFor(t, "two connections", func() bool { return s.l.Stats().Open == 2 })
	third := s.dial(t)
	select {
	case <-third.Done():
	case <-time.After(wait):
		t.Fatal("connection over the limit not refused")
	}
	if s.l.Stats().Net.Refused[netx.CauseTotal] != 1 {
		t.Fatalf("refused %v", s.l.Stats().Net.Refused)
	}
}

func TestShutdownDrainsQueues(t *testing.T) {
	s := start(t, Config{}, broker.Options{})
	rx := s.dial(t)
	if _, err := rx.WaitFor(takclient.Type("t-x-takp-v"), wait); err != nil {
		t.Fatal(err)
	}
	// Queue events for rx directly, then shut down: they must all arrive
	// before the connection closes.
	sessions := s.b.Sessions()
	if len(sessions) != 1 {
		t.Fatalf("%d sessions", len(sessions))
	}
	for i := 0; i < 100; i++ {
		sessions[0].Send(broker.NewEnvelope(takclient.Chat(fmt.Sprintf("q%d", i), "queued")))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.l.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		ev, err := rx.Next(wait)
		if err != nil {
			break
		}
		if ev.Type == "b-t-f" {
			n++
		}
	}
	if n != 100 {
		t.Fatalf("received %d of 100 queued events before close", n)
	}
	if sessions[0].Reason() != broker.ReasonShutdown {
		t.Fatalf("reason %v", sessions[0].Reason())
	}
	if _, err := net.DialTimeout("tcp", s.l.Addr().String(), time.Second); err == nil {
		t.Fatal("listener still accepting after shutdown")
	}
}

// TestOversizeEventRefused: a protobuf event that fits the inbound cap but
// would encode as XML larger than what clients can receive is refused at
// publish (counted, not queued, not stored); its sender stays connected.
func TestOversizeEventRefused(t *testing.T) {
	s := start(t, Config{}, broker.Options{})
	tx := s.dial(t)
	if err := tx.Negotiate(wait); err != nil {
		t.Fatal(err)
	}
	rx := s.joinAs(t, "RX", "RX")
	big := takclient.Chat("BIG", strings.Repeat("x", cot.MaxRelayedEvent-300))
	p, err := big.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	if len(p) > cot.MaxRelayedEvent-8 || len(big.AppendXML(nil)) <= cot.MaxRelayedEvent {
		t.Fatalf("test event: protobuf %d bytes, XML %d bytes", len(p), len(big.AppendXML(nil)))
	}
	tx.SendRaw(cot.AppendStreamFrame(nil, p))
	testkit.WaitFor(t, "the refusal", func() bool { return s.l.Stats().OversizeEvents == 1 })
	tx.Send(takclient.SA("TX", "TX", 1, 1))
	if _, err := rx.WaitFor(isSAFrom("TX"), wait); err != nil {
		t.Fatalf("the sender was cut off or the relay stalled: %v", err)
	}
	for _, typ := range s.observedTypes() {
		if typ == "b-t-f" {
			t.Fatal("the refused event was stored")
		}
	}
	if st := s.b.Stats(); st.Oversize != 1 || st.QueuedBytes < 0 {
		t.Fatalf("broker stats %+v", st)
	}
}

// TestXMLRacingTheSwitch: a client that sends an XML event right behind its
// t-x-takp-q (before it has read the answer) has that event relayed, not
// dropped as junk.
func TestXMLRacingTheSwitch(t *testing.T) {
	s := start(t, Config{}, broker.Options{})
	rx := s.joinAs(t, "RX", "RX")
	tx := s.dial(t)
	if _, err := tx.WaitFor(takclient.Type("t-x-takp-v"), wait); err != nil {
		t.Fatal(err)
	}
	req := &cot.Event{Version: "2.0", UID: "RACER", Type: "t-x-takp-q", How: "m-g", Time: time.Now(), Start: time.Now(),
		Stale: time.Now().Add(time.Minute), Point: cot.Point{Hae: cot.Unknown, Ce: cot.Unknown, Le: cot.Unknown},
		Detail: cot.Detail{XML: []byte(`<TakControl><TakRequest version="1"/></TakControl>`)}}
	raw := append(req.AppendXML(nil), takclient.SA("RACER", "RACER", 2, 2).AppendXML(nil)...)
	tx.SendRaw(raw)
	if _, err := rx.WaitFor(isSAFrom("RACER"), wait); err != nil {
		t.Fatalf("the XML event sent behind the switch request was dropped: %v", err)
	}
}

// TestPacing: a client sending faster than its rate is slowed down, not cut
// off, and nothing it sent is lost.
func TestPacing(t *testing.T) {
	s := start(t, Config{MaxEventsPerSecond: 100}, broker.Options{})
	rx := s.joinAs(t, "RX", "RX")
	tx := s.dial(t)
	const n = 300 // burst of 200, then 100 at 100 per second
	var raw []byte
	for i := range n {
		raw = takclient.Chat(fmt.Sprintf("c%d", i), "x").AppendXML(raw)
	}
	other := s.dial(t)
	start := time.Now()
	tx.SendRaw(raw)
	// While the sender is paced (its reading job waits in the pool),
	// another client's message goes through at once.
	time.Sleep(100 * time.Millisecond)
	other.Send(takclient.Chat("other", "x"))
	got, otherAt := 0, -1
	for got < n {
		ev, err := rx.WaitFor(takclient.Type("b-t-f"), wait)
		if err != nil {
			t.Fatalf("received %d of %d: %v", got, n, err)
		}
		if ev.UID == "other" {
			otherAt = got
			continue
		}
		got++
	}
	if otherAt < 0 || otherAt >= n-50 {
		t.Fatalf("the other client's message arrived after %d of the paced sender's %d events: held up by the pacing", otherAt, n)
	}
	took := time.Since(start)
	if took < 700*time.Millisecond || s.l.Stats().Paced == 0 {
		t.Fatalf("%d events over a rate of 100/s with a 2 s burst arrived in %v (paced %d times): not paced",
			n, took, s.l.Stats().Paced)
	}
	select {
	case <-tx.Done():
		t.Fatal("the fast sender was disconnected")
	default:
	}
}
