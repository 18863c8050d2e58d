package broker

// sessionList is the broker's set of open sessions: an immutable value that
// publishers and readers load without a lock (Broker.list) and that Join and
// remove replace, copy-on-write. Sessions sit in chunks of listChunk, so a
// change copies the outer slice and at most two chunks, not the whole list:
// a storm of thousands of clients joining costs linear work, not quadratic.
// The order is not meaningful (a removal moves the last session into the
// freed slot).
type sessionList struct {
	chunks []*listChunkT
	n      int
}

const listChunk = 64

type listChunkT [listChunk]*Session

// len is the number of sessions.
func (l *sessionList) len() int { return l.n }

// at returns the i-th session.
func (l *sessionList) at(i int) *Session { return l.chunks[i/listChunk][i%listChunk] }

// each calls fn for every session.
func (l *sessionList) each(fn func(*Session)) {
	for ci, c := range l.chunks {
		n := listChunk
		if ci == len(l.chunks)-1 {
			n = l.n - ci*listChunk
		}
		for _, s := range c[:n] {
			fn(s)
		}
	}
}

// slice returns the sessions as a new slice.
func (l *sessionList) slice() []*Session {
	out := make([]*Session, 0, l.n)
	l.each(func(s *Session) { out = append(out, s) })
	return out
}

// with returns the list with s added; s.pos is set. Broker.mu held.
func (l *sessionList) with(s *Session) *sessionList {
	next := &sessionList{chunks: append([]*listChunkT(nil), l.chunks...), n: l.n + 1}
	i := l.n
	if i%listChunk == 0 {
		next.chunks = append(next.chunks, new(listChunkT))
	} else {
		c := *next.chunks[i/listChunk]
		next.chunks[i/listChunk] = &c
	}
	next.chunks[i/listChunk][i%listChunk] = s
	s.pos = i
	return next
}

// without returns the list with s (at s.pos) removed: the last session
// takes its slot. Broker.mu held.
func (l *sessionList) without(s *Session) *sessionList {
	i, last := s.pos, l.n-1
	next := &sessionList{chunks: append([]*listChunkT(nil), l.chunks...), n: l.n - 1}
	own := func(ci int) *listChunkT {
		if next.chunks[ci] == l.chunks[ci] {
			c := *l.chunks[ci]
			next.chunks[ci] = &c
		}
		return next.chunks[ci]
	}
	if i != last {
		moved := l.at(last)
		own(i / listChunk)[i%listChunk] = moved
		moved.pos = i
	}
	own(last / listChunk)[last%listChunk] = nil
	if last%listChunk == 0 {
		next.chunks = next.chunks[:len(next.chunks)-1]
	}
	s.pos = -1
	return next
}
