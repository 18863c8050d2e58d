package store

// The budgets of a mission (RELIABILITY.md "Budgets"): what one mission may
// hold. A change that would take a mission past its log or contents budget
// is refused with ErrOverBudget and writes nothing. The change history is
// never refused, it is kept to its budget instead: every transaction that
// records changes drops the mission's oldest records beyond it. The
// official server keeps the whole history; a client reads the newest (a
// subscriber catching up asks for the last seconds), and what the mission
// holds now is in its own tables, not in the history.

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"outpost/appliance/logx"
)

// MissionBudgets bound what one mission may hold. Zero values: no limit.
type MissionBudgets struct {
	LogEntryBytes int   // content bytes of one log entry
	LogEntries    int   // log entries of one mission
	LogBytes      int64 // content bytes of one mission's log entries together
	Contents      int   // files and CoT uids of one mission together
	Changes       int   // change records kept per mission (the oldest go first)
	ChangeBytes   int64 // bytes of change records kept per mission (the oldest go first)
}

func over(limit, v int64) bool { return limit > 0 && v > limit }

// checkLogEntry refuses a log entry whose content is larger than one
// entry may be.
func (b MissionBudgets) checkLogEntry(content string) error {
	if over(int64(b.LogEntryBytes), int64(len(content))) {
		return fmt.Errorf("%w: content is %d bytes, a log entry may hold at most %d", ErrOverBudget, len(content), b.LogEntryBytes)
	}
	return nil
}

// checkLogRoom refuses to put the log entry id with content into mission
// m when the mission's log would pass its budgets (what id holds in m
// already is replaced, not added to).
func (b MissionBudgets) checkLogRoom(ctx context.Context, q querier, m Mission, id, content string) error {
	if b.LogEntries <= 0 && b.LogBytes <= 0 {
		return nil
	}
	var n, size int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(octet_length(l.content)), 0)
		FROM mission_log_missions lm JOIN mission_logs l ON l.id = lm.log_id WHERE lm.mission_id = ? AND lm.log_id <> ?`,
		m.ID, id).Scan(&n, &size); err != nil {
		return err
	}
	if over(int64(b.LogEntries), n+1) {
		return fmt.Errorf("%w: mission %q holds %d log entries, the most it may hold; delete some first",
			ErrOverBudget, logx.Cut(m.Name, 64), n)
	}
	if over(b.LogBytes, size+int64(len(content))) {
		return fmt.Errorf("%w: mission %q's log entries hold %d bytes; %d more would pass its budget of %d",
			ErrOverBudget, logx.Cut(m.Name, 64), size, len(content), b.LogBytes)
	}
	return nil
}

// contentRoom counts the files and uids of a mission while a transaction
// adds to them.
type contentRoom struct {
	limit, n int
	name     string
}

// contentRoom reads how many files and uids mission m holds.
func (b MissionBudgets) contentRoom(ctx context.Context, q querier, m Mission) (*contentRoom, error) {
	c := &contentRoom{limit: b.Contents, name: m.Name}
	if c.limit <= 0 {
		return c, nil
	}
	err := q.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM mission_contents WHERE mission_id = ?1) +
		(SELECT COUNT(*) FROM mission_uids WHERE mission_id = ?1)`, m.ID).Scan(&c.n)
	return c, err
}

// full reports whether the mission may take nothing more.
func (c *contentRoom) full() bool { return c.limit > 0 && c.n >= c.limit }

// add counts one more item; past the budget it is ErrOverBudget.
func (c *contentRoom) add() error {
	c.n++
	if over(int64(c.limit), int64(c.n)) {
		return fmt.Errorf("%w: mission %q may hold at most %d files and uids together; remove some first",
			ErrOverBudget, logx.Cut(c.name, 64), c.limit)
	}
	return nil
}

// pruneChanges drops the oldest change records of each mission beyond the
// budgets (the newest record always stays). Every transaction that records
// changes calls it once per mission it touched.
func (b MissionBudgets) pruneChanges(ctx context.Context, tx *sql.Tx, missionIDs ...int64) error {
	if b.Changes <= 0 && b.ChangeBytes <= 0 {
		return nil
	}
	n, size := int64(b.Changes), b.ChangeBytes
	if n <= 0 {
		n = math.MaxInt64
	}
	if size <= 0 {
		size = math.MaxInt64
	}
	for _, id := range missionIDs {
		if _, err := tx.ExecContext(ctx, `DELETE FROM mission_changes WHERE id IN (
			SELECT id FROM (SELECT id, ROW_NUMBER() OVER w AS n, SUM(octet_length(body)) OVER w AS size
				FROM mission_changes WHERE mission_id = ? WINDOW w AS (ORDER BY at DESC, id DESC))
			WHERE n > 1 AND (n > ? OR size > ?))`, id, n, size); err != nil {
			return err
		}
	}
	return nil
}
