package logx

import (
	"context"
	"log/slog"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MaxEntry is the longest text a Tap keeps of one record (message and
// attributes), in bytes.
const MaxEntry = 1024

// Entry is one log record as a Tap keeps it.
type Entry struct {
	Time  time.Time
	Level slog.Level
	// Source is the record's "component" attribute (the child loggers'
	// convention), else the base name of the file that logged it.
	Source string
	// Text is the message followed by the attributes as key=value, cut to
	// MaxEntry bytes. Client-controlled values were clipped by the caller.
	Text string
}

// Tap is a slog.Handler that passes every record to the next handler,
// keeps the most recent ones, and hands new ones to subscribers without
// ever making the logger wait: a subscriber that does not keep up loses
// records, which are counted.
type Tap struct {
	core      *tapCore
	next      slog.Handler
	attrs     string // formatted attributes of WithAttrs
	group     string // group prefix of WithGroup, "g1.g2."
	component string
}

type tapCore struct {
	mu   sync.Mutex // guards ring, head, n
	ring []Entry
	head int // index of the oldest entry
	n    int

	subsMu  sync.Mutex                      // serialises changes of subs
	subs    atomic.Pointer[[]*Subscription] // read without a lock by Handle
	dropped atomic.Uint64
}

// NewTap returns a tap in front of next keeping the last keep records
// (at least 1).
func NewTap(next slog.Handler, keep int) *Tap {
	c := &tapCore{ring: make([]Entry, max(keep, 1))}
	c.subs.Store(&[]*Subscription{})
	return &Tap{core: c, next: next}
}

// Enabled is the next handler's answer.
func (t *Tap) Enabled(ctx context.Context, l slog.Level) bool { return t.next.Enabled(ctx, l) }

// Handle passes r on, then keeps it and offers it to the subscribers.
func (t *Tap) Handle(ctx context.Context, r slog.Record) error {
	err := t.next.Handle(ctx, r)
	e := t.entry(r)
	c := t.core
	c.mu.Lock()
	if c.n < len(c.ring) {
		c.ring[(c.head+c.n)%len(c.ring)] = e
		c.n++
	} else {
		c.ring[c.head] = e
		c.head = (c.head + 1) % len(c.ring)
	}
	c.mu.Unlock()
	for _, s := range *c.subs.Load() {
		select {
		case s.c <- e:
		default:
			s.dropped.Add(1)
			c.dropped.Add(1)
		}
	}
	return err
}

// WithAttrs returns a tap whose records carry attrs.
func (t *Tap) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := *t
	n.next = t.next.WithAttrs(attrs)
	var b strings.Builder
	b.WriteString(t.attrs)
	for _, a := range attrs {
		if t.group == "" && a.Key == "component" {
			n.component = a.Value.String()
			continue
		}
		appendAttr(&b, t.group, a)
	}
	n.attrs = b.String()
	return &n
}

// WithGroup returns a tap whose later attributes are in the group.
func (t *Tap) WithGroup(name string) slog.Handler {
	if name == "" {
		return t
	}
	n := *t
	n.next = t.next.WithGroup(name)
	n.group = t.group + name + "."
	return &n
}

func (t *Tap) entry(r slog.Record) Entry {
	var b strings.Builder
	b.WriteString(r.Message)
	b.WriteString(t.attrs)
	component := t.component
	r.Attrs(func(a slog.Attr) bool {
		if t.group == "" && a.Key == "component" {
			component = a.Value.String()
			return true
		}
		appendAttr(&b, t.group, a)
		return b.Len() <= MaxEntry
	})
	if component == "" && r.PC != 0 {
		f, _ := runtime.CallersFrames([]uintptr{r.PC}).Next()
		component = filepath.Base(f.File)
	}
	return Entry{Time: r.Time, Level: r.Level, Source: component, Text: ClipN(b.String(), MaxEntry)}
}

// appendAttr writes " key=value" (groups flattened with dots).
func appendAttr(b *strings.Builder, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if a.Key == "" && v.Kind() != slog.KindGroup {
		return
	}
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range v.Group() {
			appendAttr(b, p, g)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(prefix)
	b.WriteString(a.Key)
	b.WriteByte('=')
	var s string
	if v.Kind() == slog.KindTime {
		s = v.Time().UTC().Format(time.RFC3339Nano)
	} else {
		s = v.String()
	}
	if s == "" || strings.ContainsAny(s, " =\"\t\n") {
		s = strconv.Quote(s)
	}
	b.WriteString(s)
}

// Recent returns the kept records logged after since (all when since is
// zero), oldest first.
func (t *Tap) Recent(since time.Time) []Entry {
	c := t.core
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Entry, 0, c.n)
	for i := range c.n {
		e := c.ring[(c.head+i)%len(c.ring)]
		if since.IsZero() || e.Time.After(since) {
			out = append(out, e)
		}
	}
	return out
}

// Dropped counts the records all subscribers together have lost.
func (t *Tap) Dropped() uint64 { return t.core.dropped.Load() }

// Subscription receives the records logged after it was made, on C.
type Subscription struct {
	C       <-chan Entry
	c       chan Entry
	core    *tapCore
	dropped atomic.Uint64
	once    sync.Once
}

// Subscribe starts receiving new records with a buffer of buf (at least
// 1). Records that find the buffer full are dropped and counted.
func (t *Tap) Subscribe(buf int) *Subscription {
	ch := make(chan Entry, max(buf, 1))
	s := &Subscription{C: ch, c: ch, core: t.core}
	c := t.core
	c.subsMu.Lock()
	old := *c.subs.Load()
	subs := append(append(make([]*Subscription, 0, len(old)+1), old...), s)
	c.subs.Store(&subs)
	c.subsMu.Unlock()
	return s
}

// Dropped counts the records this subscriber lost.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// Close stops the subscription; C is not closed (a record may be in
// flight), so readers stop by their own signal.
func (s *Subscription) Close() {
	s.once.Do(func() {
		c := s.core
		c.subsMu.Lock()
		defer c.subsMu.Unlock()
		old := *c.subs.Load()
		subs := make([]*Subscription, 0, len(old))
		for _, x := range old {
			if x != s {
				subs = append(subs, x)
			}
		}
		c.subs.Store(&subs)
	})
}
