package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// fdMargin is the file descriptors the tool needs besides its connections.
const fdMargin = 64

// runner is one load run: the clients, the senders and the counters they
// share.
type runner struct {
	o        *options
	tls      []*tls.Config // nil: plain TCP
	sa       saTemplate
	progress io.Writer

	ctx        context.Context
	cancel     context.CancelFunc
	done       chan struct{} // closed at teardown
	closing    atomic.Bool
	throttling atomic.Bool // slow clients read slowly from now on
	t0         time.Time

	clients       []*client
	slotOf        []int32 // client index -> sender slot, -1: not a sender
	senders       []int   // sender slot -> client index
	firstMeasured []atomic.Uint32
	normal, slow  hists

	readyNormal, readySlow atomic.Int64
	readySent              atomic.Int64 // ready clients that sent their first SA

	sent, sendErrors               atomic.Int64 // measured SAs
	expectedNormal, expectedSlow   atomic.Int64
	pings                          atomic.Int64
	wg                             sync.WaitGroup // client goroutines
	mu                             sync.Mutex     // mu guards the maps below
	dialErrors, dialFailures, gone map[string]int
}

func newRunner(o *options, progress io.Writer) *runner {
	r := &runner{o: o, sa: saTemplate{pad: o.Size}, progress: progress, done: make(chan struct{}),
		normal: newHists(16), slow: newHists(16),
		dialErrors: map[string]int{}, dialFailures: map[string]int{}, gone: map[string]int{}}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	n := o.Clients
	protoSet := pick(n, o.Proto, 1)
	slowSet := pick(n, o.Slow, 2)
	r.slotOf = make([]int32, n)
	for i := range r.slotOf {
		r.slotOf[i] = -1
	}
	// Senders spread evenly over the clients.
	for k := range o.Senders {
		i := k * n / o.Senders
		r.slotOf[i] = int32(len(r.senders))
		r.senders = append(r.senders, i)
	}
	r.firstMeasured = make([]atomic.Uint32, len(r.senders))
	words := (n + 63) / 64
	r.clients = make([]*client, n)
	for i := range r.clients {
		c := &client{r: r, idx: i, proto: protoSet[i], slow: slowSet[i], seen: make([]uint64, words)}
		if c.slow {
			c.hist = r.slow.shard(i)
		} else {
			c.hist = r.normal.shard(i)
		}
		if len(r.senders) > 0 && !o.Idle {
			c.last = make([]uint32, len(r.senders))
		}
		r.clients[i] = c
	}
	return r
}

// pick chooses round(n*share) of n clients, the same ones on every run.
func pick(n int, share float64, seed uint64) []bool {
	out := make([]bool, n)
	k := int(float64(n)*share + 0.5)
	perm := rand.New(rand.NewPCG(seed, 0x6f75_7470_6f73_74)).Perm(n)
	for _, i := range perm[:k] {
		out[i] = true
	}
	return out
}

func (r *runner) since() time.Duration { return time.Since(r.t0) }

// sleepUntil sleeps until d after the run's start; false at teardown.
func (r *runner) sleepUntil(d time.Duration) bool { return r.sleepFor(d - r.since()) }

func (r *runner) sleepFor(d time.Duration) bool {
	if d <= 0 {
		return !r.closing.Load()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.done:
		return false
	}
}

func (r *runner) readyDelta(slow bool, d int64) {
	if slow {
		r.readySlow.Add(d)
	} else {
		r.readyNormal.Add(d)
	}
}

func (r *runner) count(m map[string]int, err error) {
	r.mu.Lock()
	m[classify(err)]++
	r.mu.Unlock()
}

// noteDialError counts a failed connection attempt; noteDialFailure a
// client that gave up.
func (r *runner) noteDialError(err error) {
	if r.ctx.Err() == nil {
		r.count(r.dialErrors, err)
	}
}

func (r *runner) noteDialFailure(err error) {
	if r.ctx.Err() == nil {
		r.count(r.dialFailures, err)
	}
}

// states counts the clients by state.
func (r *runner) states() (pending, ready, failed, gone int) {
	for _, c := range r.clients {
		switch c.state.Load() {
		case stPending:
			pending++
		case stReady:
			ready++
		case stFailed:
			failed++
		case stGone:
			gone++
		}
	}
	return
}

// replayed counts the ready clients that hold the SA of every other ready
// client that sent one.
func (r *runner) replayed() (complete, ready int) {
	sent := int(r.readySent.Load())
	for _, c := range r.clients {
		if c.state.Load() != stReady {
			continue
		}
		ready++
		want := sent
		if c.sentSA {
			want--
		}
		if int(c.distinct.Load()) >= want {
			complete++
		}
	}
	return complete, ready
}

// arrived counts the load SAs received so far, measured or not.
func (r *runner) arrived() (n int64) {
	for _, c := range r.clients {
		n += c.arrived.Load()
	}
	return n
}

func (r *runner) received() (normal, slow int64) {
	for _, c := range r.clients {
		if c.slow {
			slow += c.recv.Load()
		} else {
			normal += c.recv.Load()
		}
	}
	return
}

func (r *runner) logf(format string, a ...any) {
	if !r.o.Quiet {
		fmt.Fprintf(r.progress, "outpost-load: "+format+"\n", a...)
	}
}

// pinger sends ATAK's keepalive from every ready client that wrote nothing
// for --ping-interval.
func (r *runner) pinger() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-r.done:
			return
		case <-t.C:
		}
		limit := time.Now().Add(-r.o.PingEvery).UnixNano()
		for _, c := range r.clients {
			if r.closing.Load() {
				return
			}
			if c.state.Load() != stReady || c.lastSend.Load() > limit {
				continue
			}
			if c.write(func(dst []byte, proto bool) ([]byte, error) { return appendPing(dst, proto, c.idx) }) == nil {
				r.pings.Add(1)
			}
		}
	}
}

// sender sends SAs from one client at --rate until stop, marking those
// sent inside [winStart, winEnd) as measured and adding, for each, the
// clients then connected as expected deliveries.
func (r *runner) sender(slot int, stop <-chan struct{}, winStart, winEnd time.Time) {
	c := r.clients[r.senders[slot]]
	interval := time.Duration(float64(time.Second) / r.o.Rate)
	// Clients are not synchronised: each starts at a random phase.
	if !r.sleepFor(time.Duration(rand.Int64N(int64(interval)))) {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for seq := uint32(1); ; seq++ {
		if c.state.Load() != stReady {
			return
		}
		now := time.Now()
		measured := !now.Before(winStart) && now.Before(winEnd)
		if measured && r.firstMeasured[slot].Load() == 0 {
			r.firstMeasured[slot].Store(seq)
		}
		normal, slow := r.readyNormal.Load(), r.readySlow.Load()
		if c.slow {
			slow--
		} else {
			normal--
		}
		err := c.write(func(dst []byte, proto bool) ([]byte, error) {
			return r.sa.build(dst, proto, c.idx, seq, now, measured)
		})
		if err != nil {
			if measured {
				r.sendErrors.Add(1)
			}
			c.gone(err)
			return
		}
		if measured {
			r.sent.Add(1)
			r.expectedNormal.Add(normal)
			r.expectedSlow.Add(slow)
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// teardown closes every connection and waits for the client goroutines.
func (r *runner) teardown() {
	if r.closing.Swap(true) {
		return
	}
	close(r.done)
	r.cancel()
	for _, c := range r.clients {
		if nc := c.conn(); nc != nil {
			nc.Close()
		}
	}
	r.wg.Wait()
}

var errNoClient = errors.New("no client connected")
