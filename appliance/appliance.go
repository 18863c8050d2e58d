package appliance

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/admin"
	"outpost/appliance/broker"
	"outpost/appliance/config"
	"outpost/appliance/diskspace"
	"outpost/appliance/federation"
	"outpost/appliance/geo"
	"outpost/appliance/logx"
	"outpost/appliance/marti"
	"outpost/appliance/mgmt"
	"outpost/appliance/netx"
	"outpost/appliance/objects"
	"outpost/appliance/pki"
	"outpost/appliance/store"
	"outpost/appliance/stream"
	"outpost/appliance/users"
	"outpost/web"
)

// Listener names, as they appear in Addrs, logs and the client registry.
const (
	ListenerREST   = "rest"
	ListenerHTTP   = "http"
	ListenerHTTPS  = "https"
	ListenerCoTTCP = "cot-tcp"
	ListenerCoTTLS = "cot-tls"
	ListenerEnroll = "enroll"
)

// Appliance is one running Outpost.
type Appliance struct {
	cfg config.Config
	log *slog.Logger

	store       *store.Store
	space       *diskspace.Gauge // free space of the data directory against the reserve
	history     *store.History
	historyLog  *logx.Limiter
	broker      *broker.Broker
	objects     *objects.Service // geo objects and emergencies
	pki         *pki.Authority
	fed         *federation.Federation  // nil when federation is off
	fedIdentity mgmt.FederationIdentity // this server's federation identity (federation.go)
	httpMetrics *httpMetrics

	// Who may see and do what (access.go).
	directory *access.Directory
	idCache   *identities
	guard     *access.Guard
	users     *users.Service
	bindings  chan store.Binding // uid bindings to keep
	accessLog *logx.Limiter

	mgmt        *mgmt.API     // nil when the management listener is disabled
	channel     *mgmt.Channel // the socket.io channel; nil when the management listener is disabled
	tap         *logx.Tap     // the last log lines, for the channel's logs event
	started     time.Time
	cotTLS      *stream.Listener         // nil when disabled
	marti       *marti.Handler           // the client API of 8080 and 8443, and its CoT websockets
	enroll      *marti.EnrollmentHandler // nil when the enrollment listener is disabled
	httpsGuard  *marti.HTTPSGuard        // nil when 8443 is disabled
	stopWatch   context.CancelFunc
	stopRevokes func()

	names      []string
	listeners  map[string]listener
	allowedCLI config.AllowList // AllowedCLIIPs, parsed

	background sync.WaitGroup // the goroutines watchCtx ends (keepBindings, watchAccess)

	opened    atomic.Bool // Open succeeded (Healthy)
	closeOnce sync.Once
	closeErr  error
}

// New prepares an appliance; nothing is opened or bound until Open.
func New(cfg config.Config, log *slog.Logger) *Appliance {
	if log == nil {
		log = slog.Default()
	}
	// Every log line also goes to the tap the channel's logs event reads.
	tap := logx.NewTap(log.Handler(), logTapLines)
	return &Appliance{cfg: cfg, log: slog.New(tap), tap: tap, listeners: map[string]listener{}, started: time.Now()}
}

// logTapLines is how many recent log lines the channel can show.
const logTapLines = 500

// Open checks the configuration, opens the data (creating it on first run),
// binds every enabled listener and starts serving; when it returns nil,
// every listener is bound and serving (Addrs tells where). On error
// everything already opened is closed again, through the same path as
// Close, and the appliance cannot be opened again.
func (a *Appliance) Open(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			a.Close(cctx)
		}
	}()
	cfg := &a.cfg
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := admin.PrepareData(cfg, a.log); err != nil {
		return err
	}
	// The disk reserve (operations.md "Free disk space"): uploads, the CoT history
	// and, below the floor, every write that grows the database ask it.
	a.space = diskspace.New(cfg.DataDir, diskspace.Options{Reserve: cfg.DiskReserve, Floor: cfg.DiskFloor, Logger: a.log})
	a.store, err = store.Open(ctx, cfg.DBPath(), store.Options{Logger: a.log, MaxBlobSize: cfg.MaxUploadBytes,
		PasswordChecksPerSecond: float64(cfg.PasswordChecksPerSecond), Budgets: admin.Budgets(cfg), Space: a.space})
	if err != nil {
		return err
	}
	if err := a.ensureAdminToken(ctx); err != nil {
		return err
	}
	a.history = a.store.StartHistory(store.HistoryOptions{
		Retention: cfg.HistoryRetention, MaxBytes: int64(cfg.HistoryMaxBytes),
		ClientRate: float64(cfg.HistoryClientRate), ClientBytes: int64(cfg.HistoryClientBytes),
		TotalRate: float64(cfg.HistoryTotalRate), TotalBytes: int64(cfg.HistoryTotalBytes),
		Paused: a.space.BelowReserve,
	})
	a.store.Missions().MissionSubscribers("") // loads the subscriber lists now, not on the relay's first mission event
	a.historyLog = logx.NewLimiter(a.log.With("component", "cot-history"), 10, 10*time.Second)
	a.pki, err = admin.OpenAuthority(cfg, a.log)
	if err != nil {
		return err
	}
	bindings, err := a.openAccess(ctx)
	if err != nil {
		return err
	}
	a.broker = broker.New(broker.Options{
		Bindings:  bindings,
		Bound:     a.bound,
		SoftBytes: cfg.QueueSoftBytes,
		HardBytes: cfg.QueueHardBytes,
		Observer:  a.observe,
		Logger:    a.log,
		// <dest mission> resolves from memory (the store keeps each
		// mission's subscribers; no SQL per event).
		MissionSubscribers: a.store.Missions().MissionSubscribers,
		ClientsChanged: func() {
			if a.channel != nil {
				a.channel.NotifyClientsChanged()
			}
			if a.mgmt != nil {
				a.mgmt.NotifyClientsChanged() // certificate packages waiting for their devices
			}
		},
	})
	a.objects = objects.New(objects.Options{Broker: a.broker, Objects: a.store.Objects(), Events: a.store.Events(), Geocoder: geocoder(cfg.GeocoderURL),
		RepeatInterval: cfg.RepeatInterval, EmergencyRepeatInterval: cfg.EmergencyRepeatInterval, Logger: a.log})
	// Repeated and persistent objects and active emergencies reach clients
	// from their first connection on (protocol.md §5, replay).
	if _, err := a.objects.Restore(ctx); err != nil {
		return err
	}
	if a.allowedCLI, err = config.ParseAllowList(cfg.AllowedCLIIPs); err != nil {
		return fmt.Errorf("config AllowedCLIIPs: %w", err)
	}
	a.buildListeners()
	if err := a.buildMesh(ctx); err != nil {
		return err
	}
	if err := a.buildFederation(); err != nil {
		return err
	}
	for _, name := range a.names {
		if err := a.listeners[name].Listen(); err != nil {
			return err
		}
	}
	a.publishBoundPorts()
	for _, name := range a.names {
		l := a.listeners[name]
		l.Serve()
		if addr := l.Addr(); addr != nil { // federation's listener may open later (federation.go)
			a.log.Info("listening", "listener", name, "addr", addr.String())
		}
	}
	// api.md §5.11: the revocation list is re-read when it changes (the CLI
	// revokes from another process) and revoked clients are cut off.
	a.stopRevokes = a.pki.OnRevocation(a.disconnectRevoked)
	watchCtx, stop := context.WithCancel(context.Background())
	a.stopWatch = stop
	go a.pki.WatchCRL(watchCtx, crlPollInterval)
	if a.mgmt != nil {
		go a.mgmt.Maintain(watchCtx) // audit retention, expired login tokens
	}
	go a.objects.Run(watchCtx) // stale objects, emergencies clients raise
	a.background.Add(2)
	go func() { defer a.background.Done(); a.keepBindings(watchCtx) }()
	go func() { defer a.background.Done(); a.watchAccess(watchCtx) }()
	if a.fed != nil {
		a.background.Add(1)
		go func() { defer a.background.Done(); a.watchFederates(watchCtx) }() // federation_managed.go
	}
	a.opened.Store(true)
	a.log.Info("Outpost is ready", "version", Version(), "data_dir", cfg.DataDir, "public_host", cfg.PublicHost)
	a.logWelcome(ctx) // welcome.go
	return nil
}

// observe persists every routed event asynchronously (architecture.md "The
// relay": after routing, never blocking it), charged to the budget of the
// connection it came from.
func (a *Appliance) observe(env *broker.Envelope, from *broker.Session) {
	source, client := "server", uint64(0)
	if from != nil {
		source, client = from.Info().Listener, from.ID()
	}
	if !a.history.Add(env.Event, env.XML(), time.Now(), source, client, env.Groups()) {
		a.historyLog.Debug("event not stored in history: budget spent, backlog full or the disk reserve reached", "uid", logx.Clip(env.Event.UID), "type", logx.Clip(env.Event.Type))
	}
	if from != nil {
		a.objects.Observe(env.Event, env.Directed, env.Groups()) // emergencies clients raise and cancel
		if len(env.Missions) > 0 && a.marti != nil {
			a.marti.RecordMissionEvent(env.Missions, env.Event) // queued, never blocks
		}
	}
}

// geocoder is the configured address lookup (nil: none, coordinates only).
func geocoder(url string) *geo.Geocoder {
	if url == "" {
		return nil
	}
	return &geo.Geocoder{URL: url}
}

func (a *Appliance) addr(port int) string {
	return net.JoinHostPort(a.cfg.Bind, strconv.Itoa(port))
}

// add registers a listener; a negative port (l nil) logs it as disabled.
func (a *Appliance) add(name string, port int, l listener) {
	if port < 0 {
		a.log.Info("listener disabled", "listener", name)
		return
	}
	a.names = append(a.names, name)
	a.listeners[name] = l
}

// buildListeners creates every enabled listener (not yet bound). Their
// connections count against limits shared by kind (docs: RELIABILITY.md):
// the CoT listeners share a per-source cap and each has its own total; the
// HTTP listeners share a per-source and a total cap; the TLS listeners share
// the caps on handshakes in flight.
func (a *Appliance) buildListeners() {
	cfg := &a.cfg
	nodeID := NodeID(cfg.SecretKey)
	cotPerSource := netx.NewLimits(cfg.MaxConnectionsPerSource, 0)
	httpConns := netx.NewLimits(cfg.HTTPMaxConnectionsPerSource, cfg.HTTPMaxConnections)
	handshakes := netx.NewLimits(cfg.MaxPendingHandshakesPerSource, cfg.MaxPendingHandshakes)
	tlsNet := func(port int, c *tls.Config, conns ...*netx.Limits) netx.Config {
		return netx.Config{Addr: a.addr(port), Conns: conns, TLS: c, HandshakeTimeout: cfg.SSLHandshakeTimeout,
			Handshakes: handshakes, Classify: classifyHandshake}
	}
	maxBody := cfg.MaxUploadBytes + multipartSlack
	api := httpLimits{idle: 2 * time.Minute, bodyTimeout: cfg.HTTPBodyTimeout, maxBody: maxBody}

	if cfg.RESTPort >= 0 {
		a.channel = mgmt.NewChannel(mgmt.ChannelOptions{
			WebsocketKey: cfg.WebsocketKey, Clients: a.broker.Clients, Services: a.services,
			PublicHost: cfg.PublicHost, Version: Version(), StartTime: a.started, DataDir: cfg.DataDir,
			AuthTimeout: cfg.ChannelAuthTimeout, MaxUnauthenticatedPerSource: cfg.ChannelUnauthenticatedPerSource,
			Logs: a.tap, Logger: a.log,
			Addresses: ReachAddresses(cfg), AdminTokenFile: filepath.Join(cfg.DataDir, AdminTokenFile),
		})
		a.mgmt = mgmt.New(mgmt.Options{
			Broker: a.broker, Accounts: a.store.Accounts(), Files: a.store.Files(), Missions: a.store.Missions(), Events: a.store.Events(),
			Users: a.users, Directory: a.directory, Guard: a.guard, Objects: a.objects, AllowedClientIP: a.allowedCLI.Contains,
			MaxUploadBytes: cfg.MaxUploadBytes, Space: a.space, LoginTokenLifetime: cfg.LoginTokenLifetime, AuditRetention: cfg.AuditRetention,
			Metrics: a.newMetrics(), Channel: a.channel, Logger: a.log,
			Console: web.FS(), BasemapPath: cfg.BasemapPath, BasemapDir: filepath.Join(cfg.DataDir, "basemaps"),
			PublicHost: cfg.PublicHost,
			CertOffer:  a.certOffer(nodeID),
			Federation: a.federationView,
			Federates:  a.store.Federates(), FederatesChanged: a.federatesChanged, FederateAnnounced: a.federateAnnounced,
			FederationStatus: a.federationStatus,
		})
		a.add(ListenerREST, cfg.RESTPort, a.newHTTPListener(ListenerREST,
			netx.Config{Addr: a.addr(cfg.RESTPort), Conns: []*netx.Limits{httpConns}}, a.mgmt, api))
	} else {
		a.add(ListenerREST, -1, nil)
	}
	// The client API: the same handler on 8080 and 8443 (api.md §1); its CoT
	// websockets are sessions like those of the CoT listeners, with their
	// limits.
	a.marti = marti.NewHandler(marti.Options{
		Version: Version(), Hostname: cfg.PublicHost, NodeID: nodeID, Broker: a.broker,
		Missions: a.store.Missions(), Files: a.store.Files(), Checklists: a.store.Checklists(), Events: a.store.Events(),
		Videos: a.store.Videos(), Accounts: a.store.Accounts(),
		Directory: a.directory, Users: a.users, Guard: a.guard,
		MaxUploadBytes: cfg.MaxUploadBytes, Space: a.space, Identify: a.pki.Identity,
		MissionLogsPerMinute: cfg.MissionLogEntriesPerMinute, MissionLogBytesPerMinute: cfg.MissionLogBytesPerMinute,
		MissionChanged: a.fedMissionChanged,
		Websocket: marti.WebsocketOptions{
			MaxSockets: cfg.MaxConnections, MaxMessage: cfg.MaxMessageBytes, IdleTimeout: cfg.SSLSockTimeout,
			WriteTimeout: cfg.WriteTimeout, MaxEventsPerSecond: cfg.ClientEventsPerSecond, MaxBytesPerSecond: cfg.ClientBytesPerSecond,
		},
		Repeater: marti.RepeaterOptions{Objects: a.store.Objects(), Period: cfg.EmergencyRepeatInterval,
			Cancel: func(ctx context.Context, uid string, p access.Principal) error {
				return a.objects.CancelEmergency(ctx, uid, objects.Caller{Name: p.Owner(), Admin: p.Admin(), Sees: p.Reads()})
			}},
		Logger: a.log,
	})
	// httpAccess (docs/access.md "The listeners"): 8080 asks for no
	// credential; it may be kept to this machine or not served.
	httpHost, httpPort := cfg.HTTPListen()
	a.add(ListenerHTTP, httpPort, a.newHTTPListener(ListenerHTTP,
		netx.Config{Addr: net.JoinHostPort(httpHost, strconv.Itoa(httpPort)), Conns: []*netx.Limits{httpConns}}, a.marti, api))
	a.add(ListenerCoTTCP, cfg.CoTPort, stream.New(stream.Config{
		Name:        ListenerCoTTCP,
		Net:         netx.Config{Addr: a.addr(cfg.CoTPort), Conns: []*netx.Limits{cotPerSource, netx.NewLimits(0, cfg.MaxConnections)}},
		IdleTimeout: cfg.CoTIdleTimeout, WriteTimeout: cfg.WriteTimeout, MaxMessage: cfg.MaxMessageBytes,
		MaxEventsPerSecond: cfg.ClientEventsPerSecond, MaxBytesPerSecond: cfg.ClientBytesPerSecond,
		ServerUID: "outpost-" + nodeID, Broker: a.broker, Logger: a.log,
	}))

	// Mutual TLS (api.md §5.8): client certificates signed by our CA, revoked
	// ones refused, handshakes bounded by WRAP_SSL_TIMEOUT in their own
	// goroutines, silent connections closed after SSL_SOCK_TIMEOUT.
	mtls := a.pki.ServerTLSConfig()
	if cfg.SSLCoTPort >= 0 {
		a.cotTLS = stream.New(stream.Config{
			Name:     ListenerCoTTLS,
			Net:      tlsNet(cfg.SSLCoTPort, mtls, cotPerSource, netx.NewLimits(0, cfg.MaxConnections)),
			Identify: a.identifyCoT, IdleTimeout: cfg.SSLSockTimeout, WriteTimeout: cfg.WriteTimeout,
			MaxMessage: cfg.MaxMessageBytes, MaxEventsPerSecond: cfg.ClientEventsPerSecond, MaxBytesPerSecond: cfg.ClientBytesPerSecond,
			ServerUID: "outpost-" + nodeID, Broker: a.broker, Logger: a.log,
		})
		a.add(ListenerCoTTLS, cfg.SSLCoTPort, a.cotTLS)
	} else {
		a.add(ListenerCoTTLS, -1, nil)
	}
	if cfg.HTTPSPort >= 0 {
		a.httpsGuard = marti.NewHTTPSGuard(a.pki.IsRevoked, a.log.With("listener", ListenerHTTPS))
		l := a.newHTTPListener(ListenerHTTPS, tlsNet(cfg.HTTPSPort, mtls, httpConns), a.httpsGuard.Middleware(a.marti),
			httpLimits{idle: cfg.SSLSockTimeout, bodyTimeout: cfg.HTTPBodyTimeout, maxBody: maxBody})
		l.srv.ConnState = a.httpsGuard.ConnState
		a.add(ListenerHTTPS, cfg.HTTPSPort, l)
	} else {
		a.add(ListenerHTTPS, -1, nil)
	}

	// Certificate enrollment (protocol.md §8): TLS with the server certificate, no
	// client certificate (the client has none yet), HTTP Basic auth against
	// system users. Its requests are small, so reading one may not take long.
	if cfg.EnrollPort >= 0 {
		a.enroll = marti.NewEnrollmentHandler(marti.EnrollOptions{
			Authority: a.pki, Accounts: a.store.Accounts(), Guard: a.guard, Logger: a.log,
			TokenKey: []byte(cfg.EnrollTokenKey),
		})
		l := a.newHTTPListener(ListenerEnroll, tlsNet(cfg.EnrollPort, a.pki.EnrollmentTLSConfig(), httpConns),
			a.enroll, httpLimits{idle: cfg.SSLSockTimeout, bodyTimeout: cfg.HTTPBodyTimeout, maxBody: 64 << 10})
		l.srv.ReadTimeout = 30 * time.Second
		a.add(ListenerEnroll, cfg.EnrollPort, l)
	} else {
		a.add(ListenerEnroll, -1, nil)
	}
}

// multipartSlack is what a request body may carry beyond maxUploadBytes
// (multipart headers and boundaries); the handlers enforce the upload limit
// itself, this bounds the body as a whole.
const multipartSlack = 1 << 20

// classifyHandshake names revocations among failed TLS handshakes (netx
// classifies the rest).
func classifyHandshake(err error) string {
	if errors.Is(err, pki.ErrRevoked) {
		return "revoked"
	}
	return ""
}

// crlPollInterval is how often the revocation list file is checked for
// changes made by another process (outpost cert revoke).
const crlPollInterval = 2 * time.Second

// disconnectRevoked cuts off every connected client whose certificate is
// revoked (api.md §5.11): CoT sessions on 8089, HTTPS connections and CoT
// websockets on 8443.
func (a *Appliance) disconnectRevoked() {
	n := 0
	if a.cotTLS != nil {
		n += a.cotTLS.CloseWhere(a.pki.IsRevoked, broker.ReasonRevoked)
	}
	if a.httpsGuard != nil {
		n += a.httpsGuard.CloseRevoked()
	}
	if a.marti != nil {
		n += a.marti.CloseWhere(a.pki.IsRevoked, broker.ReasonRevoked)
	}
	if a.fed != nil {
		n += a.fed.EndRevoked() // a revoked federate is refused when it connects again (federation.go)
	}
	a.log.Info("revocation list grew; revoked clients disconnected", "connections", n)
}

// NodeID derives this server's stable node identifier from its secret key
// (one-way, so the identifier reveals nothing of the key).
func NodeID(secretKey string) string {
	sum := sha256.Sum256([]byte("outpost node id\x00" + secretKey))
	return hex.EncodeToString(sum[:16])
}

// Addrs reports the bound address of every enabled listener.
func (a *Appliance) Addrs() map[string]net.Addr {
	out := map[string]net.Addr{}
	for name, l := range a.listeners {
		if addr := l.Addr(); addr != nil {
			out[name] = addr
		}
	}
	return out
}

// Routes are the routes a listener serves, each with its rule (access.md
// "Route matrix"): ListenerREST, ListenerHTTP or ListenerHTTPS (the same
// client API), ListenerEnroll. Nil for another name or a listener not
// served. After Open.
func (a *Appliance) Routes(listener string) *access.Routes {
	switch listener {
	case ListenerREST:
		if a.mgmt != nil {
			return a.mgmt.Routes()
		}
	case ListenerHTTP, ListenerHTTPS:
		if a.marti != nil && a.listeners[listener] != nil {
			return a.marti.Routes()
		}
	case ListenerEnroll:
		if a.enroll != nil {
			return a.enroll.Routes()
		}
	}
	return nil
}

// Config is the configuration the appliance runs with (after Open: with the
// generated secrets filled in).
func (a *Appliance) Config() config.Config { return a.cfg }

// Broker exposes the broker (tests and in-process publishers).
func (a *Appliance) Broker() *broker.Broker { return a.broker }

// Authority exposes the certificate authority (tests and subcommands).
func (a *Appliance) Authority() *pki.Authority { return a.pki }

// Store exposes the store (tests and subcommands).
func (a *Appliance) Store() *store.Store { return a.store }

// Close shuts down in the documented order (architecture.md "Shutdown
// order"): the broker drains (no departures), the listeners stop and their
// clients get the first half of ctx's time to receive what is queued, then
// the broker stops, the CoT history is flushed and the store closed in the
// rest. A client that does not drain in time is closed, not an error. It
// returns every error met (joined), carrying on after each. Idempotent: a
// second call returns the first call's result.
func (a *Appliance) Close(ctx context.Context) error {
	a.closeOnce.Do(func() { a.closeErr = a.shutdown(ctx) })
	return a.closeErr
}

func (a *Appliance) shutdown(ctx context.Context) error {
	start := time.Now()
	a.log.Info("shutting down")
	if a.stopWatch != nil {
		a.stopWatch()
		a.stopRevokes()
	}
	// Two budgets (RELIABILITY.md "Shutdown"): clients get the first half of
	// the time to receive what is queued for them; the history flush and the
	// store close get the rest, so one stalled client can never cost the
	// history or turn the exit into a failure.
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = start.Add(a.cfg.ShutdownTimeout)
	}
	drainCtx, cancelDrain := context.WithDeadline(ctx, start.Add(deadline.Sub(start)/2))
	defer cancelDrain()
	if a.broker != nil {
		a.broker.Drain() // no departures from here on: everyone is leaving
	}
	if a.channel != nil {
		// http.Server.Shutdown does not close websockets: the channel does.
		if err := a.channel.Shutdown(drainCtx); err != nil {
			a.log.Info("socket.io sessions still open at the end of the drain budget were closed", "err", err)
		}
	}
	if a.marti != nil {
		// Nor CoT websockets: the client API ends them, letting each
		// receive what is queued until the drain budget ends.
		a.marti.Shutdown(drainCtx)
	}
	var errs []error
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, name := range a.names {
		l := a.listeners[name]
		if l.Addr() == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Shutdown(drainCtx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	cancelDrain()
	if a.broker != nil {
		a.broker.Close()
	}
	if a.mgmt != nil {
		a.mgmt.Close() // the basemap file
	}
	a.background.Wait() // the last uid bindings are written before the store closes
	if a.history != nil {
		if err := a.history.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("flush CoT history: %w", err))
		}
	}
	if a.store != nil {
		if err := a.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close store: %w", err))
		}
	}
	err := errors.Join(errs...)
	a.log.Info("shut down", "took", time.Since(start).Round(time.Millisecond), "err", err)
	return err
}
