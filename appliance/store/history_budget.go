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

	"outpost/appliance/rate"
)

// budgetBurst is how many seconds of its rate a bucket holds when full.
const budgetBurst = 5

// budget holds the buckets of every client and the totals.
type budget struct {
	clientRate, clientBytes float64
	totalRate, totalBytes   float64

	mu          sync.Mutex // mu guards everything below
	clients     map[uint64]*clientBuckets
	totalEvents rate.Bucket
	totalBytesB rate.Bucket
	lastSweep   time.Time
}

type clientBuckets struct {
	events, bytes rate.Bucket
}

// maxTrackedClients is when idle clients' buckets are swept.
const maxTrackedClients = 4096

func newBudget(o HistoryOptions) *budget {
	return &budget{clientRate: o.ClientRate, clientBytes: float64(o.ClientBytes),
		totalRate: o.TotalRate, totalBytes: float64(o.TotalBytes), clients: map[uint64]*clientBuckets{},
		totalEvents: rate.New(o.TotalRate, budgetBurst*time.Second),
		totalBytesB: rate.New(float64(o.TotalBytes), budgetBurst*time.Second)}
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
		c = &clientBuckets{events: rate.New(b.clientRate, budgetBurst*time.Second),
			bytes: rate.New(b.clientBytes, budgetBurst*time.Second)}
		b.clients[client] = c
	}
	// Check every bucket before taking from any, so a refused event costs
	// nothing.
	if !c.events.Has(now, 1) || !c.bytes.Has(now, n) || !b.totalEvents.Has(now, 1) || !b.totalBytesB.Has(now, n) {
		return false
	}
	c.events.Allow(now, 1)
	c.bytes.Allow(now, n)
	b.totalEvents.Allow(now, 1)
	b.totalBytesB.Allow(now, n)
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
		if c.events.Idle(now) && c.bytes.Idle(now) {
			delete(b.clients, id)
		}
	}
}
