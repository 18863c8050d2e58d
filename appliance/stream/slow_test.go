package stream

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// TestSlowConsumer: a client that stops reading is disconnected with reason
// "slow consumer", and while it is stalled the other clients keep receiving
// promptly. Latencies are logged (median, max); the only bound asserted is
// far above normal delivery and below the stalled client's write timeout,
// i.e. "the others were not made to wait for the stalled one".
func TestSlowConsumer(t *testing.T) {
	const writeTimeout = 3 * time.Second
	s := start(t, Config{WriteTimeout: writeTimeout},
		broker.Options{SoftBytes: 64 << 10, HardBytes: 256 << 10})

	// The stalled client: a raw socket with a tiny receive buffer that
	// never reads after connecting.
	stalled, err := net.Dial("tcp", s.l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	stalled.(*net.TCPConn).SetReadBuffer(4096)
	testkit.WaitFor(t, "stalled session", func() bool { return len(s.b.Sessions()) == 1 })
	stalledSess := s.b.Sessions()[0]

	tx := s.dial(t)
	rx := s.dial(t)
	testkit.WaitFor(t, "three sessions", func() bool { return len(s.b.Sessions()) == 3 })

	// Chats are never coalesced: the stalled queue must grow to the hard
	// limit (or the write deadline must pass). Each carries its send time.
	pad := strings.Repeat("p", 2000)
	var lat []time.Duration
	sent := 0
	deadline := time.Now().Add(30 * time.Second)
	for stalledSess.Reason() == broker.ReasonNone {
		if time.Now().After(deadline) {
			t.Fatal("stalled client never disconnected")
		}
		for i := 0; i < 20; i++ {
			ev := takclient.Chat(fmt.Sprintf("c%d", sent), strconv.FormatInt(time.Now().UnixNano(), 10)+" "+pad)
			if err := tx.Send(ev); err != nil {
				t.Fatal(err)
			}
			sent++
		}
		for len(lat) < sent {
			ev, err := rx.WaitFor(takclient.Type("b-t-f"), 10*time.Second)
			if err != nil {
				t.Fatalf("fast client stopped receiving after %d of %d: %v", len(lat), sent, err)
			}
			lat = append(lat, time.Since(sentAt(t, ev)))
		}
	}
	if r := stalledSess.Reason(); !r.SlowConsumer() {
		t.Fatalf("stalled client closed with %q, want a slow-consumer reason", r)
	}
	if cl := s.b.Stats().Closed; cl[broker.ReasonQueueLimit]+cl[broker.ReasonWriteDeadline] != 1 {
		t.Fatalf("counters %v", s.b.Stats().Closed)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	med, max := lat[len(lat)/2], lat[len(lat)-1]
	t.Logf("fast client latency while the other stalled: %d events, median %v, max %v", len(lat), med, max)
	if max >= writeTimeout/2 {
		t.Fatalf("fast client waited %v: it was held up by the stalled one", max)
	}
	// The server really let go of the stalled connection. (Reading the
	// client side to EOF is not a good check: with the tiny receive window
	// the kernel's zero-window probes back off and the tail arrives slowly.)
	testkit.WaitFor(t, "the server to drop the stalled connection", func() bool { return s.l.Stats().Open == 2 })
}

func sentAt(t *testing.T, ev *cot.Event) time.Time {
	t.Helper()
	x := string(ev.Detail.XML)
	i := strings.Index(x, "<remarks>")
	if i < 0 {
		t.Fatalf("no remarks in %s", x)
	}
	x = x[i+len("<remarks>"):]
	ns, err := strconv.ParseInt(x[:strings.IndexByte(x, ' ')], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Unix(0, ns)
}
