//go:build !race && linux

package hostile

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// cutOff reports whether the server closed c within d (a read ends in EOF
// or a reset rather than the timeout).
func cutOff(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	ne, ok := err.(net.Error)
	return !(ok && ne.Timeout())
}

// bigEventPrefix opens an event whose remarks run on for n bytes, without
// ever closing it.
func bigEventPrefix(n int) []byte {
	head := `<?xml version="1.0"?><event version="2.0" uid="BIG" type="b-t-f" how="h-g-i-g-o" time="2026-11-22T10:00:00Z" start="2026-11-22T10:00:00Z" stale="2026-11-22T11:00:00Z"><point lat="0" lon="0" hae="0" ce="9999999" le="9999999"/><detail><remarks>`
	return append([]byte(head), strings.Repeat("x", n-len(head))...)
}

// Row 1: connections send 8 MiB events (less their last bytes) at once.
// Before: every other client was disconnected as a slow consumer, RSS
// peaked at 857 MB. Now: each is cut at the 64 KiB message cap, nothing is
// queued for anyone.
func TestBigEvents(t *testing.T) {
	e := start(t)
	conns, events := pick(3, 8), pick(1, 10)
	var wg sync.WaitGroup
	cut := 0
	var mu sync.Mutex
	big := bigEventPrefix(8<<20 - 1024)
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range events {
				c, err := testkit.DialFrom(fmt.Sprintf("127.0.1.%d", i+1), e.addr("cot-tcp"))
				if err != nil {
					t.Error(err)
					return
				}
				go c.Write(big)
				if cutOff(c, 10*time.Second) {
					mu.Lock()
					cut++
					mu.Unlock()
				}
				c.Close()
			}
		}()
	}
	wg.Wait()
	if cut != conns*events {
		t.Errorf("%d of %d oversized senders were cut off", cut, conns*events)
	}
	e.finish(limits{peakRSS: 64 << 20, dbGrowth: 1 << 20, logGrowth: 64 << 10})
}

// Row 1, second form: events that fit the inbound cap but would encode
// larger than a client can receive (protobuf in, XML out) are refused at
// publish: never queued, never stored.
func TestEventsTooLargeToRelay(t *testing.T) {
	e := start(t)
	c, err := takclient.Dial(e.addr("cot-tcp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Negotiate(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	big := takclient.Chat("BIG", strings.Repeat("x", cot.MaxRelayedEvent-300))
	p, err := big.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	frame := cot.AppendStreamFrame(nil, p)
	for range pick(50, 1000) {
		if err := c.SendRaw(frame); err != nil {
			t.Fatalf("the sender was cut off: %v", err)
		}
	}
	testkit.WaitFor(t, "the refusal to be logged", func() bool {
		return e.p.Logged("event refused: larger than what clients can receive (logged once per connection)")
	})
	e.finish(limits{peakRSS: 64 << 20, dbGrowth: 1 << 20, logGrowth: 16 << 10})
	if n := e.p.CountLogged("event refused: larger than what clients can receive (logged once per connection)"); n != 1 {
		t.Errorf("refusal logged %d times for one connection", n)
	}
}

// Row 2: connections stream huge events, reconnecting when cut, and others
// stream the largest valid events as fast as they can. Before: the
// database grew 350 MB in 2 s. Now: huge events are never decoded; valid
// floods are paced (clientBytesPerSecond) and their history is budgeted
// (historyClientBytes).
func TestHistoryFlood(t *testing.T) {
	e := start(t)
	d := pick(3*time.Second, 20*time.Second)
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	var reconnects atomic.Int64
	// Built once: 16 MiB of garbage per reconnection made the test process's
	// own page faults and collection, not the server, the bystanders' delay.
	huge := bigEventPrefix(8 << 20)
	for i := range 2 {
		wg.Add(2)
		go func() { // huge events, reconnecting
			defer wg.Done()
			for time.Now().Before(deadline) {
				reconnects.Add(1)
				c, err := testkit.DialFrom(fmt.Sprintf("127.0.2.%d", i+1), e.addr("cot-tcp"))
				if err != nil {
					return
				}
				go c.Write(huge)
				cutOff(c, 5*time.Second)
				c.Close()
			}
		}()
		go func() { // the largest valid events, flat out
			defer wg.Done()
			c, err := testkit.DialFrom(fmt.Sprintf("127.0.3.%d", i+1), e.addr("cot-tcp"))
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			for n := 0; time.Now().Before(deadline); n++ {
				c.SetWriteDeadline(deadline)
				if _, err := c.Write(eventXML(fmt.Sprintf("FLOOD-%d-%d", i, n), 60<<10)); err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("the huge-event senders connected %d times", reconnects.Load())
	// Per flooding connection: a 5 s burst plus 64 KiB/s of history, and
	// SQLite's page and WAL overheads.
	secs := int64(d / time.Second)
	e.finish(limits{peakRSS: 64 << 20, dbGrowth: 2*(5+secs)*64<<10*3 + 2<<20, logGrowth: 64 << 10})
}

// Row 3: events addressed to thousands of <dest>. Before: 200 events with
// 20,000 dests took RSS from 71 to 374 MB. Now: such an event is over the
// message cap, and more than 256 dests is a malformed event.
func TestManyDests(t *testing.T) {
	e := start(t)
	c, err := testkit.DialFrom("127.0.4.1", e.addr("cot-tcp"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dests := func(n int) []cot.Dest {
		out := make([]cot.Dest, n)
		for i := range out {
			out[i] = cot.Dest{UID: fmt.Sprintf("U%d", i)}
		}
		return out
	}
	bad := takclient.Chat("DESTS", "x", dests(cot.MaxDests+1)...).AppendXML(nil)
	ok := takclient.Chat("DESTS", "x", dests(cot.MaxDests)...).AppendXML(nil)
	for range pick(200, 2000) {
		c.Write(bad)
		c.Write(ok)
	}
	// 20,000 dests in one event: over the message cap, cut off.
	huge := takclient.Chat("DESTS", "x", dests(20000)...).AppendXML(nil)
	go c.Write(huge)
	if !cutOff(c, 10*time.Second) {
		t.Error("a 20,000-dest event did not cut its sender off")
	}
	e.finish(limits{peakRSS: 64 << 20, dbGrowth: 1 << 20, logGrowth: 64 << 10})
}

// Row 4 (CoT half): reconnecting with enormous uids and callsigns. Before:
// 117 MiB of log in 1.6 s. Now: every client value in a log line is
// clipped, and the lines are rate-limited.
func TestLogInflationCoT(t *testing.T) {
	e := start(t)
	long := strings.Repeat("U", 60<<10)
	for i := range pick(20, 500) {
		c, err := takclient.Dial(e.addr("cot-tcp"), nil)
		if err != nil {
			t.Fatal(err)
		}
		ev := takclient.SA(fmt.Sprint(long, i), long, 1, 1)
		c.Send(ev)
		c.SendRaw(bigEventPrefix(128 << 10)) // and over the cap, for a warning
		<-c.Done()
	}
	e.finish(limits{peakRSS: 64 << 20, dbGrowth: 2 << 20, logGrowth: 64 << 10})
}

// Row 6: thousands of idle connections from one address; thousands of
// half-sent TLS ClientHellos. Before: new 8087 clients were reset and 14 of
// 27 TLS clients refused (the caps were per listener). Now: the caps are
// per source (maxConnectionsPerSource, maxPendingHandshakesPerSource).
func TestConnectionFloods(t *testing.T) {
	e := start(t)
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range pick(300, 4100) {
		c, err := testkit.DialFrom("127.0.5.1", e.addr("cot-tcp"))
		if err != nil {
			break // the kernel's backlog; the server is refusing fast enough
		}
		held = append(held, c)
	}
	hello := []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03} // a ClientHello's first bytes
	for i := range pick(200, 4500) {
		c, err := testkit.DialFrom(fmt.Sprintf("127.0.6.%d", 1+i%2), e.addr("cot-tls"))
		if err != nil {
			break
		}
		c.Write(hello)
		held = append(held, c)
	}
	// A new TCP client from another address is served at once.
	c, err := takclient.Dial(e.addr("cot-tcp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Send(takclient.SA("NEWCOMER", "NEW", 1, 1))
	if !e.tcp.waitFor(func(ev *cot.Event) bool { return ev.UID == "NEWCOMER" }, 5*time.Second) {
		t.Error("a new client's SA did not arrive during the flood")
	}
	// 27 valid TLS clients all complete their handshake.
	for i := range 27 {
		tc, err := takclient.Dial(e.addr("cot-tls"), e.clientTLS("mallory"))
		if err != nil {
			t.Errorf("valid TLS client %d refused during the flood: %v", i, err)
			continue
		}
		tc.Close()
	}
	e.finish(limits{peakRSS: 64 << 20, dbGrowth: 1 << 20, logGrowth: 64 << 10})
}

// Row 8: a client with a valid certificate sends SAs with another user's
// uid and callsign. Before: it received the victim's directed messages and,
// leaving, removed the victim's marker from every screen. Now: the uid is
// bound to the victim's certificate; the claim is refused and logged.
func TestImpersonation(t *testing.T) {
	e := start(t)
	mal, err := takclient.Dial(e.addr("cot-tls"), e.clientTLS("mallory"))
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		mal.Send(takclient.SA(e.tls.uid, e.tls.uid, 10, 10))
	}
	testkit.WaitFor(t, "the claim to be refused", func() bool {
		return e.p.Logged("position report refused: its uid belongs to another client (logged once per connection)")
	})
	// A message directed to the victim's uid reaches the victim only.
	e.tcp.c.Send(takclient.Chat("DM", "for the victim", cot.Dest{UID: e.tls.uid}))
	if !e.tls.waitFor(takclient.Type("b-t-f"), 5*time.Second) {
		t.Error("the victim did not receive its message")
	}
	if ev, err := mal.WaitFor(takclient.Type("b-t-f"), time.Second); err == nil {
		t.Errorf("the impostor received the victim's message: %s", ev.UID)
	}
	// The impostor leaves: no departure for the victim.
	mal.Close()
	if e.tcp.waitFor(takclient.Type("t-x-d-d"), 2*time.Second) {
		t.Error("a departure went out when the impostor left")
	}
	e.finish(limits{peakRSS: 64 << 20, dbGrowth: 1 << 20, logGrowth: 16 << 10})
}
