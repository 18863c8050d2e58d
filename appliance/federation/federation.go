package federation

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/cotsession"
	"outpost/appliance/federation/fedproto"
	"outpost/appliance/logx"
)

// ListenerName is the federation listener's name (and its sessions').
const ListenerName = "federation"

// anonGroup is the federate group exchanged with a federate without a
// group mapping (docs/federation.md "Groups").
const anonGroup = "__ANON__"

// anonGroups is the groups of such a federate's events (shared: never
// changed).
var anonGroups = []string{anonGroup}

// Outbound is a federate this server connects to.
type Outbound struct {
	Name    string // how the federate is known here (its counters, its sessions' link)
	Address string // host:port of its federation v2 listener
	// Trusted, when set, are the CAs its certificate must chain to (a
	// managed federate's); nil: Config.Trusted.
	Trusted *x509.CertPool
	// V1, when set, connects with federation v1 (v1.go) instead of v2.
	V1 bool
	// Pin, when set, is the SHA-256 fingerprint (as Fingerprint writes it)
	// its certificate must have (a managed federate's).
	Pin string
	// BackoffMin and BackoffMax bound its reconnect delay (0: Config's).
	BackoffMin, BackoffMax time.Duration
}

// Config configures federation.
type Config struct {
	// Addr is the listener's address (host:port); empty: no listener, only
	// outbound connections.
	Addr string
	// Listen, when set, binds Addr with tlsConfig and returns a listener
	// whose connections finished their TLS handshake (the appliance's
	// connection intake, with its limits); nil: a plain TCP listener and
	// gRPC's own TLS.
	Listen      func(addr string, tlsConfig *tls.Config) (net.Listener, error)
	Certificate tls.Certificate // this server's federation identity, both ways
	Trusted     *x509.CertPool  // the CAs whose federates are let in (and connected to)
	// Allow, when not empty, admits only the federates whose certificate's
	// common name or SHA-256 fingerprint it lists (a trusted CA may sign
	// more than federates: a TAK server's CA signs its users too).
	Allow     []string
	Federates []Outbound

	// V1Addr is the federation v1 listener's address (v1.go); empty: none.
	// V1Listen binds it as Listen binds Addr (nil: a plain TLS listener).
	V1Addr   string
	V1Listen func(addr string, tlsConfig *tls.Config) (net.Listener, error)

	Name     string // this server's name in its Identity and provenance
	ServerID string // this server's federation id (provenance: a loop is an event that carries it)
	MaxHops  int64  // the hop limit of events that start here; -1 none

	Queue          int           // events queued per link before dropping (default 4096)
	MaxMessage     int           // largest gRPC message accepted (default 4 MiB); a larger one ends its stream
	MaxEventBytes  int           // largest <detail> accepted (default cot.MaxRelayedEvent)
	MaxContacts    int           // remote contacts per link (default 4096)
	HealthInterval time.Duration // outbound health checks (default 30 s)
	BackoffMin     time.Duration // first reconnect delay (default 1 s)
	BackoffMax     time.Duration // longest reconnect delay (default 60 s)

	// Pacing of what each link publishes, as a client's (0: none).
	MaxEventsPerSecond, MaxBytesPerSecond int

	// Revoked, when set, reports a certificate that is revoked (this
	// server's CA's revocation list): it is refused at the handshake both
	// ways, whatever CA trusts it.
	Revoked func(*x509.Certificate) bool
	// OnDemand: the listener is bound only while a managed federate is
	// enabled with a CA (no federationTrust: nothing else could get in),
	// and closed when none is (listener.go).
	OnDemand bool

	// Spool, when set, is the persistent outbound queue of the outbound
	// federates (spool.go); nil: what a link down misses is not sent.
	Spool Spool

	// Missions, when set, is the store of missions and files that ROL
	// reads and changes (rol_send.go, rol_receive.go); nil: missions do not cross.
	Missions MissionStore
	// MaxFileBytes bounds a file carried over ROL (the data package
	// upload limit; within MaxMessage in any case).
	MaxFileBytes int64
	// ROLReplay is how far back the mission changes sent to a federate's
	// first link since start go (later links: since the previous one
	// ended); 0: one hour; negative: none.
	ROLReplay time.Duration

	Broker *broker.Broker
	Logger *slog.Logger
	Now    func() time.Time
}

func (c *Config) fill() {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&c.Queue, 4096)
	def(&c.MaxMessage, 4<<20)
	def(&c.MaxEventBytes, cot.MaxRelayedEvent)
	def(&c.MaxContacts, 4096)
	defd := func(p *time.Duration, v time.Duration) {
		if *p <= 0 {
			*p = v
		}
	}
	defd(&c.HealthInterval, 30*time.Second)
	defd(&c.BackoffMin, time.Second)
	defd(&c.BackoffMax, time.Minute)
	if c.ROLReplay == 0 {
		c.ROLReplay = time.Hour
	}
	if c.MaxHops == 0 {
		c.MaxHops = -1
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Trusted == nil {
		c.Trusted = x509.NewCertPool()
	}
}

// Federation is the federation listener and the outbound connections. It
// follows the listener contract (architecture.md "The five listeners").
type Federation struct {
	cfg    Config
	log    *slog.Logger
	warn   *logx.Limiter
	drv    *cotsession.Driver[*conn]
	recent *recent
	self   *fedproto.FederateProvenance // this server's provenance entry, shared by every event it sends (never changed)

	lnMu      sync.Mutex // guards ln, srv, listenErr (listener.go)
	ln        net.Listener
	srv       *grpc.Server
	listenErr string // why the on-demand listener could not be bound ("" none)
	stop      chan struct{}
	wg        sync.WaitGroup

	attachMu sync.Mutex // serialises making the links of connecting federates
	mu       sync.Mutex // guards stats and links
	stats    map[string]*fedStats
	links    map[string]*link    // by federate name: the one link of each
	spoolers map[string]*spooler // outbound federates' persistent queues, by name (spool.go)

	manMu          sync.Mutex                    // guards managed
	managed        map[string]*managedFed        // federates managed at run time, by name (managed.go)
	trustedManaged atomic.Pointer[[]*managedFed] // the enabled ones with a CA: handshakes read it

	groups groupState // the federates' group mappings (groups.go)

	remoteMu sync.Mutex        // guards remote
	remote   map[string]remote // remote contacts' uids: where their positions came from (recent.go)

	v1Once    sync.Once
	v1        *V1Listener        // the federation v1 listener (v1.go), made by V1
	rolWork   chan MissionChange // local mission changes for the ROL worker (rol_send.go)
	rolRecent *recent            // ROL programs received or sent lately (copies are dropped)
	rolMu     sync.Mutex         // one received ROL program applied at a time (rol_receive.go)
}

// maxStreams bounds the calls open at once on one federate's connection
// (a link uses six).
const maxStreams = 16

// recentWindow is how long a received event is remembered (copies over
// another path of a loop arrive within it).
const recentWindow = time.Minute

// New returns federation as configured (not yet listening).
func New(cfg Config) *Federation {
	cfg.fill()
	log := cfg.Logger.With("listener", ListenerName)
	f := &Federation{cfg: cfg, log: log, warn: logx.NewLimiter(log, 20, 10*time.Second),
		recent: newRecent(recentWindow, 64<<10), stop: make(chan struct{}),
		self:  &fedproto.FederateProvenance{FederationServerId: cfg.ServerID, FederationServerName: cfg.Name},
		stats: map[string]*fedStats{}, links: map[string]*link{}, remote: map[string]remote{}, managed: map[string]*managedFed{}, spoolers: map[string]*spooler{},
		rolWork: make(chan MissionChange, rolWork), rolRecent: newRecent(recentWindow, 16<<10)}
	f.drv = cotsession.New[*conn](cotsession.Config{Name: ListenerName, MaxEventsPerSecond: cfg.MaxEventsPerSecond,
		MaxBytesPerSecond: cfg.MaxBytesPerSecond, ServerUID: cfg.ServerID, Broker: cfg.Broker, Logger: log,
		Warn: f.warn, Now: cfg.Now, MaxMessage: cfg.MaxEventBytes})
	for _, o := range cfg.Federates {
		f.statsOf(o.Name)
		if cfg.Spool != nil {
			f.spoolers[o.Name] = f.newSpooler(o.Name)
		}
	}
	return f
}

// Listen binds the listener (when there is one and it is not on demand).
func (f *Federation) Listen() error {
	if f.cfg.Addr == "" || f.cfg.OnDemand {
		return nil
	}
	return f.bind()
}

// Serve serves the listener and starts the outbound connections.
func (f *Federation) Serve() {
	f.wg.Add(1)
	go func() { defer f.wg.Done(); f.rolWorker() }()
	f.serveListener()
	for _, o := range f.cfg.Federates {
		if sp := f.spoolerOf(o.Name); sp != nil {
			sp.open()
			sp.drain()
		}
		f.wg.Add(1)
		go func() { defer f.wg.Done(); f.dialLoop(o, nil) }()
	}
}

// Shutdown ends every link and the listener.
func (f *Federation) Shutdown(ctx context.Context) error {
	f.manMu.Lock() // SetManaged starts no dialler after this
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	f.manMu.Unlock()
	f.mu.Lock()
	ls := make([]*link, 0, len(f.links))
	for _, l := range f.links {
		ls = append(ls, l)
	}
	f.mu.Unlock()
	for _, l := range ls {
		l.close()
	}
	f.mu.Lock()
	sps := make([]*spooler, 0, len(f.spoolers))
	for _, sp := range f.spoolers {
		sps = append(sps, sp)
	}
	f.mu.Unlock()
	for _, sp := range sps {
		sp.close() // what they read is queued
	}
	f.drv.Shutdown(ctx)
	f.lnMu.Lock()
	srv := f.srv
	f.lnMu.Unlock()
	if srv != nil {
		done := make(chan struct{})
		go func() { srv.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			srv.Stop()
		}
	}
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	// Clients still receiving at the end of the drain budget are not an
	// error (architecture.md "Shutdown order"); the links' goroutines end
	// once their connections are closed, which may come just after it.
	select {
	case <-done:
		return nil
	case <-time.After(shutdownGrace):
		return errors.New("federation: its goroutines did not end after the shutdown")
	}
}

// shutdownGrace is how long past the drain budget Shutdown waits for the
// links' goroutines.
const shutdownGrace = 2 * time.Second

// attach makes the link of a federate that connected, replacing the one
// it had (a federate that reconnects before its old connection ended).
func (f *Federation) attach(name, peerID, addr string, sp *spooler, cert *x509.Certificate) (*link, error) {
	select {
	case <-f.stop:
		return nil, errors.New("shutting down")
	default:
	}
	l := f.newLink(name, peerID, addr, sp)
	l.cert.Store(cert) // before it is listed: EndRevoked ends a link without one
	f.mu.Lock()
	old := f.links[name]
	f.links[name] = l
	f.mu.Unlock()
	l.setOut(f.groupsOf(name).outMask) // a mapping changed while it joined (groups.go)
	if old != nil {
		old.close()
	}
	l.stats.connected.Add(1)
	f.log.Info("federate connected", "federate", logx.Clip(name), "remote", addr)
	return l, nil
}

// detach ends l and forgets it; the first call of each link counts (the
// two event streams of a link both detach it).
func (f *Federation) detach(l *link, why error) {
	l.close()
	l.wait()
	if l.detached.Swap(true) {
		return
	}
	f.mu.Lock()
	if f.links[l.name] == l {
		delete(f.links, l.name)
	}
	f.mu.Unlock()
	l.stats.connected.Add(-1)
	l.stats.downAt.Store(f.cfg.Now().UnixMilli())
	if why != nil && !errors.Is(why, io.EOF) {
		l.stats.setError(why)
	}
	f.log.Info("federate disconnected", "federate", logx.Clip(l.name), "err", errString(why))
}

// spoolerOf returns the federate's persistent queue (nil: none).
func (f *Federation) spoolerOf(name string) *spooler {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.spoolers[name]
}

// linkOf returns the federate's current link (nil: none).
func (f *Federation) linkOf(name string) *link {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.links[name]
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return logx.Clip(err.Error())
}

// identity is this server's Identity.
func (f *Federation) identity(t fedproto.Identity_ConnectionType) *fedproto.Identity {
	return &fedproto.Identity{Name: f.cfg.Name, Uid: f.cfg.ServerID, ServerId: f.cfg.ServerID, Type: t,
		Description: "Outpost"}
}
