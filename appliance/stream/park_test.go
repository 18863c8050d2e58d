package stream

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"outpost/appliance/broker"
	"outpost/internal/testkit"
)

// TestIdleReadersKeepSmallStacks: after every client pinged once (the
// server decoded a message on each connection and answered it), the
// goroutine that waits for the next message still has the runtime's 2 KiB
// minimum stack. A reader that decodes on the goroutine that waits keeps
// the 4 KiB or more it grew to for as long as the client stays
// (docs/architecture.md "Memory per connection").
func TestIdleReadersKeepSmallStacks(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector enlarges stack frames")
	}
	if runtime.GOOS != "linux" {
		t.Skip("readers wait in Read where nonblocking reads are not available")
	}
	// The runtime starts goroutines with the average stack size it saw at
	// the last collection, which in a test binary (few goroutines, deep
	// test frames) is more than 2 KiB. A server with thousands of
	// connections starts them at 2 KiB; the test runs itself again with
	// that fixed, to measure what waiting and decoding do to a stack.
	if os.Getenv("OUTPOST_STACK_TEST") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestIdleReadersKeepSmallStacks$", "-test.v")
		cmd.Env = append(os.Environ(), "OUTPOST_STACK_TEST=1", "GODEBUG=adaptivestackstart=0")
		out, err := cmd.CombinedOutput()
		t.Logf("%s", out)
		if err != nil || !strings.Contains(string(out), "bytes per idle connection") {
			t.Fatalf("the measuring run failed: %v", err)
		}
		return
	}
	s := start(t, Config{}, broker.Options{})
	const clients = 1000
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
	// The writers that sent the pongs end once their queues stay empty.
	testkit.WaitFor(t, "one goroutine per connection", func() bool { return runtime.NumGoroutine() <= goroutines+clients })
	perConn := (stackInUse() - before) / clients
	t.Logf("goroutine stacks: %d bytes per idle connection", perConn)
	// Measured: 2.5 to 3.7 KiB per connection (the stack spans that hold the
	// waiting goroutines' 2 KiB stacks also hold freed ones), against 5.4
	// KiB and more when the goroutine that waits also decodes: its stack
	// has grown to 4 KiB for good.
	if perConn > 4608 {
		t.Fatalf("goroutine stacks grew by %d bytes per idle connection, want the waiting goroutines at 2 KiB", perConn)
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
