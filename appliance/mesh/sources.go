package mesh

import (
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/cotsession"
	"outpost/appliance/logx"
	"outpost/appliance/rate"
)

// device is one source address on the mesh, seen as one anonymous client:
// its CoT session (listed in the driver's registry), its budget, and when
// it was last heard.
type device struct {
	cotsession.Session
	addr netip.AddrPort
	src  *sources

	mu            sync.Mutex // one datagram of this device at a time (several sockets read)
	events, bytes rate.Bucket

	lastSeen atomic.Int64 // unix nanoseconds
	pending  atomic.Bool  // woken: the writer should take its queue
	placed   atomic.Bool  // holds a place in the driver (Enter) until Leave
}

// Cut ends the device's session (cotsession.Conn): a datagram source has
// no connection to close.
func (d *device) Cut() { d.Sess.Close(broker.ReasonShutdown) }

// wake is the session's Wake hook: its writer takes its queue.
func (d *device) wake() {
	d.pending.Store(true)
	d.src.kickWriter()
}

// closed is the session's Closed hook: the device is forgotten and its
// place given back. s.mu orders it with device's listing, so a device is
// never listed after its session closed.
func (d *device) closed(broker.Reason) {
	s := d.src
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byAddr[d.addr] == d {
		delete(s.byAddr, d.addr)
		if s.perHost[d.addr.Addr()]--; s.perHost[d.addr.Addr()] <= 0 {
			delete(s.perHost, d.addr.Addr())
		}
	}
	if d.placed.Swap(false) {
		s.drv.Leave(d)
	}
}

// counters are the datagram counters of a bridge or an input.
type counters struct {
	in, events, out                                        atomic.Uint64
	dropSize, dropLoop, dropDup, dropBudget, dropMalformed atomic.Uint64
	dropOutSize, sendErrors, rejoined                      atomic.Uint64
}

// Stats is a snapshot of the counters of a bridge or an input.
type Stats struct {
	Devices      int    // sources heard within the idle timeout
	DatagramsIn  uint64 // datagrams read
	EventsIn     uint64 // events published from them
	DatagramsOut uint64 // datagrams sent (once per interface)
	// Dropped datagrams in, by reason.
	DroppedSize, DroppedLoop, DroppedDuplicate, DroppedBudget, DroppedMalformed uint64
	// Events not sent out: larger than MaxDatagram; and sends that failed.
	DroppedOutSize, SendErrors uint64
	// Events the relay refused (cotsession): too large for clients, or a
	// position report claiming a uid bound to a certificate.
	OversizeEvents, Impostors uint64
}

// sources is what a bridge and an input share: the devices heard, their
// budgets, and the handling of one datagram.
type sources struct {
	cfg  Sources
	name string // listener name: "mesh" or "udp"
	link string // broker.SessionInfo.Link of the devices ("" for the input)
	drv  *cotsession.Driver[*device]
	warn *logx.Limiter

	recent *seenSet // datagrams just received (duplicates)
	sent   *seenSet // datagrams the bridge sent (loops); nil for the input

	mu      sync.Mutex // guards byAddr and perHost
	byAddr  map[netip.AddrPort]*device
	perHost map[netip.Addr]int

	kick  chan struct{} // capacity 1: the writer has something to take
	stats counters
}

// duplicateWindow is how long an identical datagram counts as a copy of
// the first (the same datagram heard on two interfaces or groups).
const duplicateWindow = 2 * time.Second

// sentWindow is how long a datagram the bridge sent is recognised when it
// comes back.
const sentWindow = 30 * time.Second

// seenMax bounds each generation of the hash sets.
const seenMax = 16 << 10

func newSources(cfg Sources, name, link string) *sources {
	cfg.fill()
	log := cfg.Logger.With("listener", name)
	s := &sources{cfg: cfg, name: name, link: link, warn: logx.NewLimiter(log, 20, 10*time.Second),
		recent: newSeenSet(duplicateWindow, seenMax), byAddr: map[netip.AddrPort]*device{}, perHost: map[netip.Addr]int{},
		kick: make(chan struct{}, 1)}
	// Pacing is the sources' own (a datagram over budget is dropped, not
	// waited for): the driver's is off.
	s.drv = cotsession.New[*device](cotsession.Config{Name: name, MaxMessage: cfg.MaxDatagram, ServerUID: cfg.ServerUID,
		Broker: cfg.Broker, Logger: log, Warn: s.warn, Now: cfg.Now})
	return s
}

func (s *sources) kickWriter() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// handle deals with one datagram from one source. It never blocks on the
// relay: the broker's publish takes no lock on the broadcast path.
func (s *sources) handle(data []byte, from netip.AddrPort) {
	s.stats.in.Add(1)
	now := s.cfg.Now()
	if len(data) > s.cfg.MaxDatagram {
		s.stats.dropSize.Add(1)
		s.warn.Debug("datagram larger than the limit dropped", "remote", from.String(), "limit", s.cfg.MaxDatagram)
		return
	}
	h := datagramHash(data)
	if s.sent != nil && s.sent.has(h, now) {
		s.stats.dropLoop.Add(1)
		return
	}
	if !s.recent.add(h, now) {
		s.stats.dropDup.Add(1)
		return
	}
	d := s.device(from, now)
	if d == nil {
		s.stats.dropBudget.Add(1)
		s.warn.Info("datagram dropped: too many mesh sources", "remote", from.String(),
			"max_sources", s.cfg.MaxSources, "max_per_host", s.cfg.MaxSourcesPerHost)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.events.Allow(now, 1) || !d.bytes.Allow(now, float64(len(data))) {
		s.stats.dropBudget.Add(1)
		s.warn.Info("datagram dropped: source over its budget", "remote", from.String(),
			"events_per_second", s.cfg.MaxEventsPerSecond, "bytes_per_second", s.cfg.MaxBytesPerSecond)
		return
	}
	d.lastSeen.Store(now.UnixNano())
	ev, err := decodeDatagram(data)
	if err != nil {
		s.stats.dropMalformed.Add(1)
		d.Malformed(err.Error())
		return
	}
	s.stats.events.Add(1)
	d.Handle(&cot.Message{Event: ev}, nil)
}

// decodeDatagram decodes one datagram: a TAK protocol v1 mesh datagram
// (0xBF 0x01 0xBF, then a TakMessage) or an XML event.
func decodeDatagram(data []byte) (*cot.Event, error) {
	if len(data) > 0 && data[0] == 0xBF {
		msg, err := cot.ParseMeshFrame(data)
		if err != nil {
			return nil, err
		}
		ev, err := cot.DecodeProto(msg)
		if errors.Is(err, cot.ErrNoEvent) {
			return nil, errors.New("mesh datagram without an event")
		}
		return ev, err
	}
	return cot.Decode(data)
}

// device returns the device of a source address, joining a new one when
// the budgets allow (nil when they do not).
func (s *sources) device(from netip.AddrPort, now time.Time) *device {
	s.mu.Lock()
	d := s.byAddr[from]
	full := d == nil && (len(s.byAddr) >= s.cfg.MaxSources || s.perHost[from.Addr()] >= s.cfg.MaxSourcesPerHost)
	s.mu.Unlock()
	if d != nil || full {
		return d
	}
	if !s.drv.Enter(s.cfg.MaxSources) {
		return nil
	}
	d = &device{addr: from, src: s}
	d.placed.Store(true)
	d.lastSeen.Store(now.UnixNano())
	burst := cotsession.PaceBurst
	d.events, d.bytes = rate.New(float64(s.cfg.MaxEventsPerSecond), burst), rate.New(float64(s.cfg.MaxBytesPerSecond), burst)
	s.drv.Join(&d.Session, broker.SessionInfo{Addr: from.String(), Link: s.link, DirectedOnly: true,
		Closed: d.closed, Wake: d.wake}, cotsession.Identity{In: s.cfg.In, Out: s.cfg.Out, Grouped: true})
	s.mu.Lock()
	other := s.byAddr[from]
	listed := other == nil && !sessionClosed(d.Sess) && s.drv.Add(d)
	if listed {
		s.byAddr[from] = d
		s.perHost[from.Addr()]++
	}
	s.mu.Unlock()
	if !listed {
		// A race for the same source, or shutting down: the close hook
		// gives the place back.
		d.Sess.Close(broker.ReasonShutdown)
		return other
	}
	return d
}

func sessionClosed(s *broker.Session) bool {
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}

// expire forgets the devices silent for the idle timeout.
func (s *sources) expire(now time.Time) {
	limit := now.Add(-s.cfg.IdleTimeout).UnixNano()
	for _, d := range s.drv.Conns(nil, func(d *device) bool { return d.lastSeen.Load() < limit }) {
		d.Sess.Close(broker.ReasonIdle)
	}
}

// drain takes what waits for the devices woken since the last call and
// gives each envelope to send (nil: it is let go).
func (s *sources) drain(buf []*device, spare []*broker.Envelope, send func(*device, *broker.Envelope)) ([]*device, []*broker.Envelope) {
	buf = s.drv.Conns(buf[:0], func(d *device) bool { return d.pending.Swap(false) })
	for _, d := range buf {
		for {
			spare = d.Sess.Take(spare)
			if len(spare) == 0 {
				break
			}
			if send != nil {
				for _, env := range spare {
					send(d, env)
				}
			}
			clear(spare)
		}
	}
	clear(buf)
	return buf, spare
}

// run expires idle devices and takes the devices' queues until stop
// closes; other, when set, is called on every wake too (the bridge's own
// session).
func (s *sources) run(stop <-chan struct{}, send func(*device, *broker.Envelope), other func()) {
	tick := time.NewTicker(max(s.cfg.IdleTimeout/4, time.Second))
	defer tick.Stop()
	var devs []*device
	var spare []*broker.Envelope
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			s.expire(s.cfg.Now())
			continue
		case <-s.kick:
		}
		if other != nil {
			other()
		}
		devs, spare = s.drain(devs, spare, send)
	}
}

// snapshot returns the counters.
func (s *sources) snapshot() Stats {
	c := &s.stats
	ds := s.drv.Stats()
	return Stats{OversizeEvents: ds.OversizeEvents, Impostors: ds.Impostors, Devices: s.drv.Len(), DatagramsIn: c.in.Load(), EventsIn: c.events.Load(), DatagramsOut: c.out.Load(),
		DroppedSize: c.dropSize.Load(), DroppedLoop: c.dropLoop.Load(), DroppedDuplicate: c.dropDup.Load(),
		DroppedBudget: c.dropBudget.Load(), DroppedMalformed: c.dropMalformed.Load(),
		DroppedOutSize: c.dropOutSize.Load(), SendErrors: c.sendErrors.Load()}
}
