package store

// Server objects (migration 0008: server_objects): the CoT objects the
// server itself keeps on the map — geo objects made through the management
// API (api.md §2.4) and active emergencies (api.md §2.10) — with the event
// that is replayed to clients. Package objects owns their meaning; this file
// only keeps the rows. The CoT history still records every event as it is
// relayed; these rows are what survives its retention and a restart.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"outpost/appliance/cot"
)

// Kinds and origins of server objects.
const (
	KindGeo       = "geo"
	KindEmergency = "emergency"
	OriginAPI     = "api"    // made through the management API
	OriginClient  = "client" // raised by a client over CoT (emergencies)
)

// Limits of a server object row.
const (
	MaxObjectUID  = 1024     // bytes of a uid
	MaxObjectText = 4096     // bytes of a name or label
	MaxObjectXML  = 64 << 10 // bytes of the event (what clients can receive)
)

// ServerObject is one kept object.
type ServerObject struct {
	UID    string
	Kind   string // KindGeo or KindEmergency
	Origin string // OriginAPI or OriginClient
	Type   string // CoT type
	Label  string // emergency type words ("911 Alert"); "" for geo objects
	Name   string // callsign or description
	Lat    float64
	Lon    float64
	Stale  time.Time // the object is gone after this time
	Replay bool      // queued to every client that connects
	Repeat bool      // also re-broadcast to everyone periodically
	// CreatedAt is set by the store on first insert and kept by updates;
	// UpdatedAt is the time given to PutServerObject.
	CreatedAt time.Time
	UpdatedAt time.Time
	XML       []byte // the event as replayed
	// Groups are the groups it is sent to (a mask; access.md "Groups"),
	// Owner the user who made it ("" for the server or an anonymous
	// client).
	Groups uint64
	Owner  string
}

func (o ServerObject) check() error {
	switch {
	case o.UID == "" || len(o.UID) > MaxObjectUID:
		return fmt.Errorf("%w: uid must be 1 to %d bytes", ErrInvalid, MaxObjectUID)
	case o.Kind != KindGeo && o.Kind != KindEmergency:
		return fmt.Errorf("%w: kind %q is not %s or %s", ErrInvalid, o.Kind, KindGeo, KindEmergency)
	case o.Origin != OriginAPI && o.Origin != OriginClient:
		return fmt.Errorf("%w: origin %q is not %s or %s", ErrInvalid, o.Origin, OriginAPI, OriginClient)
	case o.Type == "" || len(o.Type) > MaxObjectText:
		return fmt.Errorf("%w: type must be 1 to %d bytes", ErrInvalid, MaxObjectText)
	case len(o.Label) > MaxObjectText || len(o.Name) > MaxObjectText:
		return fmt.Errorf("%w: label and name must be at most %d bytes", ErrInvalid, MaxObjectText)
	case !(o.Lat >= -90 && o.Lat <= 90) || !(o.Lon >= -180 && o.Lon <= 180):
		return fmt.Errorf("%w: position %v, %v is off the earth", ErrInvalid, o.Lat, o.Lon)
	case len(o.XML) == 0 || len(o.XML) > MaxObjectXML:
		return fmt.Errorf("%w: the event must be 1 to %d bytes", ErrInvalid, MaxObjectXML)
	case o.Stale.IsZero() || o.UpdatedAt.IsZero():
		return fmt.Errorf("%w: stale and updated times are required", ErrInvalid)
	}
	return nil
}

const serverObjectColumns = `uid, kind, origin, type, label, name, lat, lon, stale, replay, repeat, created_at, updated_at, xml, groups, owner`

func scanServerObject(sc interface{ Scan(...any) error }) (ServerObject, error) {
	var (
		o                               ServerObject
		stale, created, updated, groups int64
	)
	if err := sc.Scan(&o.UID, &o.Kind, &o.Origin, &o.Type, &o.Label, &o.Name, &o.Lat, &o.Lon, &stale,
		&o.Replay, &o.Repeat, &created, &updated, &o.XML, &groups, &o.Owner); err != nil {
		return ServerObject{}, err
	}
	o.Groups = maskFromDB(groups)
	o.Stale, o.CreatedAt, o.UpdatedAt = fromMilli(stale), fromMilli(created), fromMilli(updated)
	return o, nil
}

// PutServerObject inserts o or replaces the row with its uid (keeping the
// row's creation time). Errors: ErrInvalid, ErrConflict (a new object made
// through the API when Budgets.ServerObjects of them are kept; objects
// clients raise are bounded by their tracker).
func (s *Objects) PutServerObject(ctx context.Context, o ServerObject) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: put server object: %w", err)
	}
	if err := o.check(); err != nil {
		return fmt.Errorf("store: put server object: %w", err)
	}
	upd := unixMilli(o.UpdatedAt)
	return s.inTx(ctx, "put server object", func(tx *sql.Tx) error {
		if o.Origin == OriginAPI {
			n, err := countWhere(ctx, tx, "server_objects", `origin = ? AND uid <> ?`, OriginAPI, o.UID)
			if err != nil {
				return err
			}
			if limit := s.budgets.ServerObjects; n >= int64(limit) {
				return overBudget("geo objects and emergencies made through the management API", int64(limit), "maxServerObjects",
					"delete some (DeleteRepeatedMessage, deleteEmergency) or wait until they go stale")
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO server_objects(`+serverObjectColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(uid) DO UPDATE SET kind = excluded.kind, origin = excluded.origin, type = excluded.type,
				label = excluded.label, name = excluded.name, lat = excluded.lat, lon = excluded.lon,
				stale = excluded.stale, replay = excluded.replay, repeat = excluded.repeat,
				updated_at = excluded.updated_at, xml = excluded.xml, groups = excluded.groups`,
			o.UID, o.Kind, o.Origin, o.Type, o.Label, o.Name, o.Lat, o.Lon, unixMilli(o.Stale),
			o.Replay, o.Repeat, upd, upd, o.XML, maskToDB(o.Groups), o.Owner)
		return err
	})
}

// ServerObject returns the object uid. Errors: ErrNotFound.
func (s *Objects) ServerObject(ctx context.Context, uid string) (ServerObject, error) {
	if err := s.check(ctx); err != nil {
		return ServerObject{}, fmt.Errorf("store: server object: %w", err)
	}
	o, err := scanServerObject(s.r.QueryRowContext(ctx, `SELECT `+serverObjectColumns+` FROM server_objects WHERE uid = ?`, uid))
	if errors.Is(err, sql.ErrNoRows) {
		return ServerObject{}, fmt.Errorf("store: server object: %w: uid %q", ErrNotFound, uid)
	}
	if err != nil {
		return ServerObject{}, s.wrapErr("server object", err)
	}
	return o, nil
}

// ServerObjects returns the objects of one kind ("": every kind), oldest
// first (for short lists; listings use EachServerObject).
func (s *Objects) ServerObjects(ctx context.Context, kind string) ([]ServerObject, error) {
	return collect(func(fn func(ServerObject) error) error { return s.EachServerObject(ctx, kind, false, fn) })
}

// EachServerObject calls fn with each object of one kind ("": every kind),
// oldest first, as they are read; replayed: only those replayed to clients.
func (s *Objects) EachServerObject(ctx context.Context, kind string, replayed bool, fn func(ServerObject) error) error {
	const op = "server objects"
	return eachRow(s.db, ctx, op, `SELECT `+serverObjectColumns+` FROM server_objects
		WHERE (? = '' OR kind = ?) AND (? = 0 OR replay) ORDER BY created_at, uid`, []any{kind, kind, replayed}, listChunk, scanServerObject, fn)
}

// CountServerObjects counts the objects of one kind and origin.
func (s *Objects) CountServerObjects(ctx context.Context, kind, origin string) (int, error) {
	if err := s.check(ctx); err != nil {
		return 0, fmt.Errorf("store: count server objects: %w", err)
	}
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM server_objects WHERE kind = ? AND origin = ?`, kind, origin).Scan(&n)
	return n, s.wrapErr("count server objects", err)
}

// DeleteServerObjects deletes the objects uids (unknown ones are skipped)
// and, in the same transaction, ends their rows in the CoT history's
// latest positions (stale at now), so a geo object query never finds a
// deleted object. It returns how many objects it deleted.
func (s *Objects) DeleteServerObjects(ctx context.Context, uids []string, now time.Time) (int, error) {
	if err := s.check(ctx); err != nil {
		return 0, fmt.Errorf("store: delete server objects: %w", err)
	}
	n := 0
	err := s.inTxAnySpace(ctx, "delete server objects", func(tx *sql.Tx) error {
		n = 0
		at := unixMilli(now)
		for _, uid := range uids {
			res, err := tx.ExecContext(ctx, `DELETE FROM server_objects WHERE uid = ?`, uid)
			if err != nil {
				return err
			}
			k, err := res.RowsAffected()
			if err != nil {
				return err
			}
			n += int(k)
			if _, err := tx.ExecContext(ctx, expireLinkedSQL, at, uid, at, int64(math.MaxInt64)); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// ExpireServerObjects deletes the objects whose stale time is not after
// now and returns them (without their XML).
func (s *Objects) ExpireServerObjects(ctx context.Context, now time.Time) ([]ServerObject, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: expire server objects: %w", err)
	}
	var out []ServerObject
	err := s.inTxAnySpace(ctx, "expire server objects", func(tx *sql.Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, `DELETE FROM server_objects WHERE stale <= ? RETURNING uid, kind, origin, type`, unixMilli(now))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var o ServerObject
			if err := rows.Scan(&o.UID, &o.Kind, &o.Origin, &o.Type); err != nil {
				return err
			}
			out = append(out, o)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MapObject is one geo object found by GeoObjectsInBox.
type MapObject struct {
	UID      string
	Type     string
	Lat, Lon float64
	Server   bool // a server object (made through the API), not a client's marker
}

// MaxMapObjects is the most objects GeoObjectsInBox returns; a box holding
// more is refused with ErrTooLarge.
const MaxMapObjects = 100_000

// GeoObjectsInBox returns the geo objects whose position lies in the box,
// that are not stale at now and that were sent to one of groups (a mask): the server's own geo objects and the
// latest event of every uid of an a- type that clients sent (markers,
// points, hostile reports), without clients' reports of their own
// position. A uid appears once: a server object by its server_objects row,
// never by its history. A box with
// minLon > maxLon crosses the antimeridian. More than MaxMapObjects in the
// box: ErrTooLarge.
func (s *Objects) GeoObjectsInBox(ctx context.Context, minLat, minLon, maxLat, maxLon float64, now time.Time, groups uint64) ([]MapObject, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: geo objects in box: %w", err)
	}
	for _, v := range []float64{minLat, minLon, maxLat, maxLon} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("store: geo objects in box: %w: bounds must be finite numbers", ErrInvalid)
		}
	}
	lonCond := `lon BETWEEN ? AND ?`
	if minLon > maxLon {
		lonCond = `(lon >= ? OR lon <= ?)`
	}
	at := unixMilli(now)
	var out []MapObject
	scan := func(q string, isServer bool, args ...any) error {
		rows, err := s.r.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			o := MapObject{Server: isServer}
			if err := rows.Scan(&o.UID, &o.Type, &o.Lat, &o.Lon); err != nil {
				return err
			}
			if len(out) == MaxMapObjects {
				return fmt.Errorf("%w: more than %d objects in the area", ErrTooLarge, MaxMapObjects)
			}
			out = append(out, o)
		}
		return rows.Err()
	}
	seen, seenArgs := seenBy("groups", groups)
	err := scan(`SELECT uid, type, lat, lon FROM server_objects
		WHERE kind = 'geo' AND lat BETWEEN ? AND ? AND `+lonCond+` AND stale > ? AND `+seen,
		true, append([]any{minLat, maxLat, minLon, maxLon, at}, seenArgs...)...)
	if err == nil {
		// Types starting "a-" (a range: case-sensitive, unlike LIKE here);
		// a server object's history row is left to its server_objects row,
		// wherever either lies (a moved object's history may lag behind).
		err = scan(`SELECT l.uid, l.type, l.lat, l.lon FROM cot_latest l
			WHERE l.lat BETWEEN ? AND ? AND `+strings.ReplaceAll(lonCond, "lon", "l.lon")+`
			AND l.type >= 'a-' AND l.type < 'a.' AND l.position = 0 AND l.stale > ? AND `+strings.ReplaceAll(seen, "groups", "l.groups")+`
			AND NOT EXISTS (SELECT 1 FROM server_objects s WHERE s.uid = l.uid)`, false,
			append([]any{minLat, maxLat, minLon, maxLon, at}, seenArgs...)...)
	}
	if errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("store: geo objects in box: %w", err)
	}
	if err != nil {
		return nil, s.wrapErr("geo objects in box", err)
	}
	if out == nil {
		out = []MapObject{}
	}
	return out, nil
}

// isOwnPosition reports whether ev is a client's report of its own position
// (protocol.md §1) rather than a marker it placed: an SA that carries what
// only a client's own report carries, <contact endpoint>, <takv> or
// <__group>. ATAK's markers have a callsign and none of these.
func isOwnPosition(ev *cot.Event) bool {
	d := &ev.Detail
	return ev.IsSA() && (d.Contact.Endpoint != "" || d.Takv != nil || d.Group != nil)
}
