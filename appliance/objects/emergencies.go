package objects

// Emergencies (api.md §2.10): raised through the API or by clients over
// CoT (protocol.md §1: ATAK's 911 Alert, Ring The Bell, In Contact,
// Geo-fence Breached and custom alerts), active until cancelled. An active
// emergency that was broadcast is replayed to every client that connects
// and re-broadcast every EmergencyRepeatInterval, as the official TAK
// server does, so a client that was out of reach when it was raised still
// learns of it. One a client addressed to chosen recipients (<marti><dest>)
// is tracked and listed, but never sent to anyone else.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"outpost/appliance/cot"
	"outpost/appliance/geo"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// EmergencyInput is a checked emergency request.
type EmergencyInput struct {
	Type    string // an api.md §2.10 type (EmergencyType)
	Point   geo.Point
	Name    string // callsign of the source or a description; "" is DefaultEmergencyName
	Remarks string
	Groups  uint64 // the groups it is sent to (a mask), access.md "Groups"
	Owner   string // the user who raises it
}

// DefaultEmergencyName names an emergency raised through the API without a
// name.
const DefaultEmergencyName = "Outpost"

// PostEmergency raises an emergency ("Shapes", emergency CoT): uid
// <uuid>-9-1-1, the CoT type of its emergency type, sent to every client,
// kept, replayed and re-broadcast until cancelled. It returns the uid.
func (s *Service) PostEmergency(ctx context.Context, in EmergencyInput) (string, error) {
	words, code, ok := EmergencyType(in.Type)
	if !ok {
		return "", fmt.Errorf("objects: %q is not an emergency type", logx.Cut(in.Type, 60))
	}
	name := in.Name
	if name == "" {
		name = DefaultEmergencyName
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	uid := uuid.NewString() + "-9-1-1"
	ev, err := buildEmergency(uid, code, words, name, in.Remarks, in.Point, now, now.Add(PersistentFor))
	if err != nil {
		return "", err
	}
	xml, err := encode(ev)
	if err != nil {
		return "", err
	}
	o := store.ServerObject{UID: uid, Kind: store.KindEmergency, Origin: store.OriginAPI, Type: code, Label: words,
		Name: name, Lat: in.Point.Lat, Lon: in.Point.Lon, Stale: ev.Stale, Replay: true, Repeat: true, UpdatedAt: now, XML: xml,
		Groups: in.Groups, Owner: in.Owner}
	if err := s.keep(ctx, o); err != nil {
		return "", fmt.Errorf("objects: keep emergency: %w", err)
	}
	s.opts.Broker.Retain(retainKey(store.KindEmergency, uid), ev, s.every(o), o.Groups)
	s.publish(ev, o.Groups)
	s.log.Info("emergency raised", "uid", uid, "type", words, "lat", in.Point.Lat, "lon", in.Point.Lon)
	return uid, nil
}

// Emergency is one active emergency (api.md §2.10).
type Emergency struct {
	UID      string
	Name     string
	Type     string // the words ("911 Alert")
	Lat, Lon float64
	Origin   string // store.OriginAPI or store.OriginClient
}

// Emergencies lists the active emergencies sent to one of groups (a mask),
// oldest first, reading the records one at a time (their events are not
// held). A record missing one of its attributes (a client's alert
// without a name or a known type) is left out, with a log line saying so.
func (s *Service) Emergencies(ctx context.Context, groups uint64) ([]Emergency, error) {
	now := s.now()
	out := []Emergency{}
	err := s.opts.Objects.EachServerObject(ctx, store.KindEmergency, false, func(o store.ServerObject) error {
		if !o.Stale.After(now) || !store.Seen(o.Groups, groups) {
			return nil
		}
		var missing []string
		if o.Name == "" {
			missing = append(missing, "name")
		}
		if o.Label == "" {
			missing = append(missing, "type")
		}
		if !(geo.Point{Lat: o.Lat, Lon: o.Lon}).Valid() {
			missing = append(missing, "lat/lon")
		}
		if len(missing) > 0 {
			s.listLog.Info("an emergency record lacks required attributes and is left out of the list",
				"uid", logx.Clip(o.UID), "type", logx.Clip(o.Type), "missing", strings.Join(missing, ","))
			return nil
		}
		out = append(out, Emergency{UID: o.UID, Name: o.Name, Type: o.Label, Lat: o.Lat, Lon: o.Lon, Origin: o.Origin})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("objects: emergencies: %w", err)
	}
	return out, nil
}

// CancelEmergency cancels the active emergency uid, raised through the API
// or by a client: b-a-o-can with its uid to the clients that saw it, and it
// is no longer kept or repeated. Errors: a *NotFoundError (none the caller
// sees), ErrForbidden (another user's).
func (s *Service) CancelEmergency(ctx context.Context, uid string, c Caller) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	o, err := s.opts.Objects.ServerObject(ctx, uid)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (o.Kind != store.KindEmergency || !o.Stale.After(now) || !store.Seen(o.Groups, c.Sees))) {
		return &NotFoundError{What: "active emergency", UIDs: []string{uid}}
	}
	if err != nil {
		return fmt.Errorf("objects: cancel emergency: %w", err)
	}
	if err := c.mayChange(o); err != nil {
		return err
	}
	ev, err := buildCancel(uid, o.Name, geo.Point{Lat: o.Lat, Lon: o.Lon}, now)
	if err != nil {
		return err
	}
	if _, err := s.opts.Objects.DeleteServerObjects(ctx, []string{uid}, now); err != nil {
		return fmt.Errorf("objects: cancel emergency: %w", err)
	}
	s.opts.Broker.Release(retainKey(store.KindEmergency, uid))
	s.publish(ev, o.Groups)
	s.log.Info("emergency cancelled", "uid", logx.Clip(uid), "type", logx.Clip(o.Label))
	return nil
}

// observed is a client's emergency event waiting to be tracked.
type observed struct {
	ev       *cot.Event
	directed bool
	groups   uint64 // the groups it was sent to
}

// Observe is the relay's hook (the appliance's broker observer): it is
// given every event a client sent, after routing, and whether it was
// addressed to chosen recipients, and the groups it was sent to.
// Emergencies and their cancellations are
// queued for Run to track; everything else returns at once. It never
// blocks: when the queue is full the event is relayed but not tracked, and
// a (rate-limited) line says so.
func (s *Service) Observe(ev *cot.Event, directed bool, groups uint64) {
	if !strings.HasPrefix(ev.Type, "b-a") {
		return
	}
	if !isRaise(ev.Type) && !isCancel(ev) {
		return
	}
	select {
	case s.observed <- observed{ev: ev, directed: directed, groups: groups}:
	default:
		s.obsLog.Warn("an emergency from a client was relayed but not tracked: too many at once",
			"uid", logx.Clip(ev.UID), "type", logx.Clip(ev.Type))
	}
}

func isCancel(ev *cot.Event) bool {
	return ev.Type == typeCancel || (ev.Detail.Emergency != nil && ev.Detail.Emergency.Cancel)
}

// track records a client's emergency or its cancellation (Run's goroutine).
func (s *Service) track(ctx context.Context, o observed) {
	ev := o.ev
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	old, err := s.opts.Objects.ServerObject(ctx, ev.UID)
	exists := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Error("could not look up a client's emergency; it is not tracked", "uid", logx.Clip(ev.UID), "err", err)
		return
	}
	if exists && old.Kind != store.KindEmergency {
		s.obsLog.Warn("a client's emergency uses the uid of a geo object; not tracked", "uid", logx.Clip(ev.UID))
		return
	}
	if isCancel(ev) {
		if !exists {
			return
		}
		if _, err := s.opts.Objects.DeleteServerObjects(ctx, []string{ev.UID}, now); err != nil {
			s.log.Error("could not forget a cancelled emergency", "uid", logx.Clip(ev.UID), "err", err)
			return
		}
		s.opts.Broker.Release(retainKey(store.KindEmergency, ev.UID))
		s.log.Info("emergency cancelled by a client", "uid", logx.Clip(ev.UID), "type", logx.Clip(old.Label))
		return
	}
	if exists && old.Origin == store.OriginAPI {
		return // the server's own alert, echoed by a client: the server's record stays
	}
	p := geo.Point{Lat: ev.Point.Lat, Lon: ev.Point.Lon}
	if !p.Valid() {
		s.obsLog.Warn("a client's emergency has no valid position; not tracked", "uid", logx.Clip(ev.UID))
		return
	}
	if !exists {
		n, err := s.opts.Objects.CountServerObjects(ctx, store.KindEmergency, store.OriginClient)
		if err != nil {
			s.log.Error("could not count tracked emergencies; this one is not tracked", "uid", logx.Clip(ev.UID), "err", err)
			return
		}
		if n >= s.opts.MaxClientEmergencies {
			s.obsLog.Warn("a client's emergency was relayed but not tracked: too many active", "uid", logx.Clip(ev.UID),
				"tracked", n)
			return
		}
	}
	words, name := "", ""
	if e := ev.Detail.Emergency; e != nil {
		words, name = e.Type, e.Text
	}
	if words == "" {
		words = emergencyWords(ev.Type)
	}
	if name == "" && ev.Detail.Contact != nil {
		name = strings.TrimSuffix(ev.Detail.Contact.Callsign, "-Alert")
	}
	// The server's copy stays current until cancelled: re-broadcasting
	// the client's event with its own short stale time (ATAK: 10 s) would
	// show clients an alert that is already stale.
	kept := *ev
	if !o.directed {
		kept.Stale = now.Add(PersistentFor)
	}
	row := store.ServerObject{UID: ev.UID, Kind: store.KindEmergency, Origin: store.OriginClient, Type: ev.Type,
		Label: logx.ClipN(strings.TrimSpace(words), 200), Name: logx.ClipN(strings.TrimSpace(name), 200),
		Lat: p.Lat, Lon: p.Lon, Stale: now.Add(PersistentFor), Replay: !o.directed, Repeat: !o.directed,
		UpdatedAt: now, XML: kept.AppendXML(nil), Groups: o.groups}
	// ATAK repeats an active alert every few seconds: write only what
	// changed (the replayed copy in the broker is always the newest).
	same := exists && old.Type == row.Type && old.Label == row.Label && old.Name == row.Name && old.Lat == row.Lat &&
		old.Lon == row.Lon && old.Replay == row.Replay && old.Groups == row.Groups
	if !same {
		if err := s.opts.Objects.PutServerObject(ctx, row); err != nil {
			s.log.Error("could not keep a client's emergency", "uid", logx.Clip(ev.UID), "err", err)
			return
		}
	}
	key := retainKey(store.KindEmergency, ev.UID)
	if o.directed {
		s.opts.Broker.Release(key)
	} else {
		s.opts.Broker.Retain(key, &kept, s.every(row), row.Groups)
	}
	if !exists {
		s.log.Info("emergency raised by a client is tracked", "uid", logx.Clip(ev.UID), "type", logx.Clip(row.Label),
			"name", logx.Clip(row.Name), "directed", o.directed)
	}
}
