package cotsession

import (
	"log/slog"
	"math/big"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/internal/testkit"
)

// testConn is a transport's connection as small as the driver allows: it
// embeds the Session and records its cuts.
type testConn struct {
	Session
	cuts atomic.Int32
	cut  chan struct{} // closed by the first Cut
}

func (c *testConn) Cut() {
	if c.cuts.Add(1) == 1 {
		close(c.cut)
	}
}

// fixture is a driver on a real broker, with its log kept.
type fixture struct {
	b    *broker.Broker
	d    *Driver[*testConn]
	logs *testkit.Buffer
}

func newFixture(t *testing.T, cfg Config, bo broker.Options) *fixture {
	t.Helper()
	f := &fixture{logs: &testkit.Buffer{}}
	bo.Logger = testkit.Discard()
	f.b = broker.New(bo)
	t.Cleanup(f.b.Close)
	cfg.Name = "cot-test"
	cfg.Broker = f.b
	cfg.Logger = slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f.d = New[*testConn](cfg)
	return f
}

// join takes a place, joins the broker and lists the connection, as a
// transport does on accept.
func (f *fixture) join(t *testing.T, user string, serial *big.Int) *testConn {
	t.Helper()
	if !f.d.Enter(0) {
		t.Fatal("no place for a connection")
	}
	c := &testConn{cut: make(chan struct{})}
	f.d.Join(&c.Session, broker.SessionInfo{Addr: "192.0.2.1:4242"}, Identity{User: user, Serial: serial})
	if !f.d.Add(c) {
		t.Fatal("connection not listed")
	}
	return c
}

// logged counts the log lines carrying msg.
func (f *fixture) logged(msg string) int { return strings.Count(f.logs.String(), msg) }

// taken is what a session's writer would take now: the types of its events.
func taken(s *broker.Session) []string {
	var types []string
	for _, env := range s.Take(nil) {
		types = append(types, env.Event.Type)
	}
	return types
}

func event(uid, typ string) *cot.Event {
	now := time.Now().UTC()
	return &cot.Event{Version: "2.0", UID: uid, Type: typ, How: "h-e", Time: now, Start: now, Stale: now.Add(time.Minute),
		Point: cot.Point{Lat: 59.3, Lon: 18.0, Hae: cot.Unknown, Ce: cot.Unknown, Le: cot.Unknown}}
}

// sa is a position report of uid (it binds uid to the sender's identity).
func sa(uid string) *cot.Event {
	ev := event(uid, "a-f-G-U-C")
	ev.How = "m-g"
	ev.Detail = cot.Detail{XML: []byte(`<contact callsign="CS-` + uid + `" endpoint="*:-1:stcp"/><__group name="Cyan" role="Team Member"/>`),
		Contact: &cot.Contact{Callsign: "CS-" + uid, Endpoint: "*:-1:stcp"}, Group: &cot.Group{Name: "Cyan", Role: "Team Member"}}
	return ev
}

// handle hands one decoded event to c, as a transport's reader does, and
// fails the test if the connection would end.
func handle(t *testing.T, c *testConn, ev *cot.Event) {
	t.Helper()
	if reason, stop := c.Handle(&cot.Message{Event: ev, Size: 100}, nil); stop {
		t.Fatalf("handling %s ended the connection: %v", ev.Type, reason)
	}
}
