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
	"os"
	"strconv"
	"sync"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/config"
	"outpost/appliance/cot"
	"outpost/appliance/marti"
	"outpost/appliance/mgmt"
	"outpost/appliance/pki"
	"outpost/appliance/store"
	"outpost/appliance/stream"
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

	store   *store.Store
	history *store.History
	broker  *broker.Broker
	pki     *pki.Authority

	mgmt        *mgmt.API        // nil when the management listener is disabled
	cotTLS      *stream.Listener // nil when disabled
	httpsConns  *tlsConnTracker  // nil when 8443 is disabled
	stopWatch   context.CancelFunc
	stopRevokes func()

	names      []string
	listeners  map[string]listener
	allowedCLI config.AllowList // AllowedCLIIPs, parsed

	ready     chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// New prepares an appliance; nothing is opened or bound until Open.
func New(cfg config.Config, log *slog.Logger) *Appliance {
	if log == nil {
		log = slog.Default()
	}
	return &Appliance{cfg: cfg, log: log, listeners: map[string]listener{}, ready: make(chan struct{})}
}

// Open opens the data, binds every enabled listener and starts serving. On
// error everything already opened is closed again.
func (a *Appliance) Open(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			a.abort()
		}
	}()
	cfg := &a.cfg
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	generated, secretsPath, err := cfg.EnsureSecrets()
	if err != nil {
		return err
	}
	if len(generated) > 0 {
		a.log.Info("generated secrets on first run", "keys", generated, "file", secretsPath)
	}
	a.store, err = store.Open(ctx, cfg.DBPath(), store.Options{Logger: a.log.With("component", "store"), MaxBlobSize: cfg.MaxUploadBytes})
	if err != nil {
		return err
	}
	if err := a.ensureAdminToken(ctx); err != nil {
		return err
	}
	a.history = a.store.StartHistory(store.HistoryOptions{Retention: cfg.HistoryRetention})
	a.pki, err = openAuthority(cfg, a.log)
	if err != nil {
		return err
	}
	a.broker = broker.New(broker.Options{
		SoftBytes: cfg.QueueSoftBytes,
		HardBytes: cfg.QueueHardBytes,
		Observer:  a.observe,
		Logger:    a.log.With("component", "broker"),
	})
	if a.allowedCLI, err = config.ParseAllowList(cfg.AllowedCLIIPs); err != nil {
		return fmt.Errorf("config AllowedCLIIPs: %w", err)
	}
	a.buildListeners()
	for _, name := range a.names {
		if err := a.listeners[name].Listen(); err != nil {
			return err
		}
	}
	a.publishBoundPorts()
	for _, name := range a.names {
		l := a.listeners[name]
		l.Serve()
		a.log.Info("listening", "listener", name, "addr", l.Addr().String())
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
	close(a.ready)
	a.log.Info("Outpost is ready", "version", Version(), "data_dir", cfg.DataDir, "public_host", cfg.PublicHost)
	return nil
}

// observe persists every routed event asynchronously (architecture.md "The
// relay": after routing, never blocking it).
func (a *Appliance) observe(ev *cot.Event, from *broker.Session) {
	source := "server"
	if from != nil {
		source = from.Info().Listener
	}
	if !a.history.Add(ev, time.Now(), source) {
		a.log.Debug("history buffer full; event not stored", "uid", ev.UID, "type", ev.Type)
	}
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

// buildListeners creates every enabled listener (not yet bound).
func (a *Appliance) buildListeners() {
	cfg := &a.cfg
	nodeID := NodeID(cfg.SecretKey)
	if cfg.RESTPort >= 0 {
		a.mgmt = mgmt.New(mgmt.Options{
			Broker: a.broker, Store: a.store, Authority: a.pki, AllowedClientIP: a.allowedCLI.Contains,
			MaxUploadBytes: cfg.MaxUploadBytes, LoginTokenLifetime: cfg.LoginTokenLifetime, AuditRetention: cfg.AuditRetention,
			Logger: a.log.With("component", "mgmt"),
		})
	}
	a.add(ListenerREST, cfg.RESTPort, newHTTPListener(ListenerREST, a.addr(cfg.RESTPort), a.mgmt, 2*time.Minute, nil, a.log))
	martiHandler := marti.NewHandler(marti.Options{
		Version: Version(), Hostname: cfg.PublicHost, NodeID: nodeID, Broker: a.broker,
		Logger: a.log.With("component", "marti"),
	})
	a.add(ListenerHTTP, cfg.HTTPPort, newHTTPListener(ListenerHTTP, a.addr(cfg.HTTPPort), martiHandler, 2*time.Minute, nil, a.log))
	a.add(ListenerCoTTCP, cfg.CoTPort, stream.New(stream.Config{
		Name: ListenerCoTTCP, Addr: a.addr(cfg.CoTPort),
		IdleTimeout: cfg.CoTIdleTimeout, WriteTimeout: cfg.WriteTimeout,
		MaxMessage: cfg.MaxMessageBytes, MaxConns: cfg.MaxConnections,
		ServerUID: "outpost-" + nodeID, Broker: a.broker, Logger: a.log,
	}))

	// Mutual TLS (api.md §5.8): client certificates signed by our CA, revoked
	// ones refused, handshakes bounded by WRAP_SSL_TIMEOUT in their own
	// goroutines, silent connections closed after SSL_SOCK_TIMEOUT.
	mtls := a.pki.ServerTLSConfig()
	wrap := func(name string, c *tls.Config) func(net.Listener) net.Listener {
		return func(ln net.Listener) net.Listener {
			return pki.NewHandshakeListener(ln, c, cfg.SSLHandshakeTimeout, a.log.With("listener", name))
		}
	}
	if cfg.SSLCoTPort >= 0 {
		a.cotTLS = stream.New(stream.Config{
			Name: ListenerCoTTLS, Addr: a.addr(cfg.SSLCoTPort),
			TLS: mtls, Wrap: wrap(ListenerCoTTLS, mtls), Identify: a.pki.Identity,
			IdleTimeout: cfg.SSLSockTimeout, WriteTimeout: cfg.WriteTimeout,
			MaxMessage: cfg.MaxMessageBytes, MaxConns: cfg.MaxConnections,
			ServerUID: "outpost-" + nodeID, Broker: a.broker, Logger: a.log,
		})
		a.add(ListenerCoTTLS, cfg.SSLCoTPort, a.cotTLS)
	} else {
		a.add(ListenerCoTTLS, -1, nil)
	}
	if cfg.HTTPSPort >= 0 {
		a.httpsConns = newTLSConnTracker(a.pki.IsRevoked, a.log.With("listener", ListenerHTTPS))
		l := newHTTPListener(ListenerHTTPS, a.addr(cfg.HTTPSPort), a.httpsConns.middleware(martiHandler),
			cfg.SSLSockTimeout, wrap(ListenerHTTPS, mtls), a.log)
		l.srv.ConnState = a.httpsConns.connState
		a.add(ListenerHTTPS, cfg.HTTPSPort, l)
	} else {
		a.add(ListenerHTTPS, -1, nil)
	}

	// Certificate enrollment (protocol.md §8): TLS with the server certificate, no
	// client certificate (the client has none yet), HTTP Basic auth against
	// system users. Its requests are small, so reading one may not take long.
	if cfg.EnrollPort >= 0 {
		et := a.pki.EnrollmentTLSConfig()
		l := newHTTPListener(ListenerEnroll, a.addr(cfg.EnrollPort), marti.NewEnrollmentHandler(marti.EnrollOptions{
			Authority: a.pki, Store: a.store, Logger: a.log.With("component", "enroll"),
		}), cfg.SSLSockTimeout, wrap(ListenerEnroll, et), a.log)
		l.srv.ReadTimeout = 30 * time.Second
		a.add(ListenerEnroll, cfg.EnrollPort, l)
	} else {
		a.add(ListenerEnroll, -1, nil)
	}
}

// crlPollInterval is how often the revocation list file is checked for
// changes made by another process (outpost cert revoke).
const crlPollInterval = 2 * time.Second

// disconnectRevoked cuts off every connected client whose certificate is
// revoked (api.md §5.11): CoT sessions on 8089 and HTTPS connections on 8443.
func (a *Appliance) disconnectRevoked() {
	n := 0
	if a.cotTLS != nil {
		n += a.cotTLS.CloseWhere(a.pki.IsRevoked, stream.ReasonRevoked)
	}
	if a.httpsConns != nil {
		n += a.httpsConns.closeRevoked()
	}
	a.log.Info("revocation list grew; revoked clients disconnected", "connections", n)
}

// NodeID derives this server's stable node identifier from its secret key
// (one-way, so the identifier reveals nothing of the key).
func NodeID(secretKey string) string {
	sum := sha256.Sum256([]byte("outpost node id\x00" + secretKey))
	return hex.EncodeToString(sum[:16])
}

// Ready is closed when every listener is bound and serving.
func (a *Appliance) Ready() <-chan struct{} { return a.ready }

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

// Config is the configuration the appliance runs with (after Open: with the
// generated secrets filled in).
func (a *Appliance) Config() config.Config { return a.cfg }

// Broker exposes the broker (tests and in-process publishers).
func (a *Appliance) Broker() *broker.Broker { return a.broker }

// Authority exposes the certificate authority (tests and subcommands).
func (a *Appliance) Authority() *pki.Authority { return a.pki }

// Store exposes the store (tests and subcommands).
func (a *Appliance) Store() *store.Store { return a.store }

// Close shuts down in order: listeners stop accepting and reading and drain
// their client queues (bounded by ctx), then the broker stops, the CoT
// history is flushed and the store closed. It keeps the first error and
// carries on. Idempotent.
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
			if err := l.Shutdown(ctx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if a.broker != nil {
		a.broker.Close()
	}
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

// abort releases what a failed Open had already acquired.
func (a *Appliance) abort() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, name := range a.names {
		if l := a.listeners[name]; l.Addr() != nil {
			l.Shutdown(ctx)
		}
	}
	if a.broker != nil {
		a.broker.Close()
	}
	if a.history != nil {
		a.history.Close(ctx)
	}
	if a.store != nil {
		a.store.Close()
	}
	a.closeOnce.Do(func() {})
}
