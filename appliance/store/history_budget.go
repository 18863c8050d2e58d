package store

// The history budget (architecture.md "The relay": history has a byte
// budget). Routing never waits for storage, and storage never lets one
// client take it over: every event a client sends is charged to that
// client's token buckets (events per second and bytes per second) and to the
// totals of all clients; an event over budget is relayed but not stored, and
// counted. Events of the server itself (API objects, departures) are not
// charged.

import (
	"sync"
	"time"
)

// budgetBurst is how many seconds of its rate a bucket holds when full.
const budgetBurst = 5

// bucket is a token bucket; the zero value is empty (it fills from the
// first use on).
type bucket struct {
	tokens float64
	last   time.Time
}

// take removes n tokens if available after refilling at rate per second
// up to rate*budgetBurst. A rate <= 0 means unlimited.
func (b *bucket) take(now time.Time, rate, n float64) bool {
	if rate <= 0 {
		return true
	}
	capacity := rate * budgetBurst
	if b.last.IsZero() {
		b.tokens = capacity
	} else if dt := now.Sub(b.last).Seconds(); dt > 0 {
		b.tokens = min(capacity, b.tokens+dt*rate)
	}
	b.last = now
	if b.tokens < n {
		return false
	}
	b.tokens -= n
	return true
}

// budget holds the buckets of every client and the totals.
type budget struct {
	clientRate, clientBytes float64
	totalRate, totalBytes   float64

	mu          sync.Mutex // mu guards everything below
	clients     map[uint64]*clientBuckets
	totalEvents bucket
	totalBytesB bucket
	lastSweep   time.Time
}

type clientBuckets struct {
	events, bytes bucket
}

// maxTrackedClients is when idle clients' buckets are swept.
const maxTrackedClients = 4096

func newBudget(o HistoryOptions) *budget {
	return &budget{clientRate: o.ClientRate, clientBytes: float64(o.ClientBytes),
		totalRate: o.TotalRate, totalBytes: float64(o.TotalBytes), clients: map[uint64]*clientBuckets{}}
}

// admit charges one event of size bytes to client (0: the server, never
// charged) and reports whether it may be stored.
func (b *budget) admit(client uint64, size int, now time.Time) bool {
	if client == 0 {
		return true
	}
	n := float64(size)
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.clients[client]
	if c == nil {
		if len(b.clients) >= maxTrackedClients {
			b.sweep(now)
		}
		c = &clientBuckets{}
		b.clients[client] = c
	}
	// Check every bucket before taking from any, so a refused event costs
	// nothing.
	probe := func(bk *bucket, rate, amount float64) bool {
		saved := *bk
		ok := bk.take(now, rate, amount)
		*bk = saved
		return ok
	}
	if !probe(&c.events, b.clientRate, 1) || !probe(&c.bytes, b.clientBytes, n) ||
		!probe(&b.totalEvents, b.totalRate, 1) || !probe(&b.totalBytesB, b.totalBytes, n) {
		return false
	}
	c.events.take(now, b.clientRate, 1)
	c.bytes.take(now, b.clientBytes, n)
	b.totalEvents.take(now, b.totalRate, 1)
	b.totalBytesB.take(now, b.totalBytes, n)
	return true
}

// sweep forgets clients whose buckets have refilled (idle for the burst
// time): they start full again, which is what they would be.
func (b *budget) sweep(now time.Time) {
	if now.Sub(b.lastSweep) < time.Second {
		return
	}
	b.lastSweep = now
	for id, c := range b.clients {
		if now.Sub(c.events.last) > budgetBurst*time.Second && now.Sub(c.bytes.last) > budgetBurst*time.Second {
			delete(b.clients, id)
		}
	}
}
