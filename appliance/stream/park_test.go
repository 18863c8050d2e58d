package stream

import (
	"bufio"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"outpost/appliance/broker"
	"outpost/internal/testkit"
)

// TestIdleConnectionsHoldNoGoroutine: after every client pinged once (the
// server decoded a message on each connection and answered it), an idle
// connection has no goroutine and no stack: it waits on the listener's
// waiter (parked.go, docs/architecture.md "Memory per connection").
func TestIdleConnectionsHoldNoGoroutine(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("readers wait in Read where the waiter is not available")
	}
	s := start(t, Config{}, broker.Options{})
	const clients = 2000
	before, goroutines := stackInUse(), runtime.NumGoroutine()
	conns := make([]net.Conn, clients)
	for i := range conns {
		c, err := net.Dial("tcp", s.l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i] = c
	}
	ping := `<event version="2.0" uid="ANDROID-1-ping" type="t-x-c-t" how="h-g-i-g-o" time="2026-01-01T00:00:00Z" start="2026-01-01T00:00:00Z" stale="2026-01-01T00:00:20Z"><point lat="0" lon="0" hae="0" ce="9999999" le="9999999"/><detail/></event>`
	for _, c := range conns {
		if _, err := c.Write([]byte(ping)); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(wait))
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('>')
			if err != nil {
				t.Fatalf("client %d: no pong: %v", i, err)
			}
			if strings.Contains(line, `type="t-x-c-t-r"`) {
				break
			}
		}
	}
	// The writers that sent the pongs end once their queues stay empty, and
	// the reading pool's goroutines a second after their last job.
	testkit.WaitFor(t, "no goroutine per idle connection", func() bool { return runtime.NumGoroutine() <= goroutines+8 })
	perConn := (stackInUse() - before) / clients
	t.Logf("goroutine stacks: %d bytes per idle connection", perConn)
	// A goroutine waiting per connection would hold at least 2 KiB. The
	// runtime keeps some stack memory of ended goroutines cached (up to
	// 0.7 MiB measured after this test's churn of short writer runs), hence
	// 2,000 connections and a bound of half that.
	if perConn > 1024 {
		t.Fatalf("goroutine stacks grew by %d bytes per idle connection", perConn)
	}
	if n := s.l.waiter.Len(); n != clients {
		t.Fatalf("%d connections wait on the waiter, want %d", n, clients)
	}
}

// stackInUse is the memory of goroutine stacks after collections have had
// the chance to shrink them and free those of ended goroutines.
func stackInUse() int {
	var ms runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return int(ms.StackInuse)
}
