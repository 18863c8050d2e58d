// Package rate is the token bucket every limit of Outpost is built on: the
// history budget (refuse what is over), the password gate (refuse), the
// per-connection read throttle (wait until the client is within its rate)
// and, per key (Keyed), the mission log writes of each client address.
// A Bucket holds up to Rate×Burst tokens and refills at Rate per second; it
// is not safe for concurrent use (callers hold their own lock or own it).
//
// Imports: no other package of ours.
package rate

import "time"

// Bucket is a token bucket. The zero value with Rate 0 is unlimited; a new
// bucket starts full.
type Bucket struct {
	Rate  float64       // tokens per second; <= 0: unlimited
	Burst time.Duration // how many seconds of Rate the bucket holds (default 1 s)

	tokens float64
	last   time.Time
	primed bool
}

// New returns a full bucket.
func New(rate float64, burst time.Duration) Bucket { return Bucket{Rate: rate, Burst: burst} }

func (b *Bucket) capacity() float64 {
	burst := b.Burst
	if burst <= 0 {
		burst = time.Second
	}
	return max(b.Rate*burst.Seconds(), 1)
}

// refill brings the tokens up to now.
func (b *Bucket) refill(now time.Time) {
	c := b.capacity()
	if !b.primed {
		b.tokens, b.last, b.primed = c, now, true
		return
	}
	if dt := now.Sub(b.last).Seconds(); dt > 0 {
		b.tokens = min(c, b.tokens+dt*b.Rate)
		b.last = now
	}
}

// Allow takes n tokens and reports true if they are there; otherwise it
// takes nothing and reports false.
func (b *Bucket) Allow(now time.Time, n float64) bool {
	if b.Rate <= 0 {
		return true
	}
	b.refill(now)
	if b.tokens < n {
		return false
	}
	b.tokens -= n
	return true
}

// Has reports whether n tokens are there, taking nothing.
func (b *Bucket) Has(now time.Time, n float64) bool {
	if b.Rate <= 0 {
		return true
	}
	b.refill(now)
	return b.tokens >= n
}

// Wait is how long until n tokens are there (0: now), taking nothing. More
// than the bucket holds counts as a full bucket.
func (b *Bucket) Wait(now time.Time, n float64) time.Duration {
	if b.Rate <= 0 {
		return 0
	}
	b.refill(now)
	n = min(n, b.capacity())
	if b.tokens >= n {
		return 0
	}
	return time.Duration((n - b.tokens) / b.Rate * float64(time.Second))
}

// Debit takes n tokens whether or not they are there (the balance may go
// negative) and returns how long the caller should wait until the balance
// is back to zero: the pacing of a throttle.
func (b *Bucket) Debit(now time.Time, n float64) time.Duration {
	if b.Rate <= 0 {
		return 0
	}
	b.refill(now)
	b.tokens -= n
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.Rate * float64(time.Second))
}

// Refund gives back n tokens taken for something that turned out not to
// count, up to the bucket's capacity.
func (b *Bucket) Refund(n float64) {
	if b.Rate <= 0 || !b.primed {
		return
	}
	b.tokens = min(b.capacity(), b.tokens+n)
}

// Idle reports whether the bucket is full again at now (a holder may
// forget it: a new one starts full).
func (b *Bucket) Idle(now time.Time) bool {
	if b.Rate <= 0 || !b.primed {
		return true
	}
	return b.tokens+now.Sub(b.last).Seconds()*b.Rate >= b.capacity()
}
