package store

// Queries of the CoT history by time window, for the client API's
// cot/xml/{uid}/all (the events of one uid) and cot/sa (the latest event of
// every uid): docs/api-marti.md "CoT history". Each stored event carries
// the groups it was sent to (migration 0013; an older event, those of its
// uid's latest row), and a reader sees the events sent to its groups, no
// others, whatever its uid's latest event was sent to.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// EventsOfUID returns a page (Page) of the events of uid received in the
// window [from, to] (a zero time leaves that end open) that were sent to
// one of groups (a mask), newest first, and the cursor of the next, older
// page (zero on the last). Repeats of an unchanged event are stored once
// (history.go), so they are not listed again.
func (s *Events) EventsOfUID(ctx context.Context, uid string, from, to time.Time, groups uint64, p Page) ([]StoredEvent, Cursor, error) {
	const op = "events of uid"
	if err := s.check(ctx); err != nil {
		return nil, Cursor{}, fmt.Errorf("store: %s: %w", op, err)
	}
	if err := p.check(); err != nil {
		return nil, Cursor{}, fmt.Errorf("store: %s: %w", op, err)
	}
	at, before, err := p.belowID("a uid's events")
	if err != nil {
		return nil, Cursor{}, fmt.Errorf("store: %s: %w", op, err)
	}
	lo, hi := window(from, to)
	if !s.mayHaveSeen(ctx, uid, groups) {
		return []StoredEvent{}, Cursor{}, nil
	}
	// The uid's latest row's groups (those of its events from before
	// migration 0013) are read once, and the index holds the rest of what
	// the conditions need: the events the caller does not see are passed
	// over without reading their rows.
	groupsOf := `COALESCE(e.groups, (SELECT groups FROM cot_latest WHERE uid = ?), 0)`
	seen, seenArgs := seenBy(groupsOf, groups)
	args := []any{uid, uid, lo, hi, at, before}
	if len(seenArgs) > 0 { // else seen is "1", without groupsOf
		args = append(append(args, uid), seenArgs...)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+eventFields+`, `+groupsOf+` FROM cot_events e
		WHERE e.uid = ? AND e.received_at >= ? AND e.received_at <= ? AND (e.received_at, e.id) < (?, ?) AND `+seen+`
		ORDER BY e.received_at DESC, e.id DESC LIMIT ?`, append(args, p.Limit+1)...)
	if err != nil {
		return nil, Cursor{}, s.wrapErr(op, err)
	}
	defer rows.Close()
	g := &pager{p: p}
	out := []StoredEvent{}
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, Cursor{}, s.wrapErr(op, err)
		}
		if !g.take(Cursor{At: unixMilli(e.ReceivedAt), ID: strconv.FormatInt(e.ID, 10)}, len(e.XML)) {
			break
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, Cursor{}, s.wrapErr(op, err)
	}
	return out, g.next(), nil
}

// mayHaveSeen reports whether a caller of groups (a mask) may see any stored
// event of uid: whether its groups meet the union of the groups the uid's
// events were sent to (cot_usage). A uid without a usage row (none should
// have events) is read.
func (s *Events) mayHaveSeen(ctx context.Context, uid string, groups uint64) bool {
	if groups == AllGroups {
		return true
	}
	var union int64
	err := s.r.QueryRowContext(ctx, `SELECT groups FROM cot_usage WHERE uid = ?`, uid).Scan(&union)
	return err != nil || Seen(maskFromDB(union), groups)
}

// PictureType reports whether events of type t are part of the situation
// picture cot/sa answers, as the official server selects them: atoms of
// friends, neutrals, unknowns and hostiles (a-f, a-n, a-u, a-h), routes
// (b-m-r) and chat messages (b-t-f). Not deletes, pings, emergencies or
// drawings. pictureSQL is the same test in SQL.
func PictureType(t string) bool {
	return t == "b-t-f" || strings.HasPrefix(t, "b-m-r") ||
		(len(t) >= 3 && t[:2] == "a-" && strings.IndexByte("fnuh", t[2]) >= 0)
}

// pictureSQL is PictureType of the column col (GLOB, like the official
// server's LIKE on PostgreSQL, is case-sensitive).
func pictureSQL(col string) string {
	return `(` + col + ` = 'b-t-f' OR ` + col + ` GLOB 'b-m-r*' OR ` + col + ` GLOB 'a-[fnuh]*')`
}

// LatestInWindow returns the latest event of every uid received in the
// window [from, to] (a zero time leaves that end open) among those of the
// picture (PictureType) that were sent to one of groups (a mask), when box
// is not nil only those that lie in it: newest first, at most limit
// (1..MaxBoxLimit) of them and no more once maxBytes of their XML are read
// (at least one; 0: no byte bound). more reports whether others were left
// out. The ReceivedAt of each is when the uid's event was last received: a
// repeat of an unchanged event, stored once, counts while it is the uid's
// latest; for a window that ends before a uid's latest event only what
// was stored counts.
func (s *Events) LatestInWindow(ctx context.Context, from, to time.Time, box *Box, groups uint64, limit, maxBytes int) (_ []StoredEvent, more bool, _ error) {
	const op = "latest in window"
	if err := s.check(ctx); err != nil {
		return nil, false, fmt.Errorf("store: %s: %w", op, err)
	}
	if limit < 1 || limit > MaxBoxLimit || maxBytes < 0 {
		return nil, false, fmt.Errorf("store: %s: %w: limit must be 1 to %d", op, ErrInvalid, MaxBoxLimit)
	}
	lo, hi := window(from, to)
	// Each uid heard from since the window opened (its latest row) answers
	// its latest row's event when that is in the window, of the picture and
	// seen by the caller (direct), and else, when the caller sees any of
	// its events (cot_usage), the newest of its stored events that is.
	// Then the box, the order and the bounds.
	latestSeen, latestArgs := seenBy("l.groups", groups)
	anySeen, anyArgs := seenBy("COALESCE(u.groups, -1)", groups)
	olderSeen, olderArgs := seenBy("COALESCE(x.groups, c.lg, 0)", groups)
	where, whereArgs := "1", []any(nil)
	if box != nil {
		if err := box.Check(); err != nil {
			return nil, false, fmt.Errorf("store: %s: %w", op, err)
		}
		where, whereArgs = box.sql("e")
	}
	args := append([]any{hi}, latestArgs...)
	args = append(append(args, anyArgs...), lo)
	args = append(append(args, lo, hi), olderArgs...)
	args = append(append(args, whereArgs...), limit+1)
	rows, err := s.r.QueryContext(ctx, `SELECT `+eventFields+`, COALESCE(e.groups, c.lg, 0),
			CASE WHEN c.direct THEN c.at ELSE e.received_at END AS seen_at
		FROM (SELECT l.uid, l.groups AS lg, l.received_at AS at, l.event_id AS id,
				l.received_at <= ? AND `+pictureSQL("l.type")+` AND `+latestSeen+` AS direct,
				`+anySeen+` AS older
			FROM cot_latest l LEFT JOIN cot_usage u ON u.uid = l.uid WHERE l.received_at >= ?) c
		JOIN cot_events e ON e.id = CASE WHEN c.direct THEN c.id WHEN NOT c.older THEN NULL ELSE
			(SELECT x.id FROM cot_events x
				WHERE x.uid = c.uid AND x.received_at >= ? AND x.received_at <= ? AND `+pictureSQL("x.type")+` AND `+olderSeen+`
				ORDER BY x.received_at DESC, x.id DESC LIMIT 1) END
		WHERE `+where+`
		ORDER BY seen_at DESC, e.id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, false, s.wrapErr(op, err)
	}
	defer rows.Close()
	g := &pager{p: Page{Limit: limit, MaxBytes: maxBytes}}
	out := []StoredEvent{}
	for rows.Next() {
		var at int64
		e, err := scanEvent(rows, &at)
		if err != nil {
			return nil, false, s.wrapErr(op, err)
		}
		if !g.take(Cursor{}, len(e.XML)) {
			break
		}
		e.ReceivedAt = fromMilli(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, false, s.wrapErr(op, err)
	}
	return out, g.more, nil
}

// LatestReceived returns when the history last received an event of uid,
// whatever its groups (a repeat of an unchanged event counts), and the XML
// of the uid's latest stored event; ErrNotFound when it holds none. It
// tells whether an event the relay has seen is written yet.
func (s *Events) LatestReceived(ctx context.Context, uid string) (time.Time, []byte, error) {
	const op = "latest received"
	if err := s.check(ctx); err != nil {
		return time.Time{}, nil, fmt.Errorf("store: %s: %w", op, err)
	}
	var (
		at  int64
		xml []byte
	)
	err := s.r.QueryRowContext(ctx, `SELECT l.received_at, e.xml FROM cot_latest l JOIN cot_events e ON e.id = l.event_id
		WHERE l.uid = ?`, uid).Scan(&at, &xml)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil, fmt.Errorf("store: %s: %w: uid %q", op, ErrNotFound, uid)
	}
	if err != nil {
		return time.Time{}, nil, s.wrapErr(op, err)
	}
	return fromMilli(at), xml, nil
}
