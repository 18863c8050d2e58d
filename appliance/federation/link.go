package federation

import (
	"crypto/x509"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/cotsession"
	"outpost/appliance/federation/fedproto"
	"outpost/appliance/logx"
)

// conn is one CoT session of a link (cotsession.Conn): the link's own (it
// publishes what is not a position report and reads what goes out), or a
// remote contact's (it publishes that contact's position reports and
// receives what local clients address to it).
type conn struct {
	cotsession.Session
	l        *link
	uid      string // remote contact's uid; "" for the link's own session
	callsign string // remote contact's callsign (for chat addressed to it); guarded by link.mu
	pending  atomic.Bool
	placed   atomic.Bool
}

// Cut ends the session (cotsession.Conn); the link's streams end with it.
func (c *conn) Cut() { c.Sess.Close(broker.ReasonShutdown) }

// link is one federate connected now, on one gRPC connection in either
// direction: the sessions of what it sends us, the queue of what we send
// it, and the counters of its federate.
type link struct {
	f      *Federation
	name   string                           // the federate's name (configured, or its certificate's common name)
	addr   string                           // the federate's address (its connection's remote address, or the one dialled)
	peerID atomic.Pointer[string]           // the federate's server id, when it said (Subscription, Identity)
	cert   atomic.Pointer[x509.Certificate] // the federate's certificate (revoked.go)
	// sending: the federate receives our events (its ClientEventStream is
	// open, on the listener's side).
	sending  atomic.Bool
	detached atomic.Bool // Federation.detach ran
	stats    *fedStats
	sp       *spooler // the federate's persistent queue (outbound links); nil: none

	// What was sent and not yet acknowledged (remember; unacked.go).
	sent unacked

	own *conn

	// pubMu keeps together setting a session's groups and publishing
	// through it (receive), should two streams of one link receive.
	pubMu sync.Mutex

	mu       sync.Mutex // guards contacts and closed
	contacts map[string]*conn
	closed   bool
	// contactsPending: a contact's session may have something to send (the
	// writer looks through the contacts only then, not at every event).
	contactsPending atomic.Bool

	out chan *fedproto.FederatedEvent // what goes to the federate; full: dropped and counted
	// rolOut: the ROL messages that go to the federate (rol_send.go); full:
	// dropped and counted.
	rolOut chan *fedproto.ROL
	// announced: the local clients whose contact entry went to the
	// federate, by uid, with the callsign sent (contacts.go); written by the
	// writer goroutine only.
	announced map[string]string
	kick      chan struct{} // capacity 1: the writer has something to take
	done      chan struct{}
	once      sync.Once
	wg        sync.WaitGroup
}

// linkKey is the broker.SessionInfo.Link of a federate's sessions.
func linkKey(name string) string { return "federation:" + name }

// newLink joins the link's own session (its replay, the latest position of
// every local client, is the first thing the federate receives) and starts
// its writer.
func (f *Federation) newLink(name, peerID, addr string, sp *spooler) *link {
	l := &link{f: f, name: name, addr: addr, stats: f.statsOf(name), sp: sp, contacts: map[string]*conn{},
		out: make(chan *fedproto.FederatedEvent, f.cfg.Queue), rolOut: make(chan *fedproto.ROL, rolQueue),
		announced: map[string]string{}, kick: make(chan struct{}, 1), done: make(chan struct{})}
	l.setPeer(peerID)
	l.stats.links.Add(1)
	l.own = l.join("", addr, false)
	if l.own == nil {
		l.close()
		return l
	}
	l.wg.Add(1)
	go func() { defer l.wg.Done(); l.write() }()
	l.wakeUp()
	return l
}

// join makes one session of the link (nil when the driver is shutting down
// or full).
func (l *link) join(uid, addr string, directedOnly bool) *conn {
	if !l.f.drv.Enter(0) {
		return nil
	}
	c := &conn{l: l, uid: uid}
	c.placed.Store(true)
	info := broker.SessionInfo{Addr: addr, Link: linkKey(l.name), DirectedOnly: directedOnly,
		Wake: func() {
			c.pending.Store(true)
			if uid != "" {
				l.contactsPending.Store(true)
			}
			l.wakeUp()
		}, Closed: func(broker.Reason) { l.sessionClosed(c) }}
	sessionGroups(l.f.groupsOf(l.name), &info)
	l.f.drv.Join(&c.Session, info, cotsession.Identity{})
	select {
	case <-c.Sess.Done(): // joined a broker that is closing: its hook gave the place back
		return nil
	default:
	}
	if !l.f.drv.Add(c) {
		c.Sess.Close(broker.ReasonShutdown)
		return nil
	}
	c.pending.Store(true)
	return c
}

// setPeer records the federate's server id (its provenance entries).
func (l *link) setPeer(id string) {
	if id != "" {
		l.peerID.Store(&id)
	}
}

func (l *link) peer() string {
	if p := l.peerID.Load(); p != nil {
		return *p
	}
	return ""
}

func (l *link) wakeUp() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// sessionClosed is every session's Closed hook: a contact is forgotten; the
// link's own session closing (a shutdown, or the link fell behind the
// relay) ends the link.
func (l *link) sessionClosed(c *conn) {
	if c.placed.Swap(false) {
		defer l.f.drv.Leave(c)
	}
	if c.uid == "" {
		select {
		case <-l.done: // closed by close itself (which closes done first)
		default:
			l.close()
		}
		return
	}
	l.mu.Lock()
	if l.contacts[c.uid] == c {
		delete(l.contacts, c.uid)
	}
	l.mu.Unlock()
	l.f.forgetRemote(c.uid, l)
}

// close ends the link: its sessions close (their remote contacts depart),
// and its streams return.
func (l *link) close() {
	l.once.Do(func() {
		close(l.done)
		l.mu.Lock()
		l.closed = true
		cs := make([]*conn, 0, len(l.contacts))
		for _, c := range l.contacts {
			cs = append(cs, c)
		}
		l.mu.Unlock()
		for _, c := range cs {
			c.Sess.Close(broker.ReasonClientClosed)
		}
		if l.own != nil {
			l.own.Sess.Close(broker.ReasonClientClosed)
		}
	})
}

// wait returns once the link's writer has stopped.
func (l *link) wait() { l.wg.Wait() }

// write takes what the link's sessions have to send and queues it for the
// federate, converted, without ever waiting: a full queue drops.
func (l *link) write() {
	var spare []*broker.Envelope
	type target struct {
		c        *conn
		callsign string
	}
	var cs []target
	defer func() {
		if l.own != nil {
			l.own.Sess.Release()
		}
	}()
	for {
		select {
		case <-l.done:
			return
		case <-l.kick:
		}
		if l.own.pending.Swap(false) {
			spare = l.drain(l.own, "", spare)
		}
		if !l.contactsPending.Swap(false) {
			continue
		}
		l.mu.Lock()
		cs = cs[:0]
		for _, c := range l.contacts {
			if c.pending.Load() {
				cs = append(cs, target{c, c.callsign})
			}
		}
		l.mu.Unlock()
		for _, t := range cs {
			t.c.pending.Store(false)
			spare = l.drain(t.c, t.callsign, spare)
		}
		clear(cs)
	}
}

// drain takes what c has to send. A contact's session only receives what
// local clients addressed to that contact: it goes out addressed to it.
func (l *link) drain(c *conn, callsign string, spare []*broker.Envelope) []*broker.Envelope {
	for {
		spare = c.Sess.Take(spare)
		if len(spare) == 0 {
			return spare
		}
		for _, env := range spare {
			if c.uid != "" && !env.Directed {
				continue // a contact reads what is addressed to it only
			}
			l.send(env.Event, env.Groups(), callsign, c.uid)
		}
		clear(spare)
	}
}

// send queues ev, sent to the local groups of mask, for the federate, as
// federated makes it (nil: it does not go), noting it in the persistent
// queue's memory (spool.go).
func (l *link) send(ev *cot.Event, mask uint64, destCallsign, destUID string) {
	fe := l.f.federated(ev, l.f.groupsOf(l.name).federateGroups(mask), destCallsign, destUID, l.peer(), l.stats)
	if fe == nil {
		return
	}
	if l.sp != nil && destUID == "" && ev.IsSA() {
		l.sp.note(eventKey(ev), ev.UID)
	}
	// A local client's contact entry (contacts.go): before its first
	// position, after its departure.
	ct := l.contactEntry(ev, destUID == "" && len(fe.FederateProvenance) == 1)
	if ct != nil && ct.Operation != fedproto.CRUD_DELETE {
		l.queueContact(ct, fe)
	}
	select {
	case l.out <- fe:
	default:
		l.stats.dropQueue.Add(1)
		l.f.warn.Warn("federate queue full: event dropped", "federate", logx.Clip(l.name), "queue", cap(l.out))
	}
	if ct != nil && ct.Operation == fedproto.CRUD_DELETE {
		l.queueContact(ct, fe)
	}
}

// federated is ev as it goes to the federate whose server id is peer,
// tagged with the federate groups groups, with its provenance and hops: an
// event received from a federate goes on with what it came with and this
// server added; it does not go (nil) without a federate group (its local
// groups are not mapped out: groups.go), to a federate it already passed
// through, nor past its hop limit.
func (f *Federation) federated(ev *cot.Event, groups []string, destCallsign, destUID, peer string, st *fedStats) *fedproto.FederatedEvent {
	if ev == nil || cot.IsControl(ev.Type) || len(groups) == 0 {
		return nil
	}
	fe := &fedproto.FederatedEvent{FederateGroups: groups}
	o := f.recent.get(eventKey(ev), f.cfg.Now())
	if o == nil {
		o = f.remoteOrigin(ev.UID) // a remote contact's position, replayed after the memory let it go
	}
	if o != nil {
		if peer != "" && slices.ContainsFunc(o.provenance, func(p *fedproto.FederateProvenance) bool {
			return p.GetFederationServerId() == peer
		}) {
			return nil // it came through that federate already
		}
		next := o.hops + 1
		if o.maxHops > 0 && next > o.maxHops {
			st.hopLimited.Add(1)
			return nil
		}
		fe.FederateProvenance = append(slices.Clip(o.provenance), f.self)
		fe.FederateHops = &fedproto.FederateHops{MaxHops: o.maxHops, CurrentHops: next}
	} else {
		fe.FederateProvenance = []*fedproto.FederateProvenance{f.self}
		fe.FederateHops = &fedproto.FederateHops{MaxHops: f.cfg.MaxHops, CurrentHops: 1}
	}
	fe.Event = toGeoEvent(ev, destCallsign, destUID)
	return fe
}

// remember keeps fe among the events sent and not yet acknowledged (an
// outbound link with a persistent queue queues them again if it fails).
func (l *link) remember(fe *fedproto.FederatedEvent) {
	if l.sp == nil {
		return
	}
	l.sent.add(fe, time.Now())
}

// receive handles one message from the federate: loops, spent hops,
// copies and what is not a valid event are dropped and counted; the rest
// is published through the link's sessions, paced like a client.
func (l *link) receive(fe *fedproto.FederatedEvent, size int) {
	l.stats.in.Add(1)
	now := l.f.cfg.Now()
	g := fe.GetEvent()
	if g == nil {
		// A contact entry alone (contacts.go); a loop's copy is dropped.
		if fe.GetContact() == nil {
			l.stats.ignored.Add(1)
			return
		}
		if slices.ContainsFunc(fe.GetFederateProvenance(), func(p *fedproto.FederateProvenance) bool {
			return p.GetFederationServerId() == l.f.cfg.ServerID
		}) {
			l.stats.dropLoop.Add(1)
			return
		}
		l.receiveContact(fe.GetContact(), fe.GetFederateGroups())
		return
	}
	if slices.ContainsFunc(fe.GetFederateProvenance(), func(p *fedproto.FederateProvenance) bool {
		return p.GetFederationServerId() == l.f.cfg.ServerID
	}) {
		l.stats.dropLoop.Add(1)
		return
	}
	h := fe.GetFederateHops()
	if h.GetMaxHops() > 0 && h.GetCurrentHops() > h.GetMaxHops() {
		l.stats.dropHops.Add(1)
		return
	}
	if len(g.GetOther()) > l.f.cfg.MaxEventBytes {
		l.stats.dropSize.Add(1)
		l.f.warn.Warn("federated event refused: too large", "federate", logx.Clip(l.name), "bytes", len(g.GetOther()))
		return
	}
	ev, err := fromGeoEvent(g)
	if err != nil {
		l.stats.dropMalformed.Add(1)
		l.f.warn.Warn("federated event refused: not a valid event", "federate", logx.Clip(l.name), "err", logx.Clip(err.Error()))
		return
	}
	local := l.f.groupsOf(l.name).localGroups(fe.GetFederateGroups())
	if local == 0 {
		l.stats.dropGroup.Add(1) // its federate groups map to no local group (groups.go)
		return
	}
	o := &origin{provenance: fe.GetFederateProvenance(), maxHops: h.GetMaxHops(), hops: h.GetCurrentHops()}
	if h == nil {
		o.maxHops = -1
	}
	if !l.f.recent.add(eventKey(ev), o, now) {
		l.stats.dropDup.Add(1)
		return
	}
	c := l.own
	if ev.IsSA() {
		if c = l.contact(ev); c == nil {
			l.stats.dropContacts.Add(1)
			return
		}
		l.f.rememberRemote(ev.UID, l, o)
	}
	l.pubMu.Lock()
	c.Sess.SetIn(local)
	_, stop := c.Handle(&cot.Message{Event: ev, Size: max(size, 1)}, nil)
	l.pubMu.Unlock()
	if stop {
		return
	}
	l.stats.published.Add(1)
}

// contact returns the session of the remote client that ev reports the
// position of, made on its first report (nil: too many contacts on this
// link, or the link is closing).
func (l *link) contact(ev *cot.Event) *conn {
	c := l.contactOf(ev.UID)
	if c == nil {
		return nil
	}
	if ct := ev.Detail.Contact; ct != nil && ct.Callsign != c.callsign {
		l.mu.Lock()
		c.callsign = ct.Callsign // guarded by l.mu: the writer reads it
		l.mu.Unlock()
	}
	return c
}

// contactOf returns the session of the remote client uid, made when it
// has none (nil: too many contacts on this link, or the link is closing).
func (l *link) contactOf(uid string) *conn {
	l.mu.Lock()
	c := l.contacts[uid]
	if c == nil && (l.closed || len(l.contacts) >= l.f.cfg.MaxContacts) {
		l.mu.Unlock()
		return nil
	}
	l.mu.Unlock()
	if c == nil {
		c = l.join(uid, "federate "+l.name, true)
		if c == nil {
			return nil
		}
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			c.Sess.Close(broker.ReasonClientClosed)
			return nil
		}
		l.contacts[uid] = c
		l.contactsPending.Store(true) // join left it pending
		l.mu.Unlock()
		c.Sess.SetOut(l.f.groupsOf(l.name).outMask) // a mapping changed while it joined (groups.go)
	}
	return c
}
