package cotsession

import (
	"log/slog"
	"math/big"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/logx"
	"outpost/appliance/rate"
)

// Config configures the driver of one listener.
type Config struct {
	Name string // the listener: its sessions' SessionInfo.Listener

	// MaxMessage is the largest inbound message (default
	// cot.DefaultMaxMessage), named when a larger one ends a connection.
	MaxMessage int
	// MaxEventsPerSecond and MaxBytesPerSecond pace each connection's
	// reading; bursts of PaceBurst are allowed. 0: no limit.
	MaxEventsPerSecond int
	MaxBytesPerSecond  int
	ServerUID          string // uid of the negotiation control events (protocol.md §4)

	Broker *broker.Broker
	Logger *slog.Logger  // the transport's logger (with its listener attribute)
	Warn   *logx.Limiter // warnings a client can cause; default: 20 per 10 s on Logger
	Now    func() time.Time
}

// PaceBurst is how many seconds of its rates a connection may send at once
// (an ATAK client sends its markers in a burst on connect).
const PaceBurst = 2 * time.Second

// Conn is a transport's connection as the registry holds it: a pointer to a
// struct that embeds Session (which gives it the unexported method), and
// Cut, which closes the connection at once: Shutdown calls it for the
// connections still open when the drain budget ends.
type Conn interface {
	comparable
	session() *Session
	Cut()
}

// core is what the sessions of one listener share: the configuration, the
// loggers and the counters. It is not generic, so that Session (and the
// per-message path) is not either.
type core struct {
	cfg   Config
	log   *slog.Logger
	warn  *logx.Limiter
	stats counters
}

// counters are the driver's plain atomic counters (architecture.md
// "Metrics": snapshots are taken when metrics are scraped).
type counters struct {
	syntax, oversize, impostor, junkBytes, paced atomic.Uint64
}

// Stats is a snapshot of a driver's counters.
type Stats struct {
	Open           int    // connections listed now (Add)
	OversizeEvents uint64 // events refused: larger than what clients can receive
	Impostors      uint64 // position reports refused: uid bound to another identity
	SyntaxErrors   uint64 // malformed messages skipped
	JunkBytes      uint64 // bytes skipped looking for the next protobuf frame
	Paced          uint64 // times a connection over its rate was made to wait
}

// New returns the driver of one listener.
func New[C Conn](cfg Config) *Driver[C] {
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = cot.DefaultMaxMessage
	}
	if cfg.ServerUID == "" {
		cfg.ServerUID = "outpost-" + uuid.NewString()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Warn == nil {
		cfg.Warn = logx.NewLimiter(cfg.Logger, 20, 10*time.Second)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Driver[C]{core: core{cfg: cfg, log: cfg.Logger, warn: cfg.Warn}, conns: map[C]struct{}{}}
}

// Identity is who a connection is (access.md "Principals"): its client
// certificate's common name and serial (the key of CloseWhere), and, when
// Grouped, the group masks it sends to and receives from. The zero value is
// an anonymous client in __ANON__.
type Identity struct {
	User    string
	Serial  *big.Int
	In, Out uint64
	Grouped bool // In and Out are as given (a user with every group off has none)
}

// Join joins the broker for a new connection: s, embedded in the
// transport's connection, becomes its CoT session, with id's identity and
// groups. info.Listener is the driver's name. The broker queues the replay
// at once; the transport starts writing when it is ready.
func (d *Driver[C]) Join(s *Session, info broker.SessionInfo, id Identity) {
	info.Listener = d.cfg.Name
	info.User, info.In, info.Out, info.Grouped = id.User, id.In, id.Out, id.Grouped
	s.d, s.serial = &d.core, id.Serial
	s.events = rate.New(float64(d.cfg.MaxEventsPerSecond), PaceBurst)
	s.bytes = rate.New(float64(d.cfg.MaxBytesPerSecond), PaceBurst)
	s.Sess = d.cfg.Broker.Join(info)
}

// Stats returns the driver's counters.
func (d *Driver[C]) Stats() Stats {
	return Stats{Open: d.Len(), OversizeEvents: d.stats.oversize.Load(), Impostors: d.stats.impostor.Load(),
		SyntaxErrors: d.stats.syntax.Load(), JunkBytes: d.stats.junkBytes.Load(), Paced: d.stats.paced.Load()}
}
