package broker

import (
	"log/slog"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"outpost/appliance/cot"
)

// Options tune the broker. Zero values take the defaults shown.
type Options struct {
	SoftFrames int // 1024: above this many queued frames, SAs are coalesced per uid
	SoftBytes  int // 1 MiB: likewise in bytes
	HardFrames int // 16384: above this the session is closed as a slow consumer
	HardBytes  int // 16 MiB: likewise in bytes

	// Observer is called after routing with every relayed event (control
	// types excluded) and the session it came from (nil: the server). It
	// runs on the publisher's goroutine and must not block (the store's
	// history writer drops rather than blocks).
	Observer func(ev *cot.Event, from *Session)

	// MissionSubscribers resolves <dest mission="name"> to client uids.
	// Nil: mission-addressed events reach no one.
	MissionSubscribers func(mission string) []string

	Now    func() time.Time
	Logger *slog.Logger
}

func (o *Options) fill() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.SoftFrames, 1024)
	def(&o.SoftBytes, 1<<20)
	def(&o.HardFrames, 16384)
	def(&o.HardBytes, 16<<20)
	if o.HardFrames <= o.SoftFrames {
		o.HardFrames = o.SoftFrames * 2
	}
	if o.HardBytes <= o.SoftBytes {
		o.HardBytes = o.SoftBytes * 2
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Broker routes events between sessions. Publish takes no lock: it reads an
// immutable snapshot of the session list.
type Broker struct {
	opts Options
	log  *slog.Logger

	mu     sync.Mutex                 // mu guards byUID, closed and every replacement of list
	list   atomic.Pointer[[]*Session] // copy-on-write snapshot of open sessions
	byUID  map[string]*Session        // uid -> the newest session that claimed it
	closed bool

	nextID atomic.Uint64
	stats  counters
}

// New returns a broker.
func New(opts Options) *Broker {
	opts.fill()
	b := &Broker{opts: opts, log: opts.Logger, byUID: map[string]*Session{}}
	b.list.Store(&[]*Session{})
	return b
}

// Join registers a new session. The latest SA of every connected client
// the new session can see is queued to it first (protocol.md §5), before any live
// traffic.
func (b *Broker) Join(info SessionInfo) *Session {
	if info.In == 0 {
		info.In = AnonGroup
	}
	if info.Out == 0 {
		info.Out = AnonGroup
	}
	s := &Session{
		id:      b.nextID.Add(1),
		b:       b,
		info:    info,
		joined:  b.opts.Now(),
		saIndex: map[string]int{},
		ready:   make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	// Hold the new session's queue lock while it becomes visible and the
	// replay is collected: a publisher that already sees it blocks on qmu
	// until the replay is queued, so live events always follow the replay.
	s.qmu.Lock()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		s.markClosedLocked(ReasonShutdown)
		s.qmu.Unlock()
		s.fireClosed()
		return s
	}
	old := *b.list.Load()
	next := make([]*Session, len(old), len(old)+1)
	copy(next, old)
	next = append(next, s)
	b.list.Store(&next)
	for _, o := range old {
		if env := o.lastSA.Load(); env != nil && visible(o, s) {
			s.items = append(s.items, env)
			s.bytes += env.size
			s.saIndex[env.Event.UID] = len(s.items) - 1
		}
	}
	b.mu.Unlock()
	n := len(s.items)
	s.qmu.Unlock()
	if n > 0 {
		select {
		case s.ready <- struct{}{}:
		default:
		}
	}
	b.stats.joined.Add(1)
	return s
}

// Publish routes an event from a session (nil: from the server itself).
// Control types are consumed, never relayed (protocol.md §5). The event must not
// be modified afterwards.
func (b *Broker) Publish(ev *cot.Event, from *Session) {
	if ev == nil || cot.IsControl(ev.Type) {
		return
	}
	b.stats.published.Add(1)
	out := ev
	var dests []cot.Dest
	if m := ev.Detail.Marti; m != nil {
		dests = directDests(m.Dests)
		out = ev.WithoutMarti() // protocol.md §6: remove <marti> before forwarding
	}
	env := NewEnvelope(out)
	if from != nil {
		if old, changed := from.observe(env, b.opts.Now()); changed {
			b.claimUID(from, old)
		}
	}
	if dests != nil {
		b.deliverDirected(env, from, dests)
	} else {
		b.deliver(env, from, nil)
	}
	if b.opts.Observer != nil {
		b.opts.Observer(ev, from)
	}
}

// directDests returns the dests of a directed event, or nil when the event
// is a plain broadcast (no dests, or the "All Streaming" pseudo-callsign).
func directDests(ds []cot.Dest) []cot.Dest {
	if len(ds) == 0 {
		return nil
	}
	for _, d := range ds {
		if d.Callsign == "All Streaming" {
			return nil
		}
	}
	return ds
}

// deliver queues env to every session the sender may reach (protocol.md §6),
// except the sender itself, and only to those match accepts when match is
// not nil. Sessions whose queue overflows are closed as slow consumers.
func (b *Broker) deliver(env *Envelope, from *Session, match func(*Session) bool) {
	var slow []*Session
	n := uint64(0)
	for _, s := range *b.list.Load() {
		if s == from || !visible(from, s) || (match != nil && !match(s)) {
			continue
		}
		if !s.enqueue(env) {
			slow = append(slow, s)
			continue
		}
		n++
	}
	b.stats.delivered.Add(n)
	for _, s := range slow {
		b.remove(s, ReasonSlowConsumer)
	}
}

// deliverDirected delivers only to the sessions named by dests (protocol.md §6).
func (b *Broker) deliverDirected(env *Envelope, from *Session, dests []cot.Dest) {
	uids := map[string]bool{}
	callsigns := map[string]bool{}
	for _, d := range dests {
		switch {
		case d.UID != "":
			uids[d.UID] = true
		case d.Callsign != "":
			callsigns[d.Callsign] = true
		case d.Mission != "" && b.opts.MissionSubscribers != nil:
			for _, u := range b.opts.MissionSubscribers(d.Mission) {
				uids[u] = true
			}
		}
	}
	b.stats.directed.Add(1)
	b.deliver(env, from, func(s *Session) bool {
		id := s.ident.Load()
		return id != nil && (uids[id.UID] || callsigns[id.Callsign])
	})
}

// claimUID records that s now speaks for its uid; a reconnecting client
// takes its uid over from a stale session of the same uid.
func (b *Broker) claimUID(s *Session, oldUID string) {
	uid := s.Identity().UID
	b.mu.Lock()
	defer b.mu.Unlock()
	if oldUID != "" && b.byUID[oldUID] == s {
		delete(b.byUID, oldUID)
	}
	if uid != "" && !s.isClosed() {
		b.byUID[uid] = s
	}
}

func (s *Session) isClosed() bool {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return s.closed
}

// remove closes s (first reason wins), drops it from the session list and,
// when it was the current holder of a uid, tells the sessions that could
// see it that it left (protocol.md §5: t-x-d-d).
func (b *Broker) remove(s *Session, reason string) {
	s.qmu.Lock()
	s.markClosedLocked(reason)
	reason = s.reason
	s.qmu.Unlock()
	s.fireClosed()

	b.mu.Lock()
	old := *b.list.Load()
	idx := -1
	for i, o := range old {
		if o == s {
			idx = i
			break
		}
	}
	if idx < 0 { // already removed
		b.mu.Unlock()
		return
	}
	next := make([]*Session, 0, len(old)-1)
	next = append(next, old[:idx]...)
	next = append(next, old[idx+1:]...)
	b.list.Store(&next)
	id := s.Identity()
	announce := id.UID != "" && b.byUID[id.UID] == s && !b.closed
	if b.byUID[id.UID] == s {
		delete(b.byUID, id.UID)
	}
	b.mu.Unlock()

	b.stats.countClose(reason)
	b.log.Info("client session closed", "session", s.id, "listener", s.info.Listener,
		"addr", s.info.Addr, "uid", id.UID, "callsign", id.Callsign, "reason", reason)
	if announce {
		dep := cot.NewDeparture(id.UID, id.SAType, b.opts.Now())
		b.stats.published.Add(1)
		b.deliver(NewEnvelope(dep), s, nil)
		if b.opts.Observer != nil {
			b.opts.Observer(dep, nil)
		}
	}
}

// Close closes every session with reason "server shutdown" and refuses new
// ones. No departures are sent: everyone is leaving.
func (b *Broker) Close() {
	b.mu.Lock()
	b.closed = true
	list := *b.list.Load()
	b.mu.Unlock()
	for _, s := range list {
		b.remove(s, ReasonShutdown)
	}
}

// Sessions returns the open sessions (a snapshot).
func (b *Broker) Sessions() []*Session {
	l := *b.list.Load()
	return append([]*Session(nil), l...)
}

// ClientInfo is one row of the connected-client registry (api.md §2.11).
type ClientInfo struct {
	UID       string
	Callsign  string
	Team      string
	Role      string
	Address   string // IP address only
	LastSeen  time.Time
	Listener  string
	User      string
	Connected time.Time
}

// Clients lists the connected sessions that have identified themselves
// with an SA, ordered by callsign then uid.
func (b *Broker) Clients() []ClientInfo {
	var out []ClientInfo
	for _, s := range *b.list.Load() {
		id := s.ident.Load()
		if id == nil || id.UID == "" {
			continue
		}
		host := s.info.Addr
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		out = append(out, ClientInfo{
			UID: id.UID, Callsign: id.Callsign, Team: id.Team, Role: id.Role,
			Address: host, LastSeen: id.LastSeen, Listener: s.info.Listener,
			User: s.info.User, Connected: s.joined,
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Callsign != out[j].Callsign {
			return out[i].Callsign < out[j].Callsign
		}
		return out[i].UID < out[j].UID
	})
	return out
}
