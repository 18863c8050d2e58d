package broker

import (
	"sync"
	"sync/atomic"
)

// The broadcast log (architecture.md "The relay"). Every routed event is
// appended once to one ring that all sessions share; each session reads it
// from its own cursor when its writer takes (Session.Take), skipping what
// it must not see (its own events, other groups, messages addressed to
// others). Publishing is therefore one append and a wake of the writers,
// whatever the number of recipients, and a queue costs no memory per
// session: a thousand clients receiving a thousand position reports share
// one copy of each, not a million queue slots.
//
// The ring keeps at most HardFrames entries and HardBytes of events. A
// session whose cursor falls behind the ring's tail has lost events: it is
// closed with ReasonQueueLimit (a slow consumer, as before per-session queues
// overflowed). Entries every session has read are released early, so an
// idle server holds almost nothing.

// entry is one routed event in the log.
type entry struct {
	env  *Envelope
	from *Session          // nil: the server
	to   map[*Session]bool // nil: everyone who may see from; else only these
	end  uint64            // the log's cumulative bytes up to and including this entry
}

type eventLog struct {
	mu       sync.RWMutex // mu guards every field below
	ring     []entry      // power-of-two length
	mask     uint64
	head     uint64 // seq of the next entry; entries tail..head-1 are held
	tail     uint64
	bytes    uint64 // cumulative bytes appended
	tailEnd  uint64 // cumulative bytes before the tail entry
	maxBytes uint64
	latest   map[string]uint64 // uid -> seq of its newest position report (coalescing)
	appended uint64            // appends since the last trim
}

// maxLatest bounds the coalescing map; past it, it starts afresh.
const maxLatest = 1 << 16

func newEventLog(frames, bytes int) *eventLog {
	n := 1
	for n < frames {
		n <<= 1
	}
	// seq 0 is never used: an Envelope's seq 0 means "not in the log".
	return &eventLog{ring: make([]entry, n), mask: uint64(n - 1), maxBytes: uint64(bytes), latest: map[string]uint64{},
		head: 1, tail: 1}
}

// append adds an event and returns its sequence number. lastSA, when not
// nil, is stored under the same lock: a joining session's cursor and
// replay then agree on whether this report is live or replayed.
func (l *eventLog) append(env *Envelope, from *Session, to map[*Session]bool, lastSA *atomic.Pointer[Envelope]) uint64 {
	size := uint64(env.size)
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.head > l.tail && (l.head-l.tail >= uint64(len(l.ring)) || l.bytes+size-l.tailEnd > l.maxBytes) {
		l.dropTailLocked()
	}
	seq := l.head
	l.bytes += size
	l.ring[seq&l.mask] = entry{env: env, from: from, to: to, end: l.bytes}
	l.head++
	if env.seq == 0 { // a retained event is appended again at each repeat
		env.seq = seq
	}
	if env.sa {
		if len(l.latest) >= maxLatest {
			l.latest = map[string]uint64{}
		}
		l.latest[env.Event.UID] = seq
		if lastSA != nil {
			lastSA.Store(env)
		}
	}
	l.appended++
	return seq
}

func (l *eventLog) dropTailLocked() {
	e := &l.ring[l.tail&l.mask]
	l.tailEnd = e.end
	*e = entry{}
	l.tail++
}

// trim releases the entries every cursor has passed (min is the lowest
// cursor of the open sessions).
func (l *eventLog) trim(min uint64) {
	l.mu.Lock()
	for l.tail < min && l.tail < l.head {
		l.dropTailLocked()
	}
	l.appended = 0
	l.mu.Unlock()
}

// position returns the seq a session joining now starts reading at.
func (l *eventLog) position() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.head
}

// held reports the entries and bytes the ring holds now.
func (l *eventLog) held() (frames, bytes uint64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.head - l.tail, l.bytes - l.tailEnd
}

// read walks the entries from cursor on, at most max of them, calling
// visit with each entry and whether the reader lags behind (above the soft
// limits: frames or bytes not yet read) at that point. It returns the new
// cursor, whether entries were lost (the cursor had fallen behind the
// tail), and whether more remain.
func (l *eventLog) read(cursor uint64, max int, softFrames, softBytes uint64, visit func(seq uint64, e *entry, lagging bool, latest uint64)) (next uint64, lost, more bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if cursor < l.tail {
		return l.tail, true, l.head > l.tail
	}
	n := 0
	for ; cursor < l.head && n < max; cursor, n = cursor+1, n+1 {
		e := &l.ring[cursor&l.mask]
		readTo := l.tailEnd
		if cursor > l.tail {
			readTo = l.ring[(cursor-1)&l.mask].end
		}
		lagging := l.head-cursor > softFrames || l.bytes-readTo > softBytes
		var latest uint64
		if lagging && e.env.sa {
			latest = l.latest[e.env.Event.UID]
		}
		visit(cursor, e, lagging, latest)
	}
	return cursor, false, cursor < l.head
}

// lag reports how far a cursor is behind the head.
func (l *eventLog) lag(cursor uint64) (frames, bytes uint64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if cursor >= l.head {
		return 0, 0
	}
	if cursor < l.tail {
		cursor = l.tail
	}
	readTo := l.tailEnd
	if cursor > l.tail {
		readTo = l.ring[(cursor-1)&l.mask].end
	}
	return l.head - cursor, l.bytes - readTo
}

// lagBytes reports how many bytes a cursor is behind the head.
func (l *eventLog) lagBytes(cursor uint64) int {
	_, b := l.lag(cursor)
	return int(b)
}

// needsTrim reports whether enough was appended since the last trim to
// look for entries every session has read.
func (l *eventLog) needsTrim() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.appended >= 256 || l.head-l.tail > uint64(len(l.ring))/4 || l.bytes-l.tailEnd > l.maxBytes/4
}
