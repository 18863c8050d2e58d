package broker

import (
	"sort"
	"sync"
	"time"

	"outpost/appliance/cot"
)

// Retained events are server-side objects every client must see whatever
// the time it connects: geo objects saved for repeating, persistent objects
// and active emergencies (protocol.md §5: replayed on connect). Each is
// queued to every new session after the latest SAs, and re-broadcast to
// everyone every `every` (0: only replayed) until released.
type retainer struct {
	mu    sync.Mutex // mu guards items, ticker and stopped
	items map[string]*retained
	wake  chan struct{}
	quit  chan struct{}
	done  chan struct{}
	run   bool
	seq   uint64
}

type retained struct {
	env   *Envelope
	every time.Duration
	next  time.Time
	seq   uint64 // insertion order, for a stable replay order
}

// Retain keeps ev for replay to every session of groups (a mask) that joins
// from now on and, when every > 0, re-broadcasts it to them each `every`. A
// second Retain with the same key replaces the first. The caller publishes
// ev itself (Publish, PublishTo) when it should also go out now.
func (b *Broker) Retain(key string, ev *cot.Event, every time.Duration, groups uint64) {
	draining := b.Draining()
	r := &b.retain
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.items == nil {
		r.items = map[string]*retained{}
	}
	r.seq++
	env := NewEnvelope(ev)
	env.groups = groups
	env.at = b.opts.Now()
	r.items[key] = &retained{env: env, every: every, next: env.at.Add(every), seq: r.seq}
	if every > 0 && !r.run && !draining {
		r.run = true
		r.wake = make(chan struct{}, 1)
		r.quit = make(chan struct{})
		r.done = make(chan struct{})
		go b.repeatLoop(r.wake, r.quit, r.done)
	}
	if r.wake != nil {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// Release stops retaining key and reports whether it was retained.
func (b *Broker) Release(key string) bool {
	r := &b.retain
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.items[key]
	delete(r.items, key)
	return ok
}

// Retained returns the retained events by key.
func (b *Broker) Retained() map[string]*cot.Event {
	r := &b.retain
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]*cot.Event, len(r.items))
	for k, it := range r.items {
		out[k] = it.env.Event
	}
	return out
}

// envelopes returns the retained envelopes in the order they were retained.
func (r *retainer) envelopes() []*Envelope {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.items) == 0 {
		return nil
	}
	its := make([]*retained, 0, len(r.items))
	for _, it := range r.items {
		its = append(its, it)
	}
	sort.Slice(its, func(i, j int) bool { return its[i].seq < its[j].seq })
	out := make([]*Envelope, len(its))
	for i, it := range its {
		out[i] = it.env
	}
	return out
}

// due returns the envelopes to re-broadcast at now and when to look next.
func (r *retainer) due(now time.Time) (envs []*Envelope, next time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	next = time.Minute
	for _, it := range r.items {
		if it.every <= 0 {
			continue
		}
		if !now.Before(it.next) {
			envs = append(envs, it.env)
			it.next = now.Add(it.every)
		}
		next = min(next, it.next.Sub(now))
	}
	return envs, max(next, 10*time.Millisecond)
}

// stop ends the re-broadcasts (Drain).
func (r *retainer) stop() {
	r.mu.Lock()
	run, quit, done := r.run, r.quit, r.done
	r.run = false
	r.mu.Unlock()
	if run {
		close(quit)
		<-done
	}
}

// repeatLoop re-broadcasts retained events when they are due. It is the
// broker's only goroutine and does no I/O: delivering is queueing.
func (b *Broker) repeatLoop(wake, quit, done chan struct{}) {
	defer close(done)
	r := &b.retain
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-wake:
		case <-t.C:
		}
		envs, next := r.due(b.opts.Now())
		for _, env := range envs {
			b.stats.repeated.Add(1)
			b.broadcast(env, nil, nil)
		}
		t.Reset(next)
	}
}
