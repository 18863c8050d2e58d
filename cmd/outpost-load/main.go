// Command outpost-load is Outpost's load tool. It connects N simulated TAK
// clients to a running server's CoT port (a share of them negotiated to
// protobuf), has a few of them send position reports at a fixed rate, and
// measures how long each report takes to reach the other clients.
// It prints delivered counts, latency percentiles and, when given the
// server's pid, the server's resident memory.
//
//	outpost-load -addr 127.0.0.1:8087 -clients 500 -senders 10 -rate 1 -duration 30s -pid $(pidof outpost)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/takclient"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8087", "CoT TCP address of the server")
	clients := flag.Int("clients", 100, "connected clients")
	senders := flag.Int("senders", 5, "clients that send position reports")
	rate := flag.Float64("rate", 1, "position reports per second per sender")
	protoShare := flag.Float64("proto", 0.5, "share of clients that negotiate TAK protocol v1")
	duration := flag.Duration("duration", 20*time.Second, "measurement time")
	pid := flag.Int("pid", 0, "server process id, to report its resident memory")
	flag.Parse()
	if *clients < 2 || *senders < 1 || *senders > *clients || *rate <= 0 {
		fmt.Fprintln(os.Stderr, "outpost-load: need clients >= 2, 1 <= senders <= clients, rate > 0")
		os.Exit(2)
	}
	if err := run(*addr, *clients, *senders, *rate, *protoShare, *duration, *pid); err != nil {
		fmt.Fprintln(os.Stderr, "outpost-load:", err)
		os.Exit(1)
	}
}

type result struct {
	mu  sync.Mutex
	lat []time.Duration
}

func (r *result) add(d time.Duration) {
	r.mu.Lock()
	r.lat = append(r.lat, d)
	r.mu.Unlock()
}

func run(addr string, n, senders int, rate, protoShare float64, duration time.Duration, pid int) error {
	fmt.Printf("connecting %d clients to %s (%.0f%% protobuf)\n", n, addr, protoShare*100)
	rssBefore := rss(pid)
	cs := make([]*takclient.Client, n)
	nProto := int(float64(n) * protoShare)
	for i := range cs {
		c, err := takclient.Dial(addr, nil)
		if err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
		defer c.Close()
		if i < nProto {
			if err := c.Negotiate(10 * time.Second); err != nil {
				return fmt.Errorf("client %d negotiation: %w", i, err)
			}
		}
		cs[i] = c
	}
	// Every client identifies itself, as ATAK does on connect.
	for i, c := range cs {
		if err := c.Send(takclient.SA(fmt.Sprintf("LOAD-%d", i), fmt.Sprintf("L%d", i), 59, 18)); err != nil {
			return err
		}
	}
	time.Sleep(2 * time.Second)
	res := &result{}
	var received atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	sendCtx, stopSending := context.WithCancel(ctx)
	var wg, swg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ev, err := c.Next(time.Second)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					continue
				}
				if sent, ok := sentAt(ev); ok {
					res.add(time.Since(sent))
					received.Add(1)
				}
			}
		}()
	}
	var sent atomic.Int64
	interval := time.Duration(float64(time.Second) / rate)
	for s := 0; s < senders; s++ {
		swg.Add(1)
		go func() {
			defer swg.Done()
			t := time.NewTicker(interval)
			defer t.Stop()
			for {
				select {
				case <-sendCtx.Done():
					return
				case <-t.C:
					ev := takclient.SA(fmt.Sprintf("LOAD-%d", s), fmt.Sprintf("L%d", s), 59, 18)
					// The send time rides in <remarks>; receivers read it back.
					ev.Detail.XML = append(ev.Detail.XML, []byte("<remarks>sent="+strconv.FormatInt(time.Now().UnixNano(), 10)+"</remarks>")...)
					if cs[s].Send(ev) == nil {
						sent.Add(1)
					}
				}
			}
		}()
	}
	start := time.Now()
	cpuStart := cpuSeconds(pid)
	time.Sleep(duration)
	stopSending()
	swg.Wait()
	elapsed := time.Since(start)
	cpuUsed := cpuSeconds(pid) - cpuStart
	// Let what is in flight arrive before counting.
	time.Sleep(2 * time.Second)
	cancel()
	wg.Wait()

	lat := res.lat
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	want := sent.Load() * int64(n-1)
	fmt.Printf("sent %d reports in %v; %d of %d expected deliveries (%.2f%%), %.0f deliveries/s\n",
		sent.Load(), elapsed.Round(time.Millisecond), received.Load(), want,
		100*float64(received.Load())/float64(max(want, 1)), float64(received.Load())/elapsed.Seconds())
	if len(lat) > 0 {
		p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
		fmt.Printf("latency: p50 %v  p90 %v  p99 %v  max %v\n", p(0.5), p(0.9), p(0.99), lat[len(lat)-1])
	}
	if pid > 0 {
		fmt.Printf("server RSS: %s before connecting, %s with %d clients\n", rssBefore, rss(pid), n)
		if cpuUsed >= 0 {
			fmt.Printf("server CPU: %.2f s in %v (%.1f%% of one core)\n", cpuUsed, elapsed.Round(time.Millisecond), 100*cpuUsed/elapsed.Seconds())
		}
	}
	return nil
}

// sentAt reads the send time the sender put into the remarks.
func sentAt(ev *cot.Event) (time.Time, bool) {
	x := string(ev.Detail.XML)
	i := strings.Index(x, "sent=")
	if i < 0 {
		return time.Time{}, false
	}
	x = x[i+5:]
	j := strings.IndexByte(x, '<')
	if j < 0 {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(x[:j], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

// cpuSeconds reads a process's user+system CPU time from /proc (Linux
// only); -1 when unavailable.
func cpuSeconds(pid int) float64 {
	if pid <= 0 {
		return -1
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// Fields after the command name (which may contain spaces) start after ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return (utime + stime) / 100 // clock ticks; USER_HZ is 100 on Linux
}

// rss reads a process's resident set size from /proc (Linux only).
func rss(pid int) string {
	if pid <= 0 {
		return "n/a"
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "n/a"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:"))
		}
	}
	return "n/a"
}
