package federation

import (
	"sync"

	"google.golang.org/protobuf/proto"

	"outpost/appliance/broker"
	"outpost/appliance/cotsession"
	"outpost/appliance/federation/fedproto"
	"outpost/appliance/logx"
)

// Disruption tolerance (docs/federation.md "Disruption tolerance"): while
// an outbound federate's link is down, a session of its own (the spool
// session) reads what local clients send and appends it, as it would have
// been sent, to the federate's persistent queue (Config.Spool, bounded by
// age and bytes there). When the link is up again its writer sends that
// queue first, oldest first, then what the link's session reads. The
// spool session closes only once the link's session is joined, and opens
// before it closes: the overlap can only repeat an event, which the
// receiving server's memory of recent events drops (recent.go), never
// lose one. So do the last events a link sent before it failed (they may
// have been lost on the way): what was sent since the last acknowledged
// health check is queued again (unacked.go).

// Spool is the persistent outbound queue of each outbound federate.
type Spool interface {
	// Append queues encoded events after what is queued, then keeps the
	// queue within its bounds; dropped counts what that removed.
	Append(federate string, items [][]byte) (dropped int64, err error)
	// Take returns the oldest queued events, at most max, with their ids.
	Take(federate string, max int) (ids []int64, items [][]byte, err error)
	// Delete removes the queued events up to id.
	Delete(federate string, upTo int64) error
}

// spoolBatch is how many queued events a link takes at once.
const spoolBatch = 256

// maxSeen bounds a spooler's memory of the last position queued per uid.
const maxSeen = 64 << 10

// spooler is one outbound federate's persistent queue and the session
// that fills it while its link is down.
type spooler struct {
	f    *Federation
	name string
	st   *fedStats

	mu   sync.Mutex
	peer string            // the federate's server id, as its last link said
	seen map[string]uint64 // uid → key of the last position queued for the federate

	run    sync.Mutex // guards c, quit, closed
	c      *conn      // the spool session; nil while the link is up
	closed bool       // the federate was removed, or federation shuts down
	kick   chan struct{}
	quit   chan struct{}
	wg     sync.WaitGroup
}

func (f *Federation) newSpooler(name string) *spooler {
	return &spooler{f: f, name: name, st: f.statsOf(name), seen: map[string]uint64{}, kick: make(chan struct{}, 1)}
}

// queued reports whether the position report of uid keyed key is the
// position last queued or sent to the federate (the spool session's
// replay repeats it) and remembers it otherwise. The link's own replay is not skipped so: the federate may
// have restarted, and it sends the newest position of each uid, after
// the queue.
func (sp *spooler) queued(key uint64, uid string) bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if k, ok := sp.seen[uid]; ok && k == key {
		return true
	}
	sp.noteLocked(key, uid)
	return false
}

// note remembers the position the link queued for the federate (sp is
// not nil; the caller checked it is a position report).
func (sp *spooler) note(key uint64, uid string) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.noteLocked(key, uid)
}

func (sp *spooler) noteLocked(key uint64, uid string) {
	if len(sp.seen) >= maxSeen {
		clear(sp.seen)
	}
	sp.seen[uid] = key
}

func (sp *spooler) setPeer(id string) {
	if id != "" {
		sp.mu.Lock()
		sp.peer = id
		sp.mu.Unlock()
	}
}

func (sp *spooler) peerID() string {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.peer
}

// open joins the spool session (what it reads waits until drain starts).
func (sp *spooler) open() {
	sp.run.Lock()
	defer sp.run.Unlock()
	if sp.c != nil || sp.closed || !sp.f.drv.Enter(0) {
		return
	}
	c := &conn{}
	c.placed.Store(true)
	info := broker.SessionInfo{Addr: sp.name, Link: linkKey(sp.name),
		Wake: func() {
			select {
			case sp.kick <- struct{}{}:
			default:
			}
		},
		Closed: func(broker.Reason) {
			if c.placed.Swap(false) {
				sp.f.drv.Leave(c)
			}
		}}
	sessionGroups(sp.f.groupsOf(sp.name), &info)
	sp.f.drv.Join(&c.Session, info, cotsession.Identity{})
	select {
	case <-c.Sess.Done():
		return
	default:
	}
	if !sp.f.drv.Add(c) {
		c.Sess.Close(broker.ReasonShutdown)
		return
	}
	sp.c = c
	c.Sess.SetOut(sp.f.groupsOf(sp.name).outMask) // a mapping changed while it joined (groups.go)
}

// drain starts moving what the spool session reads into the queue.
func (sp *spooler) drain() {
	sp.run.Lock()
	defer sp.run.Unlock()
	if sp.c == nil || sp.quit != nil {
		return
	}
	sp.quit = make(chan struct{})
	c, quit := sp.c, sp.quit
	sp.wg.Add(1)
	go func() {
		defer sp.wg.Done()
		var spare []*broker.Envelope
		for {
			spare = sp.moveOnce(c, spare)
			select {
			case <-quit:
				sp.moveOnce(c, spare) // what came before the link's session took over
				return
			case <-sp.f.stop:
				sp.moveOnce(c, spare)
				return
			case <-sp.kick:
			}
		}
	}()
	select {
	case sp.kick <- struct{}{}:
	default:
	}
}

// moveOnce appends what the session has to the queue.
func (sp *spooler) moveOnce(c *conn, spare []*broker.Envelope) []*broker.Envelope {
	peer := sp.peerID()
	for {
		spare = c.Sess.Take(spare)
		if len(spare) == 0 {
			return spare
		}
		items := make([][]byte, 0, len(spare))
		for _, env := range spare {
			fe := sp.f.federated(env.Event, sp.f.groupsOf(sp.name).federateGroups(env.Groups()), "", "", peer, sp.st)
			if fe == nil || env.Event.IsSA() && sp.queued(eventKey(env.Event), env.Event.UID) {
				continue
			}
			if b, err := proto.Marshal(fe); err == nil {
				items = append(items, b)
			}
		}
		clear(spare)
		sp.append(items)
	}
}

// append queues items, counting them and what the bounds dropped.
func (sp *spooler) append(items [][]byte) {
	if len(items) == 0 {
		return
	}
	dropped, err := sp.f.cfg.Spool.Append(sp.name, items)
	if err != nil {
		sp.st.dropSpool.Add(uint64(len(items)))
		sp.f.warn.Warn("federate queue: events not stored", "federate", logx.Clip(sp.name), "err", errString(err))
		return
	}
	sp.st.spooled.Add(uint64(len(items)))
	if dropped > 0 {
		sp.st.dropSpool.Add(uint64(dropped))
	}
}

// requeue queues again what a failed link may not have delivered: what it
// sent since its last acknowledged health check, then what its writer had
// not sent yet.
func (sp *spooler) requeue(l *link) {
	var items [][]byte
	for _, fe := range l.sent.pending() {
		if b, err := proto.Marshal(fe); err == nil {
			items = append(items, b)
		}
	}
	for {
		select {
		case fe := <-l.out:
			if b, err := proto.Marshal(fe); err == nil {
				items = append(items, b)
			}
			continue
		default:
		}
		break
	}
	sp.append(items)
}

// stop ends the spool session once the link's session is joined, after
// moving what it read into the queue.
func (sp *spooler) stop() {
	sp.run.Lock()
	c, quit := sp.c, sp.quit
	sp.c, sp.quit = nil, nil
	sp.run.Unlock()
	if quit != nil {
		close(quit)
	}
	sp.wg.Wait()
	if c != nil {
		c.Sess.Close(broker.ReasonClientClosed)
		c.Sess.Release()
	}
}

// close stops the spooler for good.
func (sp *spooler) close() {
	sp.run.Lock()
	sp.closed = true
	sp.run.Unlock()
	sp.stop()
}

// sendQueued sends the federate's queue, oldest first, deleting what was
// sent; it returns at the first error.
func (l *link) sendQueued(send func(*fedproto.FederatedEvent) error) error {
	sp := l.sp
	for {
		ids, items, err := sp.f.cfg.Spool.Take(sp.name, spoolBatch)
		if err != nil || len(items) == 0 {
			return err
		}
		for i, b := range items {
			fe := &fedproto.FederatedEvent{}
			if err := proto.Unmarshal(b, fe); err != nil {
				continue
			}
			if err := send(fe); err != nil {
				if i > 0 {
					_ = sp.f.cfg.Spool.Delete(sp.name, ids[i-1])
				}
				return err
			}
			l.remember(fe)
			l.stats.out.Add(1)
			l.stats.replayed.Add(1)
		}
		if err := sp.f.cfg.Spool.Delete(sp.name, ids[len(ids)-1]); err != nil {
			return err
		}
	}
}
