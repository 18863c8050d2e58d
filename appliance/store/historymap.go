package store

// A query over the CoT history for the console's map: the recent events of
// one type (deletions, t-x-d-d, which name what they delete in a link, so
// the map can drop or fade what was deleted).

import (
	"context"
	"fmt"
	"time"
)

// RecentOfType returns the events of type typ received after since that are
// still the latest of their uid and were sent to one of groups (a mask),
// newest first, at most limit (1..MaxBoxLimit).
func (s *Events) RecentOfType(ctx context.Context, typ string, since time.Time, limit int, groups uint64) ([]StoredEvent, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: recent of type: %w", err)
	}
	if limit < 1 || limit > MaxBoxLimit {
		return nil, fmt.Errorf("store: recent of type: %w: limit must be 1 to %d", ErrInvalid, MaxBoxLimit)
	}
	seen, seenArgs := seenBy("l.groups", groups)
	args := append(append([]any{unixMilli(since), typ}, seenArgs...), limit)
	rows, err := s.r.QueryContext(ctx, `SELECT `+eventColumns+`
		FROM cot_latest l JOIN cot_events e ON e.id = l.event_id
		WHERE l.received_at > ? AND l.type = ? AND `+seen+`
		ORDER BY l.received_at DESC, l.event_id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, s.wrapErr("recent of type", err)
	}
	defer rows.Close()
	out := []StoredEvent{}
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, s.wrapErr("recent of type", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr("recent of type", err)
	}
	return out, nil
}
