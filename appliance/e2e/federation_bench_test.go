//go:build unix

package e2e

import (
	"bufio"
	"bytes"
	"flag"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"outpost/appliance/apptest"
	"outpost/appliance/config"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
)

// BenchmarkFederationLoad (BENCHMARKS.md "Federation"): 200 TCP clients on
// A each send 5 positions a second; 200 TCP clients only read, on A
// (direct) or on B, which A is federated to (one link). It reports what
// the readers got of the positions sent in the window (lost, duplicated),
// "alone" is direct without the link (A not federated): the process's CPU
// above it in "federated" is what the link costs.
// the latency from the position's time to its reading, and the process's
// CPU (both servers and every client: one process) per delivery. Run it
// once per mode:
//
//	go test -run '^$' -bench FederationLoad -benchtime 1x ./appliance/e2e
//
// -fedbench.window sets the window (default 30s).
func BenchmarkFederationLoad(b *testing.B) {
	for _, mode := range []string{"alone", "direct", "federated"} {
		b.Run(mode, func(b *testing.B) { fedLoad(b, mode) })
	}
}

const (
	fbSenders   = 200
	fbReceivers = 200
	fbRate      = 5
	fbWarmup    = 5 * time.Second
	fbMaxSeq    = 1024 // positions one sender sends at most
)

// fbReceiver counts what one reader got.
type fbReceiver struct {
	seen [fbSenders][fbMaxSeq / 64]uint64
	dups int64
	lat  []int32 // milliseconds, one per position read
}

// fedBenchWindow is how long BenchmarkFederationLoad sends
// (-fedbench.window).
var fedBenchWindow = flag.Duration("fedbench.window", 30*time.Second, "how long BenchmarkFederationLoad sends")

func fedLoad(b *testing.B, mode string) {
	window := *fedBenchWindow
	ca := newFedCA(b, "Federation CA")
	mutate := func(name string, federates ...string) func(*config.Config) {
		certFile, keyFile, _ := ca.issue(b, name)
		return func(c *config.Config) {
			c.FederationPort, c.FederationTrust = 0, ca.trust()
			c.FederationCert, c.FederationKey = certFile, keyFile
			c.FederationName = name
			c.Federates = federates
			c.MaxConnections, c.MaxConnectionsPerSource = 2000, 0
		}
	}
	srvB := apptest.Start(b, mutate("bravo-server"))
	var srvA *apptest.App
	if mode == "alone" {
		srvA = apptest.Start(b, mutate("alpha-server"))
	} else {
		srvA = apptest.Start(b, mutate("alpha-server", "B="+fedListener(b, srvB)))
		waitFedTB(b, srvA, "B")
	}
	readAt := srvA
	if mode == "federated" {
		readAt = srvB
	}

	// The readers first.
	recv := make([]*fbReceiver, fbReceivers)
	var readers sync.WaitGroup
	var received atomic.Int64
	for i := range recv {
		r := &fbReceiver{}
		recv[i] = r
		c, err := net.Dial("tcp", readAt.Addr(b, netx.ListenerCoTTCP))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		readers.Add(1)
		go func() { defer readers.Done(); r.read(c, &received) }()
	}
	// The senders, each reading (and discarding) what it is sent.
	stop := make(chan struct{})
	var senders sync.WaitGroup
	first, last := make([]atomic.Int64, fbSenders), make([]atomic.Int64, fbSenders)
	var measuring atomic.Bool
	var sendErr atomic.Int64
	for i := range fbSenders {
		c, err := net.Dial("tcp", srvA.Addr(b, netx.ListenerCoTTCP))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		go func() { _, _ = io.Copy(io.Discard, c) }()
		first[i].Store(-1)
		senders.Add(1)
		go func() {
			defer senders.Done()
			time.Sleep(time.Duration(i) * time.Second / fbRate / fbSenders) // spread over the period
			t := time.NewTicker(time.Second / fbRate)
			defer t.Stop()
			uid := "FB-" + strconv.Itoa(i)
			for seq := 0; seq < fbMaxSeq; seq++ {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				ev := takclient.SA(uid, uid, float64(seq), float64(i))
				if measuring.Load() {
					first[i].CompareAndSwap(-1, int64(seq))
					last[i].Store(int64(seq))
				}
				_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
				if _, err := c.Write(ev.AppendXML(nil)); err != nil {
					sendErr.Add(1)
					return
				}
			}
		}()
	}
	time.Sleep(fbWarmup)
	cpu0, rec0 := cpuTime(), received.Load()
	measuring.Store(true)
	b.ResetTimer()
	time.Sleep(window)
	measuring.Store(false)
	cpu1, rec1 := cpuTime(), received.Load()
	b.StopTimer()
	close(stop)
	senders.Wait()
	// Drain: until nothing more arrives for 3 s.
	for prev := int64(-1); prev != received.Load(); {
		prev = received.Load()
		time.Sleep(3 * time.Second)
	}
	var expected, got, dups int64
	var lats []int32
	for _, r := range recv {
		for s := range fbSenders {
			f, l := first[s].Load(), last[s].Load()
			if f < 0 {
				continue
			}
			for q := f; q <= l; q++ {
				expected++
				if r.seen[s][q/64]&(1<<(q%64)) != 0 {
					got++
				}
			}
		}
		dups += r.dups
		lats = append(lats, r.lat...)
	}
	slices.Sort(lats)
	pct := func(p float64) float64 {
		if len(lats) == 0 {
			return 0
		}
		return float64(lats[min(len(lats)-1, int(p*float64(len(lats))))])
	}
	deliveries := rec1 - rec0
	b.ReportMetric(float64(expected-got), "lost")
	b.ReportMetric(float64(dups), "dups")
	b.ReportMetric(float64(expected), "expected")
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lats[len(lats)-1]), "max-ms")
	b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(max(deliveries, 1)), "cpu-µs/delivery")
	b.ReportMetric(float64(cpu1-cpu0)/float64(window), "cores")
	if sendErr.Load() > 0 {
		b.Errorf("%d senders failed", sendErr.Load())
	}
}

// read counts the positions of the senders (FB-<n>) on c until it closes.
func (r *fbReceiver) read(c net.Conn, received *atomic.Int64) {
	readEvents(c, func(ev []byte, now time.Time) { r.event(ev, now, received) })
}

// readEvents calls fn with each event read from c (its XML up to, without,
// "</event>") and when its last bytes arrived, until c closes.
func readEvents(c net.Conn, fn func(ev []byte, now time.Time)) {
	br := bufio.NewReaderSize(c, 64<<10)
	var buf []byte
	end := []byte("</event>")
	chunk := make([]byte, 32<<10)
	for {
		n, err := br.Read(chunk)
		if err != nil {
			return
		}
		now := time.Now()
		buf = append(buf, chunk[:n]...)
		for {
			i := bytes.Index(buf, end)
			if i < 0 {
				break
			}
			fn(buf[:i], now)
			buf = buf[i+len(end):]
		}
		buf = append([]byte(nil), buf...)
	}
}

func (r *fbReceiver) event(ev []byte, now time.Time, received *atomic.Int64) {
	uid := attr(ev, ` uid="`)
	if !bytes.HasPrefix(uid, []byte("FB-")) {
		return
	}
	s, err1 := strconv.Atoi(string(uid[3:]))
	lat, err2 := strconv.ParseFloat(string(attr(ev, ` lat="`)), 64)
	at, err3 := time.Parse("2006-01-02T15:04:05.000Z", string(attr(ev, ` time="`)))
	if err1 != nil || err2 != nil || err3 != nil || s < 0 || s >= fbSenders || lat < 0 || lat >= fbMaxSeq {
		return
	}
	q := int(lat)
	if r.seen[s][q/64]&(1<<(q%64)) != 0 {
		r.dups++
		return
	}
	r.seen[s][q/64] |= 1 << (q % 64)
	r.lat = append(r.lat, int32(now.Sub(at).Milliseconds()))
	received.Add(1)
}

func attr(ev []byte, name string) []byte {
	i := bytes.Index(ev, []byte(name))
	if i < 0 {
		return nil
	}
	v := ev[i+len(name):]
	j := bytes.IndexByte(v, '"')
	if j < 0 {
		return nil
	}
	return v[:j]
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func waitFedTB(tb testing.TB, a *apptest.App, name string) {
	deadline := time.Now().Add(fedWait)
	for !fedStats(a, name).Connected {
		if time.Now().After(deadline) {
			tb.Fatalf("federate %s never connected", name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
