package store

// Bounded reads of missions for the management API's overview (the web
// console's Missions page): every mission with the sizes of its parts, and
// a mission's newest changes and log entries. Each read stops at a limit
// and says whether more were left out.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"outpost/appliance/logx"
)

// MissionSummary is a mission with the number of its files, CoT uids,
// active subscribers and log entries.
type MissionSummary struct {
	Mission
	Contents, UIDs, Subscribers, Logs int
}

// scanWith scans a row's leading columns with sc's scanner and the
// trailing ones into extra.
type scanWith struct {
	sc    interface{ Scan(...any) error }
	extra []any
}

func (s scanWith) Scan(dest ...any) error { return s.sc.Scan(append(dest, s.extra...)...) }

const summaryColumns = missionColumns + `,
	(SELECT COUNT(*) FROM mission_contents c WHERE c.mission_id = missions.id),
	(SELECT COUNT(*) FROM mission_uids u WHERE u.mission_id = missions.id),
	(SELECT COUNT(*) FROM mission_subscriptions s WHERE s.mission_id = missions.id AND s.active = 1),
	(SELECT COUNT(*) FROM mission_log_missions l WHERE l.mission_id = missions.id)`

func scanSummary(sc interface{ Scan(...any) error }) (MissionSummary, error) {
	var (
		m   MissionSummary
		err error
	)
	m.Mission, err = scanMission(scanWith{sc, []any{&m.Contents, &m.UIDs, &m.Subscribers, &m.Logs}})
	return m, err
}

// MissionSummaries lists at most limit missions in name order with the
// sizes of their parts; truncated says more missions exist.
func (s *Missions) MissionSummaries(ctx context.Context, limit int) (list []MissionSummary, truncated bool, err error) {
	const op = "mission summaries"
	if err := s.checkLimit(ctx, op, limit); err != nil {
		return nil, false, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+summaryColumns+` FROM missions ORDER BY name LIMIT ?`, limit+1)
	if err != nil {
		return nil, false, s.wrapErr(op, err)
	}
	defer rows.Close()
	list = []MissionSummary{}
	for rows.Next() {
		m, err := scanSummary(rows)
		if err != nil {
			return nil, false, s.wrapErr(op, err)
		}
		list = append(list, m)
	}
	if err := rows.Err(); err != nil {
		return nil, false, s.wrapErr(op, err)
	}
	list, truncated = firstOf(list, limit)
	return list, truncated, nil
}

// MissionSummaryByName returns one mission with the sizes of its parts
// (ErrNotFound when there is none).
func (s *Missions) MissionSummaryByName(ctx context.Context, name string) (MissionSummary, error) {
	const op = "mission summary"
	if err := s.check(ctx); err != nil {
		return MissionSummary{}, fmt.Errorf("store: %s: %w", op, err)
	}
	m, err := scanSummary(s.r.QueryRowContext(ctx, `SELECT `+summaryColumns+` FROM missions WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return MissionSummary{}, fmt.Errorf("store: %s: %w: no mission named %q", op, ErrNotFound, logx.Cut(name, 64))
	}
	if err != nil {
		return MissionSummary{}, s.wrapErr(op, err)
	}
	return m, nil
}

// RecentMissionChanges returns the newest limit records of m's change
// history, newest first; truncated says older ones were left out.
func (s *Missions) RecentMissionChanges(ctx context.Context, m Mission, limit int) (list []MissionChange, truncated bool, err error) {
	const op = "recent mission changes"
	if err := s.checkLimit(ctx, op, limit); err != nil {
		return nil, false, err
	}
	list, err = s.queryChanges(ctx, op, m, nil, `WHERE mission_id = ? ORDER BY at DESC, id DESC LIMIT ?`, m.ID, limit+1)
	if err != nil {
		return nil, false, err
	}
	list, truncated = firstOf(list, limit)
	return list, truncated, nil
}

// RecentMissionLogs returns the newest limit log entries of m (by dtg),
// newest first; truncated says older ones were left out.
func (s *Missions) RecentMissionLogs(ctx context.Context, m Mission, limit int) (list []LogEntry, truncated bool, err error) {
	const op = "recent mission logs"
	if err := s.checkLimit(ctx, op, limit); err != nil {
		return nil, false, err
	}
	list, err = queryLogs(ctx, s.r, `WHERE l.id IN (SELECT n.id FROM mission_logs n
		JOIN mission_log_missions lm ON lm.log_id = n.id WHERE lm.mission_id = ? ORDER BY n.dtg DESC, n.id DESC LIMIT ?)`,
		m.ID, limit+1)
	if err != nil {
		return nil, false, s.wrapErr(op, err)
	}
	slices.Reverse(list) // queryLogs answers oldest first
	list, truncated = firstOf(list, limit)
	return list, truncated, nil
}

// checkLimit is the common start of the listings read with limit+1 rows.
func (s *db) checkLimit(ctx context.Context, op string, limit int) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	if limit <= 0 {
		return fmt.Errorf("store: %s: %w: limit must be positive", op, ErrInvalid)
	}
	return nil
}

// firstOf cuts a list read with limit+1 rows to limit and says whether it
// was longer.
func firstOf[T any](list []T, limit int) ([]T, bool) {
	if len(list) > limit {
		return list[:limit], true
	}
	return list, false
}
