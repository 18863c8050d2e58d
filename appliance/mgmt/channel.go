package mgmt

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/broker"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/mgmt/socketio"
	"outpost/appliance/sysinfo"
)

// Defaults of ChannelOptions.
const (
	DefaultHealthInterval  = 5 * time.Second
	DefaultChannelSockets  = 32
	DefaultMaxAuthFailures = 5
	DefaultAuthWindow      = time.Minute
	DefaultProbeTimeout    = time.Second
	// channelMessageBytes bounds one message from a channel client: its
	// requests are a few dozen bytes.
	channelMessageBytes = 16 << 10
	// usersPushGap spaces pushes of the client list when clients churn.
	usersPushGap = 250 * time.Millisecond
	// logsPushMax bounds the records of one pushed logs event, and
	// logsPushDelay how long a record waits for others to join its push.
	logsPushMax   = 200
	logsPushDelay = 100 * time.Millisecond
)

// Service is one listener of the appliance as the channel reports it.
type Service struct {
	Name string // as shown to the client, e.g. "TCP_CoT_service"
	Port int    // the configured port
	Addr string // the bound address; "" when the listener is off
	// FTSName is FreeTAKServer's name of the service (channel_fts.go),
	// e.g. "TCP_DataPackage_service" for the client API's HTTP port; ""
	// when it is Name or FreeTAKServer has no such service.
	FTSName string
}

// ChannelOptions configure the socket.io channel (api.md §6.1).
type ChannelOptions struct {
	// WebsocketKey is the configuration value websocketkey (api.md §5.9).
	// Empty refuses every client.
	WebsocketKey string
	// Clients lists the connected TAK clients (users event).
	Clients func() []broker.ClientInfo
	// Services lists the listeners (serviceInfo, systemStatus).
	Services func() []Service
	// PublicHost is the address clients use (serviceInfo's ip).
	PublicHost string
	// Addresses are this machine's other addresses clients may use, and
	// AdminTokenFile the first run's token file: GET /api/server shows
	// them on the console's front page (operations.md "First start").
	Addresses      []string
	AdminTokenFile string
	Version        string
	// StartTime is when the appliance started (connectUpdate); zero means
	// when the channel was made.
	StartTime time.Time
	// DataDir is where the disk use of serverHealth is measured.
	DataDir string
	// Logs is the log tap the logs event reads and follows; nil leaves
	// the logs empty.
	Logs *logx.Tap
	// HealthInterval is how often serverHealth is pushed to authenticated
	// clients; negative disables the push.
	HealthInterval time.Duration
	// MaxSockets bounds the channel's connections.
	MaxSockets int
	// AuthTimeout is how long a socket has, from its handshake, to
	// authenticate with the key; one that has not is closed. Zero: 10 s
	// (socketio.md "Sockets that never authenticate").
	AuthTimeout time.Duration
	// MaxUnauthenticatedPerSource bounds the sockets of one address that
	// have not authenticated yet; a handshake beyond it is answered 429.
	// Authenticated sockets do not count. Zero: MaxSockets/8 (4 of 32).
	MaxUnauthenticatedPerSource int
	// MaxAuthFailures wrong keys per address within AuthWindow; beyond it
	// every attempt from that address fails without being checked.
	MaxAuthFailures int
	AuthWindow      time.Duration
	// ProbeTimeout bounds each connection systemStatus makes to a
	// listener.
	ProbeTimeout time.Duration
	// Protocol tunes the Socket.IO server (heartbeat, queue, timeouts);
	// its MaxSockets, MaxUnauthenticatedPerAddr, AuthTimeout, Logger and
	// callbacks are the channel's own.
	Protocol socketio.Options
	Logger   *slog.Logger
}

// Channel is the socket.io channel of the management port: an
// http.Handler for /socket.io/ that must be shut down explicitly.
type Channel struct {
	opts    ChannelOptions
	log     *slog.Logger
	limited *logx.Limiter
	srv     *socketio.Server
	keyHash [32]byte
	auth    *access.Guard // failed authentications per address
	cpu     sysinfo.CPU
	health  cached[healthInfo]
	status  cached[map[string]string]

	clientsChanged chan struct{}
	logSub         *logx.Subscription
	// User operations (channel_users.go) run off the sockets' readers;
	// Shutdown cancels opsCtx and waits for ops.
	ops       sync.WaitGroup
	opsCtx    context.Context
	opsCancel context.CancelFunc
	opsMu     sync.Mutex // orders ops.Add before Shutdown's Wait
	// emergencies lists the active emergencies (events); set by the API.
	emergencies func() []string
	stop        chan struct{}
	stopOnce    sync.Once
	pusherDone  chan struct{}
}

// NewChannel returns the channel and starts its pushes.
func NewChannel(opts ChannelOptions) *Channel {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.HealthInterval == 0 {
		opts.HealthInterval = DefaultHealthInterval
	}
	if opts.MaxSockets <= 0 {
		opts.MaxSockets = DefaultChannelSockets
	}
	if opts.MaxAuthFailures <= 0 {
		opts.MaxAuthFailures = DefaultMaxAuthFailures
	}
	if opts.AuthWindow <= 0 {
		opts.AuthWindow = DefaultAuthWindow
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = DefaultProbeTimeout
	}
	if opts.StartTime.IsZero() {
		opts.StartTime = time.Now()
	}
	c := &Channel{
		opts:           opts,
		log:            opts.Logger,
		limited:        logx.NewLimiter(opts.Logger, 10, time.Minute),
		keyHash:        sha256.Sum256([]byte(opts.WebsocketKey)),
		auth:           access.NewGuard(access.GuardOptions{SourceFailures: opts.MaxAuthFailures, FailureWindow: opts.AuthWindow}),
		clientsChanged: make(chan struct{}, 1),
		stop:           make(chan struct{}),
		pusherDone:     make(chan struct{}),
	}
	c.opsCtx, c.opsCancel = context.WithCancel(context.Background())
	p := opts.Protocol
	p.MaxSockets = opts.MaxSockets
	p.MaxUnauthenticatedPerAddr = opts.MaxUnauthenticatedPerSource
	p.AuthTimeout = opts.AuthTimeout
	if p.MaxMessageBytes <= 0 {
		p.MaxMessageBytes = channelMessageBytes
	}
	p.Logger = opts.Logger
	p.OnConnect = c.onConnect
	p.OnDisconnect = nil
	c.srv = socketio.NewServer(p)
	c.srv.On("authenticate", c.authenticate)
	c.srv.On("users", c.authed(c.users))
	c.srv.On("logs", c.authed(c.logs))
	c.srv.On("serviceInfo", c.authed(c.serviceInfo))
	c.srv.On("serverHealth", c.authed(c.serverHealth))
	c.srv.On("systemStatus", c.authed(c.systemStatus))
	c.srv.On("events", c.authed(c.events))
	c.srv.On("changeServiceInfo", c.authed(c.changeServiceInfo))
	if opts.Logs != nil {
		c.logSub = opts.Logs.Subscribe(2 * logsPushMax)
	}
	go c.push()
	return c
}

// ServeHTTP serves the Engine.IO endpoint (mount it at /socket.io/).
func (c *Channel) ServeHTTP(w http.ResponseWriter, r *http.Request) { c.srv.ServeHTTP(w, r) }

// NotifyClientsChanged tells the channel that a TAK client connected,
// identified itself or left; authenticated clients get a fresh users
// event soon after. It never blocks: calls close together are merged.
func (c *Channel) NotifyClientsChanged() {
	select {
	case c.clientsChanged <- struct{}{}:
	default:
	}
}

// Shutdown stops the pushes and closes every channel connection (see
// socketio.Server.Shutdown).
func (c *Channel) Shutdown(ctx context.Context) error {
	c.stopOnce.Do(func() { close(c.stop) })
	<-c.pusherDone
	if c.logSub != nil {
		c.logSub.Close()
	}
	c.opsMu.Lock()
	c.opsCancel()
	c.opsMu.Unlock()
	opsDone := make(chan struct{})
	go func() { c.ops.Wait(); close(opsDone) }()
	err := c.srv.Shutdown(ctx)
	select {
	case <-opsDone:
	case <-ctx.Done():
		err = ctx.Err()
	}
	return err
}

func (c *Channel) onConnect(s *socketio.Socket) error {
	// FreeTAKServer greets every client, before authentication, with when
	// it started and its version.
	return s.Emit("connectUpdate", jsonString(map[string]string{
		"starttime": httpapi.FormatTime(c.opts.StartTime), "version": c.opts.Version,
	}))
}

// authenticate answers the authenticate event (api.md §6.1): the key is
// compared in constant time; a wrong key gets "False" and the socket is
// then disconnected. An address with too many recent failures is refused
// without its key being checked.
func (c *Channel) authenticate(s *socketio.Socket, args []json.RawMessage, _ func(...any)) {
	var req struct {
		Authenticate string `json:"Authenticate"`
	}
	parsed := decodeArg(args, &req)
	addr := s.Addr()
	_, blocked := c.auth.Blocked(addr)
	ok := false
	switch {
	case blocked:
		c.limited.Warn("socket.io authentication refused: too many failures from this address", "remote", s.RemoteAddr())
	case !parsed:
		c.limited.Warn("socket.io authentication refused: malformed authenticate event", "remote", s.RemoteAddr())
		c.auth.Fail(addr)
	default:
		h := sha256.Sum256([]byte(req.Authenticate))
		ok = c.opts.WebsocketKey != "" && subtle.ConstantTimeCompare(h[:], c.keyHash[:]) == 1
		if !ok {
			c.limited.Warn("socket.io authentication failed: wrong key", "remote", s.RemoteAddr())
			c.auth.Fail(addr)
		}
	}
	if !ok {
		s.Emit("authentication", jsonString(map[string]string{"successful": "False"}))
		s.Disconnect()
		return
	}
	// The answer is queued before the socket counts as authenticated, so
	// it comes before any push. From here on the socket is past the
	// authentication deadline and out of its address's unauthenticated
	// count.
	s.Emit("authentication", jsonString(map[string]string{"successful": "True"}))
	s.SetAuthenticated()
	c.log.Info("socket.io client authenticated", "remote", s.RemoteAddr())
}

// authed lets only authenticated sockets reach h: before authentication
// every other event gets no data (api.md §6.1).
func (c *Channel) authed(h func(*socketio.Socket, []json.RawMessage)) socketio.Handler {
	return func(s *socketio.Socket, args []json.RawMessage, _ func(...any)) {
		if !isAuthenticated(s) {
			c.limited.Debug("socket.io event before authentication ignored", "remote", s.RemoteAddr())
			return
		}
		h(s, args)
	}
}

func isAuthenticated(s *socketio.Socket) bool { return s.Authenticated() }

// emit sends an answer under its name and, when it has one, under the
// name FreeTAKServer's web UI listens for (channel_fts.go).
func (c *Channel) emit(s *socketio.Socket, event, payload string) {
	s.Emit(event, payload)
	if twin := ftsNames[event]; twin != "" {
		s.Emit(twin, payload)
	}
}

// broadcast pushes an event to every authenticated socket, and its
// FreeTAKServer twin where the web UI takes pushes (ftsPushed).
func (c *Channel) broadcast(event, payload string) {
	c.srv.Broadcast(isAuthenticated, event, payload)
	if ftsPushed[event] {
		c.srv.Broadcast(isAuthenticated, ftsNames[event], payload)
	}
}

// anyAuthenticated reports whether a push would reach anyone.
func (c *Channel) anyAuthenticated() bool {
	for _, s := range c.srv.Sockets() {
		if s.Connected() && isAuthenticated(s) {
			return true
		}
	}
	return false
}

// push sends the events pushed to authenticated clients: users when
// clients change, logs as records are written, serverHealth periodically.
func (c *Channel) push() {
	defer close(c.pusherDone)
	var health <-chan time.Time
	if c.opts.HealthInterval > 0 {
		t := time.NewTicker(c.opts.HealthInterval)
		defer t.Stop()
		health = t.C
	}
	var logs <-chan logx.Entry
	if c.logSub != nil {
		logs = c.logSub.C
	}
	usersTimer := time.NewTimer(time.Hour)
	usersTimer.Stop()
	defer usersTimer.Stop()
	var lastUsers time.Time
	usersPending := false
	logsTimer := time.NewTimer(time.Hour)
	logsTimer.Stop()
	defer logsTimer.Stop()
	var batch []logx.Entry
	for {
		select {
		case <-c.stop:
			return
		case <-c.clientsChanged:
			if usersPending {
				continue // merged into the push already scheduled
			}
			if wait := usersPushGap - time.Since(lastUsers); wait > 0 {
				usersPending = true
				usersTimer.Reset(wait)
				continue
			}
			lastUsers = time.Now()
			c.pushUsers()
		case <-usersTimer.C:
			usersPending = false
			lastUsers = time.Now()
			c.pushUsers()
		case e := <-logs:
			// Records are gathered for logsPushDelay (or up to
			// logsPushMax) so a busy log makes a few pushes a second,
			// not one per line.
			if batch = append(batch, e); len(batch) == 1 {
				logsTimer.Reset(logsPushDelay)
			}
			if len(batch) >= logsPushMax {
				logsTimer.Stop()
				batch = c.pushLogs(batch)
			}
		case <-logsTimer.C:
			batch = c.pushLogs(batch)
		case <-health:
			if c.anyAuthenticated() {
				c.broadcast("serverHealth", jsonString(c.healthNow()))
			}
		}
	}
}

// pushLogs pushes a batch of records and returns the emptied batch.
func (c *Channel) pushLogs(batch []logx.Entry) []logx.Entry {
	if len(batch) > 0 && c.anyAuthenticated() {
		c.broadcast("logs", c.logsPayload(batch))
	}
	return batch[:0]
}

func (c *Channel) pushUsers() {
	if c.anyAuthenticated() {
		c.broadcast("users", c.usersPayload())
	}
}
