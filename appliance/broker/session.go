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
	// Server-side group bitmasks (protocol.md §6): a sender S reaches a receiver R
	// when S.In & R.Out != 0. Zero means the system group __ANON__ only.
	In, Out uint64
	// Closed, when set, is called once, outside the broker's locks, when the
	// session closes (by the broker or the transport). Transports use it to
	// unblock the connection's reader and writer at once. It must not block.
	Closed func(reason Reason)
	// Wake, when set, is called after an envelope was queued to an empty
	// queue, outside the session's lock, on the publisher's goroutine. A
	// transport uses it to start a writer only when there is something to
	// write (no goroutine per idle connection). It must not block. The
	// Ready channel is signalled as well.
	Wake func()
}

// AnonGroup is the bit of the system group __ANON__, which every session
// is in unless told otherwise.
const AnonGroup uint64 = 1

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

// Session is one connected client as the broker sees it: identity, a
// bounded outbound queue, and a done channel. Transports read the queue
// with Ready/Take and watch Done.
type Session struct {
	id     uint64
	b      *Broker
	info   SessionInfo
	joined time.Time

	ident  atomic.Pointer[Identity]
	lastSA atomic.Pointer[Envelope]

	qmu     sync.Mutex // qmu guards items, bytes, saIndex, closed, reason and replayPos
	items   []*Envelope
	bytes   int
	saIndex map[string]int // uid -> index in items of its queued SA
	closed  bool
	reason  Reason

	// The replay (protocol.md §5), taken before items: the latest SA of each
	// session of the broker's list as it was at join (a shared, immutable
	// snapshot), then the retained events. replayPos counts what was taken.
	replay         []*Session
	replayRetained []*Envelope
	replayPos      int
	joinSeq        uint64 // the broker's publish sequence when the session joined

	ready chan struct{} // capacity 1: "items became non-empty"
	done  chan struct{} // closed once, when the session closes

	hookOnce sync.Once // runs info.Closed once
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

// Info returns what the transport said at join.
func (s *Session) Info() SessionInfo { return s.info }

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
// replies, replays). It reports false when the session is closed or was
// closed by this call as a slow consumer.
func (s *Session) Send(env *Envelope) bool {
	ok := s.enqueue(env)
	if !ok {
		s.b.remove(s, ReasonQueueLimit)
	}
	return ok
}

// MaxRetainedQueue is the largest queue capacity worth keeping across Take
// calls; writers drop larger batch slices instead of passing them back.
const MaxRetainedQueue = 256

// replayBatch is how many replayed envelopes one Take returns at most.
const replayBatch = 128

// Take returns what the session should write next: while the replay lasts,
// its next envelopes (at most replayBatch; call Take again for more);
// then every queued envelope, moved out of the session in queue order. An
// empty result means there is nothing to write. spare (emptied, may be nil)
// becomes the new queue storage, so a writer alternating two slices
// allocates nothing in steady state.
func (s *Session) Take(spare []*Envelope) []*Envelope {
	if cap(spare) > MaxRetainedQueue {
		// A burst grew it: let it go rather than keep the peak for the
		// session's life.
		spare = nil
	}
	s.qmu.Lock()
	if total := len(s.replay) + len(s.replayRetained); s.replayPos < total {
		out := s.takeReplayLocked(spare[:0], total)
		more := len(s.items) > 0 || s.replay != nil
		s.qmu.Unlock()
		if len(out) > 0 {
			if more {
				// Ready means "something is waiting": it still is.
				select {
				case s.ready <- struct{}{}:
				default:
				}
			}
			return out
		}
		s.qmu.Lock() // the replay had nothing left to send: the queue
	}
	out := s.items
	s.items = spare[:0]
	s.b.stats.queuedBytes.Add(-int64(s.bytes))
	s.bytes = 0
	if len(s.saIndex) > MaxRetainedQueue {
		s.saIndex = map[string]int{} // clear would keep the peak bucket array
	} else {
		clear(s.saIndex)
	}
	s.qmu.Unlock()
	return out
}

// takeReplayLocked appends the next replayed envelopes to out. qmu held.
// A session in the snapshot that has closed since, or that the new session
// may not see, is skipped. Its latest SA is read now, so it is the newest;
// one published after the join was delivered live (the publisher saw this
// session in the list: its sequence number was taken after the join), so
// it is skipped too rather than sent twice.
func (s *Session) takeReplayLocked(out []*Envelope, total int) []*Envelope {
	for s.replayPos < total && len(out) < replayBatch {
		i := s.replayPos
		s.replayPos++
		if i < len(s.replay) {
			o := s.replay[i]
			if env := o.lastSA.Load(); env != nil && env.seq <= s.joinSeq && visible(o, s) && !o.isClosed() {
				out = append(out, env)
			}
			continue
		}
		out = append(out, s.replayRetained[i-len(s.replay)])
	}
	if s.replayPos >= total {
		s.replay, s.replayRetained, s.replayPos = nil, nil, 0 // let the snapshot go
	}
	return out
}

// Pending reports the queued frames (the rest of the replay included) and
// bytes.
func (s *Session) Pending() (frames, bytes int) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return len(s.items) + len(s.replay) + len(s.replayRetained) - s.replayPos, s.bytes
}

// enqueue applies the slow-consumer policy (architecture.md "The relay"):
// above the soft limit a position report replaces the queued one of the
// same uid (newest wins); nothing else is ever dropped; above the hard limit
// the session is marked closed with ReasonQueueLimit and enqueue returns
// false (the caller removes it from the broker outside its locks).
func (s *Session) enqueue(env *Envelope) bool {
	lim := &s.b.opts
	s.qmu.Lock()
	if s.closed {
		s.qmu.Unlock()
		return true // already closing; not this call's failure
	}
	uid := ""
	if env.sa {
		uid = env.Event.UID
		if len(s.items) >= lim.SoftFrames || s.bytes >= lim.SoftBytes {
			if i, ok := s.saIndex[uid]; ok {
				d := env.size - s.items[i].size
				s.bytes += d
				s.b.stats.queuedBytes.Add(int64(d))
				s.items[i] = env
				s.qmu.Unlock()
				s.b.stats.coalesced.Add(1)
				return true
			}
		}
	}
	if len(s.items) >= lim.HardFrames || s.bytes+env.size > lim.HardBytes {
		s.markClosedLocked(ReasonQueueLimit)
		s.qmu.Unlock()
		return false
	}
	s.items = append(s.items, env)
	s.bytes += env.size
	s.b.stats.queuedBytes.Add(int64(env.size))
	if uid != "" {
		s.saIndex[uid] = len(s.items) - 1
	}
	first := len(s.items) == 1
	s.qmu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
	if first && s.info.Wake != nil {
		s.info.Wake()
	}
	return true
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
	s.lastSA.Store(env)
	s.ident.Store(&next)
	if prev == nil {
		return "", true
	}
	return prev.UID, prev.UID != next.UID
}

// visible reports whether an event from sender may reach receiver (protocol.md §6).
// A nil sender is the server itself, which reaches everyone.
func visible(sender, receiver *Session) bool {
	if sender == nil {
		return true
	}
	return sender.info.In&receiver.info.Out != 0
}
