package stream

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The gathering window of busy connections. A connection that was written
// to within busyWithin is busy: its next events wait up to gatherWindow so
// that one system call carries several (writer.go). Instead of a timer and
// a waiting goroutine per busy connection, a flusher keeps the window for
// all of them: every gatherWindow its goroutine writes each due connection
// in turn, with writes that never wait (netx TryWritev and TryUncork). A
// client whose socket does not take the whole batch gets a goroutine of its
// own for the rest (writer.loop, which begins with writeRest), so it never
// holds up the others.
// Measured at 200 clients x 5 SA/s: BENCHMARKS.md "Load scenarios".
//
// A listener has one flusher per processor the runtime uses, each with its
// share of the connections. (Four per processor, tried at 200 x 5, cut p99
// by about 0.4 ms, shorter rounds, for 2-3 % more CPU; sixteen by about
// 1 ms for about 7 % more. More flushers also mean fewer connections held up
// when the system pauses one round's thread.) Its goroutine exists only
// while some connection is due: a round that leaves none ends it.

type flusher struct {
	mu      sync.Mutex // guards due and running
	due     []*writer  // written in the next round; each owns its writer's writing side
	running bool       // the round goroutine exists
}

// flushers are a listener's flushers; pick spreads connections over them.
type flushers struct {
	shards []*flusher
	next   atomic.Uint32
}

func newFlushers() *flushers {
	fs := &flushers{shards: make([]*flusher, max(1, runtime.GOMAXPROCS(0)))}
	for i := range fs.shards {
		fs.shards[i] = &flusher{}
	}
	return fs
}

func (fs *flushers) pick() *flusher {
	return fs.shards[int(fs.next.Add(1))%len(fs.shards)]
}

// add puts w in the next round. The caller hands over w's writing side
// (w.running stays true until a round releases it).
func (f *flusher) add(w *writer) {
	f.mu.Lock()
	f.due = append(f.due, w)
	start := !f.running
	f.running = true
	f.mu.Unlock()
	if start {
		go f.rounds()
	}
}

// rounds writes the due connections every gatherWindow until a round
// leaves none due.
func (f *flusher) rounds() {
	t := time.NewTimer(gatherWindow)
	defer t.Stop()
	var round, keep []*writer
	for {
		<-t.C
		began := time.Now()
		f.mu.Lock()
		round, f.due = f.due, round[:0]
		f.mu.Unlock()
		keep = keep[:0]
		for i, w := range round {
			if w.flush() {
				keep = append(keep, w)
			}
			round[i] = nil
		}
		f.mu.Lock()
		f.due = append(f.due, keep...)
		clear(keep)
		if len(f.due) == 0 {
			f.running = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		// Rounds begin every gatherWindow: the time a round takes does not
		// add to the wait of the next one's events.
		t.Reset(max(0, gatherWindow-time.Since(began)))
	}
}
