package mesh

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/ipv4"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/internal/testkit"
)

var quiet = testkit.Discard()

// client is a server client as the broker sees it: a session in __ANON__
// whose queue the test reads.
type client struct {
	s    *broker.Session
	wake chan struct{}
	mu   sync.Mutex
	got  []*cot.Event
}

func newClient(b *broker.Broker, uid string) *client {
	c := &client{wake: make(chan struct{}, 1)}
	c.s = b.Join(broker.SessionInfo{Listener: "cot-tcp", Addr: "10.9.9.9:1", Wake: func() {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}})
	if uid != "" {
		b.Publish(saEvent(uid, "C-"+uid), c.s)
	}
	return c
}

// waitFor returns the first event received that matches, within d.
func (c *client) waitFor(t *testing.T, what string, d time.Duration, match func(*cot.Event) bool) *cot.Event {
	t.Helper()
	deadline := time.After(d)
	for {
		for _, env := range c.s.Take(nil) {
			c.mu.Lock()
			c.got = append(c.got, env.Event)
			c.mu.Unlock()
			if match(env.Event) {
				return env.Event
			}
		}
		select {
		case <-c.wake:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%s: not received within %v", what, d)
			return nil
		}
	}
}

func saEvent(uid, callsign string) *cot.Event {
	ev := &cot.Event{Version: "2.0", UID: uid, Type: "a-f-G-U-C", How: "m-g",
		Point: cot.Point{Lat: 59.3, Lon: 18.1, Hae: 10, Ce: 5, Le: 5}}
	now := time.Now().UTC()
	ev.Time, ev.Start, ev.Stale = now, now, now.Add(2*time.Minute)
	ev.Detail.XML = []byte(`<contact callsign="` + callsign + `"/>`)
	ev.Detail.Contact = &cot.Contact{Callsign: callsign}
	return ev
}

func uidIs(uid string) func(*cot.Event) bool { return func(e *cot.Event) bool { return e.UID == uid } }

// meshFrame is ev as a TAK protocol v1 mesh datagram.
func meshFrame(t *testing.T, ev *cot.Event) []byte {
	t.Helper()
	p, err := ev.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return cot.AppendMeshFrame(nil, p)
}

// sender is a socket of a device on the mesh (loopback in the test's
// namespace), bound to its own address so sources are told apart.
func sender(t *testing.T, from string) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(from)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// listener joins group on loopback, as a device listening to the mesh.
func listener(t *testing.T, group netip.AddrPort) *net.UDPConn {
	t.Helper()
	lc := net.ListenConfig{Control: reuseAddr} // beside the bridge's socket
	pc, err := lc.ListenPacket(context.Background(), "udp4", fmt.Sprintf(":%d", group.Port()))
	if err != nil {
		t.Fatal(err)
	}
	c := pc.(*net.UDPConn)
	t.Cleanup(func() { c.Close() })
	if err := ipv4.NewPacketConn(c).JoinGroup(nil, &net.UDPAddr{IP: group.Addr().AsSlice()}); err != nil {
		t.Fatal(err)
	}
	return c
}

// receive reads datagrams on c until one decodes to an event that
// matches, within d; it returns that datagram.
func receive(t *testing.T, c *net.UDPConn, what string, d time.Duration, match func(*cot.Event) bool) []byte {
	t.Helper()
	buf := make([]byte, 70000)
	deadline := time.Now().Add(d)
	for {
		c.SetReadDeadline(deadline)
		n, _, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ev, err := decodeDatagram(buf[:n]); err == nil && match(ev) {
			return append([]byte(nil), buf[:n]...)
		}
	}
}

// waitStat waits until cond holds for the counters of st.
func waitStat(t *testing.T, what string, st func() Stats, cond func(Stats) bool) Stats {
	t.Helper()
	var s Stats
	testkit.WaitFor(t, what, func() bool { s = st(); return cond(s) })
	return s
}

// flush discards what c has received so far.
func flush(c *net.UDPConn) {
	buf := make([]byte, 70000)
	for {
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, _, err := c.ReadFromUDPAddrPort(buf); err != nil {
			return
		}
	}
}
