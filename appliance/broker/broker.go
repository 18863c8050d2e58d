package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/logx"
)

// Options tune the broker. Zero values take the defaults shown.
type Options struct {
	SoftFrames int // 1024: above this many queued frames, SAs are coalesced per uid
	SoftBytes  int // 1 MiB: likewise in bytes
	HardFrames int // 16384: above this the session is closed (ReasonQueueLimit)
	HardBytes  int // 16 MiB: likewise in bytes

	// MaxEventBytes is the largest event, encoded as XML, that is relayed
	// (64 KiB: ATAK's receive buffer, protocol.md §2). A larger event is
	// refused at publish: never queued, never stored.
	MaxEventBytes int

	// MaxUIDsPerUser bounds how many uids one certificate identity may bind
	// (64); further claims are refused like impersonations.
	MaxUIDsPerUser int

	// Bindings are the uid bindings kept from earlier runs (uid ->
	// certificate identity; access.md "Uids belong to identities"), and
	// Bound, when set, is told each new binding, outside the broker's
	// locks (it must not block), so it can be kept.
	Bindings map[string]string
	Bound    func(uid, identity string)

	// Observer is called after routing with every relayed event (control
	// types, refused events and re-broadcasts excluded) and the session it
	// came from (nil: the server). It runs on the publisher's goroutine and
	// must not block (the store's history writer drops rather than blocks).
	Observer func(env *Envelope, from *Session)

	// ClientsChanged, when set, is called after the connected-client
	// registry changed (a client identified itself under a new uid, or an
	// identified client left). It runs on the caller's goroutine, outside
	// the broker's locks, and must not block.
	ClientsChanged func()

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
	def(&o.MaxEventBytes, cot.MaxRelayedEvent)
	def(&o.MaxUIDsPerUser, 64)
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

// Errors of Publish. The event was not relayed nor stored.
var (
	// ErrTooLarge: the event encodes to more than MaxEventBytes.
	ErrTooLarge = errors.New("event larger than what clients can receive")
	// ErrUIDTaken: a position report claims a uid bound to another
	// certificate identity in this run (or too many uids for one identity).
	ErrUIDTaken = errors.New("uid belongs to another identity")
)

// Broker routes events between sessions. Publish takes no lock on the
// broadcast path: it reads an immutable snapshot of the session list.
type Broker struct {
	opts     Options
	log      *slog.Logger
	closeLog *logx.Limiter // "client session closed" lines

	// mu guards byUID, holders, bound, boundBy, draining, closed, retained
	// and every replacement of list.
	mu   sync.Mutex
	list atomic.Pointer[sessionList] // copy-on-write snapshot of open sessions (list.go)
	// trimLater is set while a trim is scheduled (idleTrimDelay).
	trimLater atomic.Bool
	ids       identities
	draining  bool // Drain was called: no departures, no new sessions
	closed    bool
	retain    retainer
	recent    recentRing

	events *eventLog // the broadcast log every session reads (ring.go)

	nextID atomic.Uint64
	stats  counters
}

// New returns a broker.
func New(opts Options) *Broker {
	opts.fill()
	b := &Broker{opts: opts, log: opts.Logger.With("component", "broker"), ids: newIdentities(),
		events: newEventLog(opts.HardFrames, opts.HardBytes)}
	for uid, who := range opts.Bindings {
		b.ids.bound[uid] = who
		b.ids.perUser[who]++
	}
	b.closeLog = logx.NewLimiter(b.log, 50, time.Second)
	b.list.Store(&sessionList{})
	return b
}

// Join registers a new session. The latest SA of every connected client
// the new session can see, then every retained event, is what it takes
// first (protocol.md §5), before any live traffic. After Drain or Close the
// session is returned already closed (ReasonShutdown). Join does not call
// the session's Wake hook: the transport starts its writer when it is ready.
func (b *Broker) Join(info SessionInfo) *Session {
	if !info.Grouped && info.In == 0 && info.Out == 0 {
		info.In, info.Out = AnonGroup, AnonGroup
	}
	s := &Session{
		pos:    -1,
		id:     b.nextID.Add(1),
		b:      b,
		info:   info,
		joined: b.opts.Now(),
		ready:  make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	s.in.Store(info.In)
	s.out.Store(info.Out)
	// The session becomes visible and takes its replay under b.mu: a
	// publisher that already sees it queues live events, which its writer
	// takes only once the replay is sent (Take), so live events always
	// follow the replay.
	b.mu.Lock()
	if b.closed || b.draining {
		b.mu.Unlock()
		s.qmu.Lock()
		s.markClosedLocked(ReasonShutdown)
		s.qmu.Unlock()
		s.fireClosed()
		return s
	}
	old := b.list.Load()
	b.list.Store(old.with(s))
	// The replay is a cursor over the session list as it was (an immutable
	// snapshot shared by every session that joined since, not a copy) and
	// the retained events: nothing per session but the position.
	if !info.DirectedOnly {
		s.replay = old
		s.replayRetained = b.retain.envelopes()
	}
	// The session reads the log from here on: after the list includes it,
	// so a publisher that appends later also wakes it.
	s.startSeq = b.events.position()
	s.cursor.Store(s.startSeq)
	b.mu.Unlock()
	if s.replayLen() > 0 {
		select {
		case s.ready <- struct{}{}:
		default:
		}
	}
	b.stats.joined.Add(1)
	return s
}

// Publish routes an event from a session (nil: from the server itself, to
// every group). It goes to the sender's IN groups (access.md "Groups").
// Control types are consumed, never relayed (protocol.md §5). An event that
// encodes larger than MaxEventBytes (ErrTooLarge) or a position report that
// claims another identity's uid (ErrUIDTaken) is refused: not relayed, not
// stored, counted; the caller logs it. The event must not be modified
// afterwards.
func (b *Broker) Publish(ev *cot.Event, from *Session) error {
	groups := AllGroups
	if from != nil {
		groups = from.in.Load()
	}
	return b.publish(ev, from, groups)
}

// PublishTo routes an event from the server to the groups of a mask only
// (an object made for chosen groups).
func (b *Broker) PublishTo(ev *cot.Event, groups uint64) error { return b.publish(ev, nil, groups) }

func (b *Broker) publish(ev *cot.Event, from *Session, groups uint64) error {
	if ev == nil || cot.IsControl(ev.Type) {
		return nil
	}
	out := ev
	var dests []cot.Dest
	if m := ev.Detail.Marti; m != nil {
		dests = directDests(m.Dests)
		out = ev.WithoutMarti() // protocol.md §6: remove <marti> before forwarding
	}
	env := NewEnvelope(out)
	env.groups = groups
	env.Directed = dests != nil
	for _, d := range dests {
		if d.Mission != "" {
			env.Missions = append(env.Missions, d.Mission)
		}
	}
	if n := len(env.XML()); n > b.opts.MaxEventBytes {
		b.stats.oversize.Add(1)
		return fmt.Errorf("%w: %d bytes encoded, at most %d", ErrTooLarge, n, b.opts.MaxEventBytes)
	}
	if from != nil && env.sa {
		if err := b.identify(from, env); err != nil {
			b.stats.impostor.Add(1)
			return err
		}
	}
	b.stats.published.Add(1)
	b.stats.in[env.class].Add(1)
	if dests != nil {
		b.deliverDirected(env, from, dests)
	} else {
		b.broadcast(env, from, nil)
	}
	if b.opts.Observer != nil {
		b.opts.Observer(env, from)
	}
	return nil
}

// Notify delivers a server notification (mission and checklist changes,
// api.md §6.2) to the connections that own uids, or to every session of
// groups when uids is nil. Notifications are not part of the situation
// picture: they are neither observed (no history) nor retained nor
// replayed.
func (b *Broker) Notify(ev *cot.Event, uids []string, groups uint64) error {
	env := NewEnvelope(ev)
	env.groups = groups
	if n := len(env.XML()); n > b.opts.MaxEventBytes {
		b.stats.oversize.Add(1)
		return fmt.Errorf("%w: %d bytes encoded, at most %d", ErrTooLarge, n, b.opts.MaxEventBytes)
	}
	b.stats.published.Add(1)
	b.stats.in[env.class].Add(1)
	if uids == nil {
		b.broadcast(env, nil, nil)
		return nil
	}
	env.Directed = true
	targets := map[*Session]bool{}
	b.mu.Lock()
	for _, u := range uids {
		if s := b.ids.owner(u); s != nil {
			targets[s] = true
		}
	}
	b.mu.Unlock()
	if len(targets) == 0 {
		return nil // none of them is connected
	}
	b.stats.directed.Add(1)
	b.broadcast(env, nil, targets)
	return nil
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

// broadcast appends env to the log, for every session the sender may
// reach (protocol.md §6) except the sender itself, or only for those in to
// when it is not nil, and wakes their writers. A position report becomes
// its sender's latest SA in the same step.
func (b *Broker) broadcast(env *Envelope, from *Session, to map[*Session]bool) {
	var lastSA *atomic.Pointer[Envelope]
	if from != nil && env.sa {
		lastSA = &from.lastSA
	}
	seq := b.events.append(env, from, to, lastSA)
	if to != nil {
		// Directed: wake the few recipients only. The others step over
		// the entry when their writers next read (a trim wakes those far
		// behind).
		for s := range to {
			if s != from && env.groups&s.out.Load() != 0 && s.reads(from, true) {
				s.signal()
			}
		}
	} else {
		b.list.Load().each(func(s *Session) {
			if s != from && env.groups&s.out.Load() != 0 && s.reads(from, false) {
				s.signal()
				return
			}
			// Not for s: a session that had read everything before this
			// entry steps over it, so a client that only sends (or sees
			// nothing of this) never holds the log's tail. Exact: the
			// cursor equals seq only once every earlier entry was read.
			s.cursor.CompareAndSwap(seq, seq+1)
		})
	}
	if b.events.needsTrim() {
		b.trim(false)
	} else if b.trimLater.CompareAndSwap(false, true) {
		// Trims are amortised over many publishes: once publishing stops,
		// one more a moment later releases what every session has read by
		// then, so a quiet relay holds no log.
		time.AfterFunc(idleTrimDelay, func() {
			b.trimLater.Store(false)
			b.trim(false)
		})
	}
}

// idleTrimDelay is how long after a publish that did not trim the log a
// trim runs anyway.
const idleTrimDelay = time.Second

// trim releases the log entries every open session has read, and wakes the
// writers of sessions that lag far behind with nothing queued for them
// (the step-over in broadcast can miss one when publishers race), so their
// cursor catches up before the log has to drop what they have not read.
// With wakeHolder (a session closed: what it held should go now), the
// session left holding the oldest entries is also woken, and trims again
// once it has caught up.
func (b *Broker) trim(wakeHolder bool) {
	// The head is read before the list: a session missing from this list
	// joined later, at a position no lower than head, so it never loses
	// what it has not read.
	head := b.events.position()
	min := head
	var holder *Session // one session at min
	b.list.Load().each(func(s *Session) {
		c := s.cursor.Load()
		if c < min {
			min, holder = c, s
		}
		if head-c > trimWakeLag || (head-c > 1 && b.events.lagBytes(c) > b.opts.HardBytes/8) {
			s.signal()
		}
	})
	b.events.trim(min)
	if wakeHolder && holder != nil {
		// The session holding the oldest entries catches up now and trims
		// again when its cursor moves (Take): a cursor left one entry behind
		// by a race between its writer and a publisher's step-over would
		// otherwise hold everything published since, up to the limits above.
		holder.holdsTail.Store(true)
		holder.signal()
	}
}

// trimWakeLag is how far behind the log's head a session's cursor may be
// before a trim wakes its writer to catch up (or an eighth of HardBytes,
// for large events).
const trimWakeLag = 256

// deliverDirected delivers only to the sessions named by dests (protocol.md
// §6): a uid reaches the connection that owns it; a callsign reaches the
// owning connection of every uid whose current callsign it is; a mission
// reaches the owners of its subscribers' uids.
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
	targets := map[*Session]bool{}
	b.mu.Lock()
	for u := range uids {
		if s := b.ids.owner(u); s != nil {
			targets[s] = true
		}
	}
	if len(callsigns) > 0 {
		b.list.Load().each(func(s *Session) {
			if id := s.ident.Load(); id != nil && callsigns[id.Callsign] && b.ids.owner(id.UID) == s {
				targets[s] = true
			}
		})
	}
	b.mu.Unlock()
	b.stats.directed.Add(1)
	b.broadcast(env, from, targets)
}

// remove closes s (first reason wins), drops it from the session list and,
// when no other connection still holds its uid, tells the sessions that
// could see it that it left (protocol.md §5: t-x-d-d). No departure is sent
// while the broker drains or after it closed.
func (b *Broker) remove(s *Session, reason Reason) {
	s.qmu.Lock()
	s.markClosedLocked(reason)
	reason = s.reason
	s.qmu.Unlock()
	s.fireClosed()

	b.mu.Lock()
	if s.pos < 0 { // never listed (joined after Drain) or already removed
		b.mu.Unlock()
		return
	}
	b.list.Store(b.list.Load().without(s))
	id := s.Identity()
	lastHolder := b.ids.release(s, id.UID)
	announce := lastHolder && !b.draining && !b.closed
	b.recent.add(Closed{ID: s.id, UID: id.UID, Callsign: id.Callsign, User: s.info.User, Listener: s.info.Listener,
		Address: hostOf(s.info.Addr), Reason: reason, Connected: s.joined, Closed: b.opts.Now(), Groups: s.in.Load()})
	b.mu.Unlock()

	b.stats.closed[reason].Add(1)
	b.trim(true) // what only s had left to read is released now
	if id.UID != "" && b.opts.ClientsChanged != nil {
		b.opts.ClientsChanged()
	}
	b.closeLog.Info("client session closed", "session", s.id, "listener", s.info.Listener,
		"remote", s.info.Addr, "uid", logx.Clip(id.UID), "callsign", logx.Clip(id.Callsign), "reason", reason.String())
	if announce {
		dep := cot.NewDeparture(id.UID, id.SAType, b.opts.Now())
		env := NewEnvelope(dep)
		env.groups = s.in.Load() // those who could see it
		b.stats.published.Add(1)
		b.stats.in[ClassDelete].Add(1)
		b.stats.departures.Add(1)
		b.broadcast(env, s, nil)
		if b.opts.Observer != nil {
			b.opts.Observer(env, nil)
		}
	}
}

// Drain puts the broker in its shutdown state before the listeners close
// their connections: from now on no departure is announced or stored
// (everyone is leaving; ATAK would remove every marker from every screen)
// and no new session joins. Routing between the sessions still open goes on
// until they are closed.
func (b *Broker) Drain() {
	b.mu.Lock()
	b.draining = true
	b.mu.Unlock()
	b.retain.stop()
}

// Close drains, closes every session still open (ReasonShutdown) and
// refuses new ones.
func (b *Broker) Close() {
	b.Drain()
	b.mu.Lock()
	b.closed = true
	list := b.list.Load().slice()
	b.mu.Unlock()
	for _, s := range list {
		b.remove(s, ReasonShutdown)
	}
}

// Draining reports whether Drain (or Close) was called.
func (b *Broker) Draining() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.draining
}

// Sessions returns the open sessions (a snapshot).
func (b *Broker) Sessions() []*Session {
	return b.list.Load().slice()
}
