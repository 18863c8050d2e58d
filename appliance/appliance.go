package appliance

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/broker"
	"outpost/appliance/config"
	"outpost/appliance/diskspace"
	"outpost/appliance/fedhost"
	"outpost/appliance/identity"
	"outpost/appliance/logx"
	"outpost/appliance/marti"
	"outpost/appliance/metrics"
	"outpost/appliance/mgmt"
	"outpost/appliance/objects"
	"outpost/appliance/pki"
	"outpost/appliance/store"
	"outpost/appliance/stream"
	"outpost/appliance/users"
)

// Appliance is one running Outpost.
type Appliance struct {
	cfg config.Config
	log *slog.Logger

	store      *store.Store
	space      *diskspace.Gauge // free space of the data directory against the reserve
	history    *store.History
	historyLog *logx.Limiter
	broker     *broker.Broker
	objects    *objects.Service // geo objects and emergencies
	pki        *pki.Authority
	fed        *fedhost.Host // nil when federation is off
	metrics    *metrics.Registry

	// Who may see and do what (access.md).
	directory *access.Directory
	guard     *access.Guard
	users     *users.Service
	ids       *identity.Keeper

	mgmt       *mgmt.API     // nil when the management listener is disabled
	channel    *mgmt.Channel // the socket.io channel; nil when the management listener is disabled
	tap        *logx.Tap     // the last log lines, for the channel's logs event
	started    time.Time
	cotTLS     *stream.Listener         // nil when disabled
	marti      *marti.Handler           // the client API of 8080 and 8443, and its CoT websockets
	enroll     *marti.EnrollmentHandler // nil when the enrollment listener is disabled
	httpsGuard *marti.HTTPSGuard        // nil when 8443 is disabled

	names      []string
	listeners  map[string]listener
	allowedCLI config.AllowList // AllowedCLIIPs, parsed

	life        lifecycle // the goroutines the appliance starts (lifecycle.go)
	stopRevokes func()

	opened    atomic.Bool // Open succeeded (Healthy)
	closeOnce sync.Once
	closeErr  error
}

// listener is the contract every listener meets (architecture.md "The five
// listeners"): Listen binds synchronously, Serve runs in the background,
// Shutdown is idempotent and safe on a listener never bound.
type listener interface {
	Listen() error
	Serve()
	Addr() net.Addr
	Shutdown(ctx context.Context) error
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

// Config is the configuration the appliance runs with (after Open: with the
// generated secrets filled in).
func (a *Appliance) Config() config.Config { return a.cfg }

// Broker exposes the broker (tests and in-process publishers).
func (a *Appliance) Broker() *broker.Broker { return a.broker }

// Authority exposes the certificate authority (tests and subcommands).
func (a *Appliance) Authority() *pki.Authority { return a.pki }

// Store exposes the store (tests and subcommands).
func (a *Appliance) Store() *store.Store { return a.store }
