package rate

import (
	"sync"
	"time"
)

// Keyed budgets what each key (a client's address) may do: events per
// second and bytes per second, each bucket holding Burst of its rate. A
// key's buckets start full; keys whose buckets are full again are
// forgotten once more than MaxKeys are held. Safe for concurrent use.
type Keyed[K comparable] struct {
	events, bytes float64
	burst         time.Duration
	maxKeys       int

	mu        sync.Mutex // mu guards keys and lastSweep
	keys      map[K]*keyed
	lastSweep time.Time
}

type keyed struct{ events, bytes Bucket }

// NewKeyed returns the budgets of keys: events and bytes per second (<= 0:
// unlimited), bursts of burst, at most maxKeys remembered while they are
// busy (default 4096).
func NewKeyed[K comparable](events, bytes float64, burst time.Duration, maxKeys int) *Keyed[K] {
	if maxKeys <= 0 {
		maxKeys = 4096
	}
	return &Keyed[K]{events: events, bytes: bytes, burst: burst, maxKeys: maxKeys, keys: map[K]*keyed{}}
}

// Take charges one event of size bytes to key, all or nothing. When it is
// refused, wait is how long until it would be taken.
func (k *Keyed[K]) Take(key K, now time.Time, size int) (ok bool, wait time.Duration) {
	if k.events <= 0 && k.bytes <= 0 {
		return true, 0
	}
	n := float64(size)
	k.mu.Lock()
	defer k.mu.Unlock()
	b := k.keys[key]
	if b == nil {
		if len(k.keys) >= k.maxKeys {
			k.sweep(now)
		}
		b = &keyed{events: New(k.events, k.burst), bytes: New(k.bytes, k.burst)}
		k.keys[key] = b
	}
	if w := max(b.events.Wait(now, 1), b.bytes.Wait(now, n)); w > 0 {
		return false, w
	}
	b.events.Allow(now, 1)
	b.bytes.Allow(now, min(n, b.bytes.capacity())) // one event larger than the burst costs a full bucket
	return true, 0
}

// sweep forgets keys whose buckets are full again (at most once a second).
func (k *Keyed[K]) sweep(now time.Time) {
	if now.Sub(k.lastSweep) < time.Second {
		return
	}
	k.lastSweep = now
	for key, b := range k.keys {
		if b.events.Idle(now) && b.bytes.Idle(now) {
			delete(k.keys, key)
		}
	}
}
