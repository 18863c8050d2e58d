package objects

// Geo objects (api.md §2.4–2.7): markers the management API puts on every
// map, and the radius query over them and over the markers clients placed.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"outpost/appliance/cot"
	"outpost/appliance/geo"
	"outpost/appliance/store"
)

// GeoInput is a checked geo object request (the API checks the words and
// ranges; the service builds, keeps and sends).
type GeoInput struct {
	UID      string        // the object to change (PutGeo); ignored by PostGeo
	Type     string        // CoT type, attitude letter in place (GeoCoTType)
	How      string        // CoT how (HowCode)
	Point    geo.Point     // where, after any distance/bearing offset
	Callsign string        // the label clients show; "" names it after its type
	Remarks  string        // free text
	LinkUID  string        // an object to link to ("" none)
	Timeout  time.Duration // until stale; 0 persistent
	Repeat   bool          // re-broadcast every RepeatInterval
	Groups   uint64        // the groups it is sent to (a mask; PostGeo), access.md "Groups"
	Owner    string        // the user who makes it (PostGeo)
}

// defaultLinkType is a link's type when the linked uid is unknown: the
// type of a client's own position (what ATAK links its markers to).
const defaultLinkType = "a-f-G-U-C"

// PostGeo creates a geo object, keeps it, and sends it to every client;
// it returns its new uid. A persistent object (Timeout 0) and a repeated
// one are retained: every client that connects later receives it, and a
// repeated one is re-broadcast every RepeatInterval.
func (s *Service) PostGeo(ctx context.Context, in GeoInput) (string, error) {
	in.UID = uuid.NewString()
	return in.UID, s.saveGeo(ctx, in, nil)
}

// PutGeo changes the geo object in.UID (made through the API, not yet
// stale, and visible to the caller): same uid, so clients move the marker
// rather than add one; it keeps its groups and owner. Errors: a
// *NotFoundError, ErrForbidden (another user's object).
func (s *Service) PutGeo(ctx context.Context, in GeoInput, c Caller) error {
	return s.saveGeo(ctx, in, &c)
}

// saveGeo keeps and sends a geo object: a new one (c nil) or a change of
// one the caller c may change.
func (s *Service) saveGeo(ctx context.Context, in GeoInput, c *Caller) error {
	create := c == nil
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if !create {
		old, err := s.opts.Objects.ServerObject(ctx, in.UID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (old.Kind != store.KindGeo || !old.Stale.After(now) || !store.Seen(old.Groups, c.Sees))) {
			return &NotFoundError{What: "geo object made through this API", UIDs: []string{in.UID}}
		}
		if err != nil {
			return fmt.Errorf("objects: put geo object: %w", err)
		}
		if err := c.mayChange(old); err != nil {
			return err
		}
		in.Groups, in.Owner = old.Groups, old.Owner
	}
	g := geoEvent{uid: in.UID, typ: in.Type, how: in.How, point: in.Point, callsign: in.Callsign,
		remarks: in.Remarks, linkUID: in.LinkUID, stale: now.Add(in.Timeout), persistent: in.Timeout == 0}
	if g.callsign == "" {
		if g.callsign = GeoTypeName(in.Type); g.callsign == "" {
			g.callsign = in.Type
		}
	}
	if g.persistent {
		g.stale = now.Add(PersistentFor)
	}
	if in.LinkUID != "" {
		g.linkType = s.typeOf(ctx, in.LinkUID)
	}
	ev, err := buildGeo(g, now)
	if err != nil {
		return err
	}
	xml, err := encode(ev)
	if err != nil {
		return err
	}
	o := store.ServerObject{UID: in.UID, Kind: store.KindGeo, Origin: store.OriginAPI, Type: in.Type, Name: g.callsign,
		Lat: in.Point.Lat, Lon: in.Point.Lon, Stale: ev.Stale, Replay: in.Repeat || g.persistent, Repeat: in.Repeat,
		UpdatedAt: now, XML: xml, Groups: in.Groups, Owner: in.Owner}
	if err := s.keep(ctx, o); err != nil {
		return fmt.Errorf("objects: keep geo object: %w", err)
	}
	// Retain before publishing: a client joining in between gets it twice
	// (same uid, harmless), never not at all.
	key := retainKey(store.KindGeo, in.UID)
	if o.Replay {
		s.opts.Broker.Retain(key, ev, s.every(o), o.Groups)
	} else {
		s.opts.Broker.Release(key)
	}
	s.publish(ev, o.Groups)
	verb := "created"
	if !create {
		verb = "moved or changed"
	}
	s.log.Info("geo object "+verb, "uid", in.UID, "type", in.Type, "lat", in.Point.Lat, "lon", in.Point.Lon,
		"persistent", g.persistent, "repeat", in.Repeat)
	return nil
}

// typeOf is the CoT type of a uid the server knows (a kept object or the
// latest event in the history), else defaultLinkType.
func (s *Service) typeOf(ctx context.Context, uid string) string {
	if o, err := s.opts.Objects.ServerObject(ctx, uid); err == nil {
		return o.Type
	}
	if e, err := s.opts.Events.LatestEvent(ctx, uid, store.AllGroups); err == nil {
		return e.Type
	}
	return defaultLinkType
}

// EachRepeated calls fn with each geo object kept for replay (posted with
// repeat, or persistent) that was sent to one of groups (a mask): its uid
// and the event's XML (without the XML declaration), as they are read.
func (s *Service) EachRepeated(ctx context.Context, groups uint64, fn func(uid, xml string) error) error {
	now := s.now()
	return s.opts.Objects.EachServerObject(ctx, store.KindGeo, true, func(o store.ServerObject) error {
		if !o.Stale.After(now) || !store.Seen(o.Groups, groups) {
			return nil
		}
		return fn(o.UID, stripDeclaration(o.XML))
	})
}

// DeleteRepeated stops keeping the repeated (or persistent) geo objects
// uids and sends, for each, a forced delete so the clients that saw it
// remove it. Every uid must name one the caller sees (a *NotFoundError
// names those that do not) and may change (ErrForbidden), or nothing
// changes.
func (s *Service) DeleteRepeated(ctx context.Context, uids []string, c Caller) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	kept := map[string]store.ServerObject{}
	var unknown, list []string
	for _, u := range uids {
		if _, ok := kept[u]; ok || slices.Contains(unknown, u) {
			continue
		}
		o, err := s.opts.Objects.ServerObject(ctx, u)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("objects: delete repeated: %w", err)
		}
		if err != nil || o.Kind != store.KindGeo || !o.Replay || !o.Stale.After(now) || !store.Seen(o.Groups, c.Sees) {
			unknown = append(unknown, u)
			continue
		}
		o.XML = nil // not needed: hold at most the uids' metadata
		kept[u] = o
		list = append(list, u)
	}
	if len(unknown) > 0 {
		return &NotFoundError{What: "repeated message", UIDs: unknown}
	}
	for _, u := range list {
		if err := c.mayChange(kept[u]); err != nil {
			return err
		}
	}
	dels := make([]*cot.Event, len(list))
	for i, u := range list {
		var err error
		if dels[i], err = buildForceDelete(u, kept[u].Type, now); err != nil {
			return err
		}
	}
	if _, err := s.opts.Objects.DeleteServerObjects(ctx, list, now); err != nil {
		return fmt.Errorf("objects: delete repeated: %w", err)
	}
	for i, u := range list {
		s.opts.Broker.Release(retainKey(store.KindGeo, u))
		s.publish(dels[i], kept[u].Groups)
	}
	s.log.Info("repeated geo objects deleted", "objects", len(list))
	return nil
}

// GeoItem is one object found by Near (api.md §2.7).
type GeoItem struct {
	UID       string
	Lat, Lon  float64
	Distance  float64 // metres from the centre
	Direction float64 // degrees clockwise from true north, from the centre
	Type      string  // the api.md §2.5 name, else the CoT type
	Attitude  string  // the attitude word
}

// Near returns the geo objects within radius metres (geodesic) of center
// that were sent to one of groups (a mask), nearest first: the API's own
// and the markers clients placed (not their own positions), not stale.
// attitude is a letter (f, h, n, u) or 0 for every attitude. An area
// holding more than store.MaxMapObjects candidates is refused
// (ErrTooLarge).
func (s *Service) Near(ctx context.Context, center geo.Point, radius float64, attitude byte, groups uint64) ([]GeoItem, error) {
	box := geo.BoundingBox(center, radius)
	rows, err := s.opts.Objects.GeoObjectsInBox(ctx, box.MinLat, box.MinLon, box.MaxLat, box.MaxLon, s.now(), groups)
	if errors.Is(err, store.ErrTooLarge) {
		return nil, fmt.Errorf("%w: more than %d objects lie in the area", ErrTooLarge, store.MaxMapObjects)
	}
	if err != nil {
		return nil, fmt.Errorf("objects: near: %w", err)
	}
	origin := geo.NewOrigin(center)
	out := make([]GeoItem, 0, len(rows))
	for _, r := range rows {
		if len(r.Type) < 3 || (attitude != 0 && r.Type[2] != attitude) {
			continue
		}
		p := geo.Point{Lat: r.Lat, Lon: r.Lon}
		if !p.Valid() {
			continue
		}
		d, dir, _ := origin.Inverse(p)
		if d > radius {
			continue
		}
		name := GeoTypeName(r.Type)
		if name == "" {
			name = r.Type
		}
		out = append(out, GeoItem{UID: r.UID, Lat: r.Lat, Lon: r.Lon, Distance: d, Direction: dir,
			Type: name, Attitude: AttitudeWord(r.Type[2])})
	}
	slices.SortFunc(out, func(a, b GeoItem) int {
		if c := cmp.Compare(a.Distance, b.Distance); c != 0 {
			return c
		}
		return strings.Compare(a.UID, b.UID)
	})
	return out, nil
}
