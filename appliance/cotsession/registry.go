package cotsession

import (
	"context"
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"outpost/appliance/broker"
)

// Driver is the CoT session driver of one listener: the sessions' shared
// configuration and counters (core), and the registry of its open
// connections. A connection takes a place with Enter before it is set up
// (a transport with a handshake of its own takes it before the handshake,
// so that the cap and Shutdown count it), is listed with Add once it has a
// session, and gives its place back with Leave when it has ended.
type Driver[C Conn] struct {
	core

	drainBy atomic.Pointer[time.Time] // set by Shutdown: writers drain until then

	mu      sync.Mutex // guards conns, places and closing
	conns   map[C]struct{}
	places  int  // taken by Enter, given back by Leave
	closing bool // Shutdown began: no place is taken, no connection listed
	wg      sync.WaitGroup
}

// Enter takes a place for a connection about to be set up, unless Shutdown
// began or, with limit > 0, limit places are taken. Every place taken must
// be given back with Leave.
func (d *Driver[C]) Enter(limit int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing || (limit > 0 && d.places >= limit) {
		return false
	}
	d.places++
	d.wg.Add(1)
	return true
}

// Add lists c, which took a place with Enter and joined (Join), and
// reports true; once Shutdown began it lists nothing and reports false:
// the caller closes c's session with ReasonShutdown, cuts it and Leaves.
func (d *Driver[C]) Add(c C) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing {
		return false
	}
	d.conns[c] = struct{}{}
	return true
}

// Leave takes c off the list (the zero C when nothing was listed) and gives
// its place back.
func (d *Driver[C]) Leave(c C) {
	d.mu.Lock()
	delete(d.conns, c)
	d.places--
	d.mu.Unlock()
	d.wg.Done()
}

// Len is how many connections are listed.
func (d *Driver[C]) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.conns)
}

// Conns appends to dst the listed connections that keep (nil: all)
// reports true for, so that what is done with them (closing their
// sessions, an idle sweep's) happens without the registry's lock. keep
// runs under that lock: it must be quick and must not call the driver.
func (d *Driver[C]) Conns(dst []C, keep func(C) bool) []C {
	d.mu.Lock()
	defer d.mu.Unlock()
	for c := range d.conns {
		if keep == nil || keep(c) {
			dst = append(dst, c)
		}
	}
	return dst
}

// CloseWhere closes, with reason, every listed connection whose client
// certificate serial matches (a certificate revoked while connected,
// api.md §5.11), and returns how many.
func (d *Driver[C]) CloseWhere(match func(serial *big.Int) bool, reason broker.Reason) int {
	hit := d.Conns(nil, func(c C) bool {
		s := c.session()
		return s.serial != nil && match(s.serial)
	})
	for _, c := range hit {
		s := c.session()
		s.Sess.Close(reason)
		s.Log().Info("connection closed by the server", "reason", reason.String())
	}
	return len(hit)
}

// Shutdown refuses new connections and ends every listed one with
// ReasonShutdown: the transport's close hook stops its reading at once, and
// its writer may send what is already queued until ctx ends (the drain
// budget, DrainDeadline). Connections still open then are cut (Conn.Cut).
// Shutdown returns when every place was given back: a client that stalls
// costs at most the budget. A later call only waits for that. The broker
// should be draining (Broker.Drain) before, so the closes announce no
// departures.
func (d *Driver[C]) Shutdown(ctx context.Context) {
	d.mu.Lock()
	first := !d.closing
	d.closing = true
	d.mu.Unlock()
	if !first {
		d.wg.Wait()
		return
	}
	// The deadline is stored before any session closes: a writer reads it
	// when it sees ReasonShutdown.
	if dl, ok := ctx.Deadline(); ok {
		d.drainBy.Store(&dl)
	}
	for _, c := range d.Conns(nil, nil) {
		c.session().Sess.Close(broker.ReasonShutdown)
	}
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	cut := d.Conns(nil, nil)
	for _, c := range cut {
		c.Cut()
	}
	<-done
	d.log.Info("clients still receiving at the end of the drain budget were closed", "connections", len(cut))
}

// DrainDeadline is when a writer must stop sending what was queued before
// a shutdown: the end of the budget Shutdown was given, or otherwise when
// it had none (or has not begun).
func (d *Driver[C]) DrainDeadline(otherwise time.Time) time.Time {
	if dl := d.drainBy.Load(); dl != nil {
		return *dl
	}
	return otherwise
}
