package objects

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/fault"
	"outpost/appliance/geo"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// Defaults of Options.
const (
	DefaultRepeatInterval          = 60 * time.Second // repeated geo objects ("Shapes": repeat)
	DefaultEmergencyRepeatInterval = 3 * time.Second  // active emergencies (the official server's period)
	DefaultExpireEvery             = 10 * time.Second
	DefaultMaxClientEmergencies    = 256
)

// Options configure a Service.
type Options struct {
	Broker  *broker.Broker
	Objects ObjectStore // where the objects are kept (stores.go)
	Events  History     // the CoT history (what a linked uid is)
	// Geocoder looks up addresses that are not coordinates (nil: none;
	// coordinates in every notation still work offline).
	Geocoder *geo.Geocoder
	// RepeatInterval is how often a geo object posted with repeat is
	// re-broadcast (repeatInterval).
	RepeatInterval time.Duration
	// EmergencyRepeatInterval is how often an active emergency is
	// re-broadcast (emergencyRepeatInterval).
	EmergencyRepeatInterval time.Duration
	// ExpireEvery is how often objects past their stale time are removed.
	ExpireEvery time.Duration
	// MaxClientEmergencies bounds the emergencies raised by clients that
	// are tracked at once; more are relayed but not tracked.
	MaxClientEmergencies int
	Logger               *slog.Logger
	Now                  func() time.Time
}

// Errors of the service's operations. Every other error is an internal
// fault (the store failed).
var (
	// ErrNotFound: no such object (the error names the uids).
	ErrNotFound error = fault.New(fault.NotFound, "objects: not found")
	// ErrTooLarge: the object's event would be larger than clients can
	// receive (64 KiB), or a query's area holds too many objects.
	ErrTooLarge error = fault.New(fault.TooLarge, "objects: too large")
	// ErrForbidden: the caller may see the object but not change it (it is
	// another user's; access.md "Roles").
	ErrForbidden error = fault.New(fault.Forbidden, "objects: forbidden")
)

// Caller is who asks (access.md): the user name that owns what it makes,
// whether it is an administrator (it may change anyone's objects), and the
// groups it sees (a mask).
type Caller struct {
	Name  string
	Admin bool
	Sees  uint64
}

// mayChange reports whether c may change or remove o: an administrator, its
// owner, or, for what a client raised over CoT (no owner), anyone who sees
// it.
func (c Caller) mayChange(o store.ServerObject) error {
	if c.Admin || (o.Owner != "" && o.Owner == c.Name) || (o.Owner == "" && o.Origin == store.OriginClient) {
		return nil
	}
	return fmt.Errorf("%w: %s was made by another user; only its maker or an administrator may change it", ErrForbidden, logx.Cut(o.UID, 60))
}

// Service keeps the server's own objects. Its methods are safe for
// concurrent use; changes are serialised (they are rare and each is a
// store write, a retain and a publish).
type Service struct {
	opts Options
	log  *slog.Logger

	mu sync.Mutex // mu serialises changes to objects

	observed chan observed // client emergencies to track, in order
	obsLog   *logx.Limiter // dropped or untracked client emergencies
	listLog  *logx.Limiter // emergency records left out of a list
}

// New returns a service; call Restore before the listeners serve and run
// Run for its upkeep.
func New(opts Options) *Service {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RepeatInterval <= 0 {
		opts.RepeatInterval = DefaultRepeatInterval
	}
	if opts.EmergencyRepeatInterval <= 0 {
		opts.EmergencyRepeatInterval = DefaultEmergencyRepeatInterval
	}
	if opts.ExpireEvery <= 0 {
		opts.ExpireEvery = DefaultExpireEvery
	}
	if opts.MaxClientEmergencies <= 0 {
		opts.MaxClientEmergencies = DefaultMaxClientEmergencies
	}
	log := opts.Logger.With("component", "objects")
	return &Service{
		opts:     opts,
		log:      log,
		observed: make(chan observed, 256),
		obsLog:   logx.NewLimiter(log, 10, time.Minute),
		listLog:  logx.NewLimiter(log, 10, time.Minute),
	}
}

func (s *Service) now() time.Time { return s.opts.Now().UTC().Truncate(time.Millisecond) }

// Retain keys in the broker.
func retainKey(kind, uid string) string { return "objects/" + kind + "/" + uid }

// every is the re-broadcast interval of a kept object (0: replay only).
func (s *Service) every(o store.ServerObject) time.Duration {
	switch {
	case !o.Repeat:
		return 0
	case o.Kind == store.KindEmergency:
		return s.opts.EmergencyRepeatInterval
	default:
		return s.opts.RepeatInterval
	}
}

// Restore retains again, after a restart, every kept object that clients
// must see when they connect, and removes those that went stale while the
// server was down. Call it before the CoT listeners accept clients. It
// returns how many objects it retained. On a full disk the stale ones
// cannot be removed: they are left out, and Run removes them once it can.
func (s *Service) Restore(ctx context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.expire(ctx); err != nil {
		if !errors.Is(err, store.ErrNoSpace) {
			return 0, err
		}
		s.log.Warn("no space left to remove the objects past their stale time; they are not replayed", "err", err)
	}
	now := s.now()
	n := 0
	err := s.opts.Objects.EachServerObject(ctx, "", true, func(o store.ServerObject) error {
		if !o.Stale.After(now) {
			return nil // stale, left by a full disk: not replayed
		}
		ev, err := cot.Decode(o.XML)
		if err != nil {
			// Written by this package, so this is a damaged row: keep it
			// (an operator can still cancel or delete it) and say so.
			s.log.Error("a kept object's event does not decode; it is not replayed", "uid", logx.Clip(o.UID), "kind", o.Kind, "err", err)
			return nil
		}
		s.opts.Broker.Retain(retainKey(o.Kind, o.UID), ev, s.every(o), o.Groups)
		n++
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("objects: restore: %w", err)
	}
	if n > 0 {
		s.log.Info("kept objects restored for replay to clients", "objects", n)
	}
	return n, nil
}

// lastTrack bounds the recording of the alerts still queued when Run ends.
const lastTrack = 5 * time.Second

// Run removes objects past their stale time every ExpireEvery and tracks
// the emergencies clients raise (Observe), until ctx ends; then it records
// what was still queued and returns.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(s.opts.ExpireEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			// Track what was observed before the end, within lastTrack:
			// the appliance waits for Run before it closes the store.
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lastTrack)
			defer cancel()
			for {
				select {
				case o := <-s.observed:
					s.track(dctx, o)
				default:
					return
				}
			}
		case o := <-s.observed:
			s.track(ctx, o)
		case <-t.C:
			s.mu.Lock()
			err := s.expire(ctx)
			s.mu.Unlock()
			if err != nil && ctx.Err() == nil {
				s.log.Error("could not remove objects past their stale time; will retry", "err", err)
			}
		}
	}
}

// expire removes the objects past their stale time (s.mu held). Clients
// saw their stale time; nothing is sent.
func (s *Service) expire(ctx context.Context) error {
	gone, err := s.opts.Objects.ExpireServerObjects(ctx, s.now())
	if err != nil {
		return fmt.Errorf("objects: expire: %w", err)
	}
	for _, o := range gone {
		s.opts.Broker.Release(retainKey(o.Kind, o.UID))
	}
	if len(gone) > 0 {
		s.log.Info("objects past their stale time removed", "objects", len(gone))
	}
	return nil
}

// keep stores o (s.mu held). When the objects made through the API are at
// their budget (store.ErrConflict), those past their stale time are
// removed first, as the next expiry would, and o is tried once more: a
// stale object never stands in the way of a new one.
func (s *Service) keep(ctx context.Context, o store.ServerObject) error {
	err := s.opts.Objects.PutServerObject(ctx, o)
	if !errors.Is(err, store.ErrConflict) {
		return err
	}
	if err := s.expire(ctx); err != nil {
		return err
	}
	return s.opts.Objects.PutServerObject(ctx, o)
}

// publish sends a server event to the clients of groups (and so to the
// history).
func (s *Service) publish(ev *cot.Event, groups uint64) {
	if err := s.opts.Broker.PublishTo(ev, groups); err != nil {
		s.log.Error("the broker refused a server event", "uid", logx.Clip(ev.UID), "type", ev.Type, "err", err)
	}
}

// encode returns the event's XML, refusing one larger than clients can
// receive.
func encode(ev *cot.Event) ([]byte, error) {
	xml := ev.AppendXML(nil)
	if len(xml) > cot.MaxRelayedEvent {
		return nil, fmt.Errorf("%w: the event would be %d bytes, clients receive at most %d", ErrTooLarge, len(xml), cot.MaxRelayedEvent)
	}
	return xml, nil
}

// NotFoundError names the uids that were not found; it wraps ErrNotFound.
type NotFoundError struct {
	What string // "geo object", "repeated message", "emergency"
	UIDs []string
}

func (e *NotFoundError) Error() string {
	q := make([]string, len(e.UIDs))
	for i, u := range e.UIDs {
		q[i] = fmt.Sprintf("%q", logx.Cut(u, 60))
	}
	return fmt.Sprintf("%v: no %s with uid %s", ErrNotFound, e.What, strings.Join(q, ", "))
}

func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// Resolve reads a position typed as text: a coordinate in any notation of
// geo.Parse (offline), or an address for the configured geocoder
// (geo.Resolve).
func (s *Service) Resolve(ctx context.Context, text string) (geo.Point, error) {
	return geo.Resolve(ctx, text, s.opts.Geocoder)
}
