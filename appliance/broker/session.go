package broker

import (
	"sync"
	"sync/atomic"
	"time"
)

// SessionInfo describes a connection; set when the session joins.
type SessionInfo struct {
	Listener string // which listener accepted it, e.g. "cot-tcp", "cot-tls"
	Addr     string // remote address, host:port
	User     string // authenticated identity (client certificate common name), "" if none
	// Server-side group bitmasks (protocol.md §6, access.md "Groups"): a
	// sender S reaches a receiver R when S.In & R.Out != 0. Both zero means
	// the system group __ANON__ only, unless Grouped says they are meant as
	// given (a user who switched every group off sees nothing). SetGroups
	// changes them while the session is open.
	In, Out uint64
	Grouped bool
	// Link, when set, names a bridge to another network (the multicast
	// mesh): sessions of one link never read what another session of the
	// same link published, so an event never goes back to the side it came
	// from (docs/mesh.md "No loops").
	Link string
	// DirectedOnly sessions read only what is addressed to them (<dest>,
	// protocol.md §6): no broadcast and no replay. A mesh device is one: the
	// bridge's own session carries the broadcasts to the mesh once for all.
	DirectedOnly bool
	// Closed, when set, is called once, outside the broker's locks, when the
	// session closes (by the broker or the transport). Transports use it to
	// unblock the connection's reader and writer at once. It must not block.
	Closed func(reason Reason)
	// Wake, when set, is called when there may be something new to take,
	// outside the broker's locks, on the publisher's goroutine. A transport
	// uses it to start a writer only when there is something to write (no
	// goroutine per idle connection). It must not block, and should be
	// cheap when a writer already runs (it is called once per event). The
	// Ready channel is signalled as well.
	Wake func()
}

// AnonGroup is the mask of the system group __ANON__ (bit 2, as on the
// official server and in the store's group table), which every session is
// in unless told otherwise.
const AnonGroup uint64 = 1 << 2

// AllGroups is the mask of every group: what the server sends itself
// reaches everyone unless it names groups.
const AllGroups = ^uint64(0)

// Identity is what the session's own position reports say about it
// (protocol.md §1: updated by every SA, not only the first).
type Identity struct {
	UID      string
	Callsign string
	Team     string // __group name
	Role     string // __group role
	SAType   string // type of the latest SA, used in the departure's link
	LastSeen time.Time
}

// Session is one connected client as the broker sees it: identity, its
// cursor in the broadcast log (ring.go), a bounded queue of what is sent to
// it alone (pongs, negotiation replies), and a done channel. Transports read
// with Ready (or Wake) and Take, and watch Done.
type Session struct {
	id     uint64
	b      *Broker
	pos    int // index in the broker's session list; -1 when not listed (guarded by Broker.mu)
	info   SessionInfo
	joined time.Time

	ident  atomic.Pointer[Identity]
	lastSA atomic.Pointer[Envelope]

	// in and out are the session's group masks (SessionInfo.In and Out,
	// changed by Broker.SetGroups): what it sends is for in, it reads
	// what was sent to out.
	in, out atomic.Uint64

	// cursor is the next log seq to read. Take moves it (under qmu); the
	// log's trimming reads it.
	cursor atomic.Uint64
	// holdsTail is set by a trim after a session closed that found this
	// session's cursor the lowest, holding the log's oldest entries: the
	// next Take that moves the cursor trims again, so what the session has
	// now read is released without waiting for the next publish.
	holdsTail atomic.Bool

	qmu       sync.Mutex // qmu guards private, privBytes, closed, reason and the replay
	private   []privItem // sent to this session alone, in order
	privBytes int
	closed    bool
	reason    Reason

	// The replay (protocol.md §5), taken before items: the latest SA of each
	// session of the broker's list as it was at join (a shared, immutable
	// snapshot), then the retained events. replayPos counts what was taken.
	replay         *sessionList
	replayRetained []*Envelope
	replayPos      int
	startSeq       uint64 // the cursor at join: position reports logged since come from the log

	ready chan struct{} // capacity 1: "there may be something to take"
	done  chan struct{} // closed once, when the session closes

	hookOnce sync.Once // runs info.Closed once
}

// privItem is an envelope for this session alone, to be written before the
// log entry whose seq is at (the log's head when it was sent), which keeps
// it in order with the broadcast traffic around it.
type privItem struct {
	env *Envelope
	at  uint64
}

// reads reports whether the session reads what from published (a
// directed event or a broadcast), as far as its link and DirectedOnly go;
// groups and recipients are checked by the caller. Plain sessions read
// everything: they pay one comparison.
func (s *Session) reads(from *Session, directed bool) bool {
	if s.info.Link == "" && !s.info.DirectedOnly {
		return true
	}
	if s.info.DirectedOnly && !directed {
		return false
	}
	return from == nil || s.info.Link == "" || from.info.Link != s.info.Link
}

// fireClosed runs the transport's close hook once. qmu must not be held.
func (s *Session) fireClosed() {
	if s.info.Closed == nil {
		return
	}
	s.hookOnce.Do(func() { s.info.Closed(s.Reason()) })
}

// ID is unique per broker.
func (s *Session) ID() uint64 { return s.id }

// Info returns what the transport said at join (In and Out as they are now).
func (s *Session) Info() SessionInfo {
	info := s.info
	info.In, info.Out = s.in.Load(), s.out.Load()
	return info
}

// Groups returns the session's group masks now: what it sends goes to in,
// it receives what was sent to out.
func (s *Session) Groups() (in, out uint64) { return s.in.Load(), s.out.Load() }

// Identity returns the identity learned from the session's SAs (zero
// before its first SA).
func (s *Session) Identity() Identity {
	if id := s.ident.Load(); id != nil {
		return *id
	}
	return Identity{}
}

// Ready is signalled when envelopes are waiting to be taken.
func (s *Session) Ready() <-chan struct{} { return s.ready }

// Done is closed when the session is closed, by the broker (slow consumer,
// shutdown) or by the transport (Close).
func (s *Session) Done() <-chan struct{} { return s.done }

// Reason is the first recorded close reason (ReasonNone while open).
func (s *Session) Reason() Reason {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return s.reason
}

// Close closes the session with a reason and removes it from the broker,
// announcing its departure to the clients that could see it when no other
// connection still holds its uid (protocol.md §5). Idempotent: the first
// reason wins.
func (s *Session) Close(reason Reason) { s.b.remove(s, reason) }

// Send queues an envelope for this session only (pongs, negotiation
// replies, the protobuf offer). Sent envelopes are bounded like the log:
// beyond HardFrames or HardBytes the session is closed (ReasonQueueLimit).
// It reports false when the session is closed or was closed by this call.
func (s *Session) Send(env *Envelope) bool {
	lim := &s.b.opts
	at := s.b.events.position()
	s.qmu.Lock()
	if s.closed {
		s.qmu.Unlock()
		return false
	}
	if len(s.private) >= lim.HardFrames || s.privBytes+env.size > lim.HardBytes {
		s.markClosedLocked(ReasonQueueLimit)
		s.qmu.Unlock()
		s.b.remove(s, ReasonQueueLimit)
		return false
	}
	s.private = append(s.private, privItem{env: env, at: at})
	s.privBytes += env.size
	s.b.stats.queuedBytes.Add(int64(env.size))
	s.qmu.Unlock()
	s.signal()
	return true
}

// signal tells the transport there may be something to take.
func (s *Session) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
	if s.info.Wake != nil {
		s.info.Wake()
	}
}

// MaxRetainedQueue is the largest queue capacity worth keeping across Take
// calls; writers drop larger batch slices instead of passing them back.
const MaxRetainedQueue = 256

// replayBatch is how many replayed envelopes one Take returns at most,
// and takeBatch how many log entries one Take reads at most.
const (
	replayBatch = 128
	takeBatch   = 256
)

// Take returns what the session should write next, in order: while the
// replay lasts, its next envelopes; then the log's entries this session may
// see, from its cursor on, with what was sent to it alone in between (at
// most takeBatch entries a call). An empty result means there is nothing to
// write now. Call it again while it returns something.
//
// The slow-consumer policy (architecture.md "The relay") applies here:
// while the session lags behind the log's head by more than SoftFrames or
// SoftBytes, a position report that a newer one of the same uid follows is
// skipped (coalesced, newest wins); nothing else is ever skipped. A session
// that fell so far behind that the log dropped what it had not read is
// closed (ReasonQueueLimit) and gets nothing.
//
// spare (emptied, may be nil) is used to hold the result, so a writer that
// passes back what Take returned allocates nothing in steady state.
func (s *Session) Take(spare []*Envelope) []*Envelope {
	if cap(spare) > MaxRetainedQueue {
		spare = nil // a burst grew it: let it go
	}
	out := spare[:0]
	s.qmu.Lock()
	if total := s.replayLen(); s.replayPos < total {
		out = s.takeReplayLocked(out, total)
		if len(out) > 0 {
			s.qmu.Unlock()
			s.signal() // the rest of the replay and the log still wait
			return out
		}
	}
	lim := &s.b.opts
	var (
		emitted   [numClasses]uint64
		delivered uint64
		coalesced uint64
		pi        int
	)
	groups := s.out.Load()
	next, lost, more := s.b.events.read(s.cursor.Load(), takeBatch, uint64(lim.SoftFrames), uint64(lim.SoftBytes),
		func(seq uint64, e *entry, lagging bool, latest uint64) {
			for pi < len(s.private) && s.private[pi].at <= seq {
				out = append(out, s.private[pi].env)
				pi++
			}
			if e.from == s || e.env.groups&groups == 0 || (e.to != nil && !e.to[s]) || !s.reads(e.from, e.to != nil) {
				return
			}
			if lagging && e.env.sa && latest > seq {
				coalesced++
				return
			}
			out = append(out, e.env)
			emitted[e.env.class]++
			delivered++
		})
	if lost {
		s.markClosedLocked(ReasonQueueLimit)
		s.qmu.Unlock()
		s.b.remove(s, ReasonQueueLimit)
		return out[:0]
	}
	for pi < len(s.private) && s.private[pi].at <= next {
		out = append(out, s.private[pi].env)
		pi++
	}
	for _, it := range s.private[:pi] {
		s.privBytes -= it.env.size
		s.b.stats.queuedBytes.Add(-int64(it.env.size))
	}
	s.private = s.dropPrivate(pi)
	moved := next != s.cursor.Load()
	s.cursor.Store(next)
	s.qmu.Unlock()
	if s.holdsTail.Swap(false) && moved {
		s.b.trim(false)
	}
	// Shared counters: touched only when there is something to count.
	if delivered > 0 {
		s.b.stats.delivered.Add(delivered)
		for c := range emitted {
			if emitted[c] > 0 {
				s.b.stats.out[c].Add(emitted[c])
			}
		}
	}
	if coalesced > 0 {
		s.b.stats.coalesced.Add(coalesced)
	}
	if more {
		s.signal()
	}
	return out
}

// Release is called by the transport once its writer has stopped for good
// (after Close): whatever is still queued for the session is let go and no
// longer counted, and the replay snapshot is dropped.
func (s *Session) Release() {
	s.qmu.Lock()
	s.b.stats.queuedBytes.Add(-int64(s.privBytes))
	s.private, s.privBytes = nil, 0
	s.replay, s.replayRetained, s.replayPos = nil, nil, 0
	s.qmu.Unlock()
}

// dropPrivate removes the first n sent envelopes, keeping the storage
// unless a burst grew it. qmu held.
func (s *Session) dropPrivate(n int) []privItem {
	if n == 0 {
		return s.private
	}
	rest := s.private[n:]
	if len(rest) == 0 {
		if cap(s.private) > MaxRetainedQueue {
			return nil
		}
		clear(s.private)
		return s.private[:0]
	}
	return append(s.private[:0], rest...)
}

// takeReplayLocked appends the next replayed envelopes to out. qmu held.
// A session in the snapshot that has closed since, or that the new session
// may not see, is skipped. Its latest SA is read now, so it is the newest;
// one logged since the join is in this session's part of the log, so it is
// skipped here rather than sent twice.
func (s *Session) takeReplayLocked(out []*Envelope, total int) []*Envelope {
	for s.replayPos < total && len(out) < replayBatch {
		i := s.replayPos
		s.replayPos++
		if n := s.replay.len(); i < n {
			o := s.replay.at(i)
			if env := o.lastSA.Load(); env != nil && env.seq < s.startSeq && o.in.Load()&s.out.Load() != 0 && !o.isClosed() && s.reads(o, false) {
				out = append(out, env)
			}
			continue
		}
		if env := s.replayRetained[i-s.replay.len()]; env.groups&s.out.Load() != 0 {
			out = append(out, env)
		}
	}
	if s.replayPos >= total {
		s.replay, s.replayRetained, s.replayPos = nil, nil, 0 // let the snapshot go
	}
	return out
}

// replayLen is the length of the replay (0 once it is done). qmu held.
func (s *Session) replayLen() int {
	if s.replay == nil {
		return len(s.replayRetained)
	}
	return s.replay.len() + len(s.replayRetained)
}

// Pending reports what waits for the session: frames (an upper bound: the
// log entries it has not read include some it will skip) and bytes.
func (s *Session) Pending() (frames, bytes int) {
	s.qmu.Lock()
	frames = len(s.private) + s.replayLen() - s.replayPos
	bytes = s.privBytes
	s.qmu.Unlock()
	lf, lb := s.b.events.lag(s.cursor.Load())
	return frames + int(lf), bytes + int(lb)
}

// markClosedLocked records the reason and closes done. qmu must be held.
// It reports whether this call closed the session.
func (s *Session) markClosedLocked(reason Reason) bool {
	if s.closed {
		return false
	}
	s.closed = true
	s.reason = reason
	close(s.done)
	return true
}

// observe updates the identity from a position report the session sent
// (api.md §2.11: lastSeen follows the periodic SAs; protocol.md §1: every SA, not only
// the first). Other events leave it unchanged. It returns the previous uid
// and whether the uid changed.
func (s *Session) observe(env *Envelope, now time.Time) (oldUID string, changed bool) {
	if !env.sa {
		return "", false
	}
	prev := s.ident.Load()
	var next Identity
	if prev != nil {
		next = *prev
	}
	ev := env.Event
	next.LastSeen = now
	next.UID = ev.UID
	next.SAType = ev.Type
	if c := ev.Detail.Contact; c != nil && c.Callsign != "" {
		next.Callsign = c.Callsign
	}
	if g := ev.Detail.Group; g != nil {
		next.Team, next.Role = g.Name, g.Role
	}
	s.ident.Store(&next)
	if prev == nil {
		return "", true
	}
	return prev.UID, prev.UID != next.UID
}
