package store

// Queries over the CoT history written by History.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"outpost/appliance/cot"
)

// MaxBoxLimit is the largest limit LatestInBox accepts.
const MaxBoxLimit = 10000

// StoredEvent is one persisted CoT event.
type StoredEvent struct {
	ID         int64
	UID        string
	Type       string
	How        string
	Callsign   string
	Time       time.Time
	Start      time.Time
	Stale      time.Time
	Lat, Lon   float64
	Hae        float64
	ReceivedAt time.Time
	Source     string
	XML        []byte // the event's XML encoding
	Groups     uint64 // the groups the uid's latest event was sent to (a mask)
}

// Event decodes the stored XML back into a CoT event.
func (e StoredEvent) Event() (*cot.Event, error) {
	ev, err := decodeEventXML(e.XML)
	if err != nil {
		return nil, fmt.Errorf("store: stored event %d: %w", e.ID, err)
	}
	return ev, nil
}

// eventFields are the columns of a stored event e that scanEvent reads
// before its groups; eventColumns adds the groups of the uid's latest row l.
const (
	eventFields = `e.id, e.uid, e.type, e.how, e.callsign, e.time, e.start, e.stale, e.lat, e.lon, e.hae,
	e.received_at, e.source, e.xml`
	eventColumns = eventFields + `, l.groups`
)

// scanEvent scans a row of eventColumns (or eventFields and a groups
// expression), and into extra the columns the query selects after them.
func scanEvent(sc scanner, extra ...any) (StoredEvent, error) {
	var (
		e                                  StoredEvent
		tm, start, stale, received, groups int64
	)
	if err := sc.Scan(append([]any{&e.ID, &e.UID, &e.Type, &e.How, &e.Callsign, &tm, &start, &stale, &e.Lat, &e.Lon, &e.Hae,
		&received, &e.Source, &e.XML, &groups}, extra...)...); err != nil {
		return StoredEvent{}, err
	}
	e.Groups = maskFromDB(groups)
	e.Time, e.Start, e.Stale, e.ReceivedAt = fromMilli(tm), fromMilli(start), fromMilli(stale), fromMilli(received)
	return e, nil
}

// LatestEvent returns the newest stored event (by receive time) of uid, when
// it was sent to one of groups (a mask; ErrNotFound otherwise).
func (s *Events) LatestEvent(ctx context.Context, uid string, groups uint64) (StoredEvent, error) {
	if err := s.check(ctx); err != nil {
		return StoredEvent{}, fmt.Errorf("store: latest event: %w", err)
	}
	seen, seenArgs := seenBy("l.groups", groups)
	e, err := scanEvent(s.r.QueryRowContext(ctx, `SELECT `+eventColumns+`
		FROM cot_latest l JOIN cot_events e ON e.id = l.event_id WHERE l.uid = ? AND `+seen, append([]any{uid}, seenArgs...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return StoredEvent{}, fmt.Errorf("store: latest event: %w: uid %q", ErrNotFound, uid)
	}
	if err != nil {
		return StoredEvent{}, s.wrapErr("latest event", err)
	}
	return e, nil
}

// LatestInBox returns the newest event of every uid whose latest position
// lies in the box and that was sent to one of groups (a mask), newest
// first, at most limit (1..MaxBoxLimit) of them. A box with minLon > maxLon
// crosses the antimeridian.
func (s *Events) LatestInBox(ctx context.Context, minLat, minLon, maxLat, maxLon float64, limit int, groups uint64) ([]StoredEvent, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: latest in box: %w", err)
	}
	box := Box{MinLat: minLat, MinLon: minLon, MaxLat: maxLat, MaxLon: maxLon}
	if err := box.Check(); err != nil {
		return nil, fmt.Errorf("store: latest in box: %w", err)
	}
	if limit < 1 || limit > MaxBoxLimit {
		return nil, fmt.Errorf("store: latest in box: %w: limit must be 1 to %d", ErrInvalid, MaxBoxLimit)
	}
	inBox, boxArgs := box.sql("l")
	seen, seenArgs := seenBy("l.groups", groups)
	args := append(append(boxArgs, seenArgs...), limit)
	rows, err := s.r.QueryContext(ctx, `SELECT `+eventColumns+`
		FROM cot_latest l JOIN cot_events e ON e.id = l.event_id
		WHERE `+inBox+` AND `+seen+`
		ORDER BY l.received_at DESC, l.event_id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, s.wrapErr("latest in box", err)
	}
	defer rows.Close()
	out := []StoredEvent{}
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, s.wrapErr("latest in box", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr("latest in box", err)
	}
	return out, nil
}

// CountEventsOfType counts the stored events of one CoT type.
func (s *Events) CountEventsOfType(ctx context.Context, typ string) (int, error) {
	if err := s.check(ctx); err != nil {
		return 0, fmt.Errorf("store: count events: %w", err)
	}
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM cot_events WHERE type = ?`, typ).Scan(&n); err != nil {
		return 0, s.wrapErr("count events", err)
	}
	return n, nil
}
