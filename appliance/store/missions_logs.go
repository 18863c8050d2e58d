package store

// Mission log entries and external data (api.md §4.4). A log entry may
// belong to several missions; each change to it is recorded in the change
// history of each.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"outpost/appliance/logx"

	"github.com/google/uuid"
)

// LogEntry is a mission log entry.
type LogEntry struct {
	ID            string    `json:"id"`
	EntryUID      string    `json:"entryUid"`
	Content       string    `json:"content"`
	CreatorUID    string    `json:"creatorUid"`
	Missions      []string  `json:"missionNames"`
	DTG           time.Time `json:"dtg"`
	Created       time.Time `json:"created"`
	ServerTime    time.Time `json:"servertime"`
	ContentHashes []string  `json:"contentHashes"`
	Keywords      []string  `json:"keywords"`
}

// Limits of a log entry (its content has a budget: MissionBudgets).
const (
	maxLogContent  = 1 << 20
	maxLogMissions = 64
)

func (e *LogEntry) validate() error {
	if err := checkText("content", e.Content, 0, maxLogContent); err != nil {
		return err
	}
	for _, f := range []struct{ n, v string }{{"creatorUid", e.CreatorUID}, {"entryUid", e.EntryUID}} {
		if err := checkText(f.n, f.v, 0, maxPackageField); err != nil {
			return err
		}
	}
	if len(e.Missions) == 0 || len(e.Missions) > maxLogMissions {
		return fmt.Errorf("%w: missionNames must name 1 to %d missions", ErrInvalid, maxLogMissions)
	}
	for _, l := range []struct {
		n string
		v []string
	}{{"contentHashes", e.ContentHashes}, {"keywords", e.Keywords}} {
		if err := checkList(l.n, l.v); err != nil {
			return err
		}
	}
	if e.ContentHashes == nil {
		e.ContentHashes = []string{}
	}
	if e.Keywords == nil {
		e.Keywords = []string{}
	}
	return nil
}

// PutLogEntry creates the entry (e.ID empty: a new id) or replaces the
// entry e.ID (ErrNotFound when there is none), records an ADD_CONTENT
// change with the entry in each of its missions, and returns it. The
// creator needs write access to every mission named.
func (s *Missions) PutLogEntry(ctx context.Context, e LogEntry) (LogEntry, bool, error) {
	const op = "put log entry"
	if err := s.check(ctx); err != nil {
		return LogEntry{}, false, fmt.Errorf("store: %s: %w", op, err)
	}
	if err := e.validate(); err != nil {
		return LogEntry{}, false, fmt.Errorf("store: %s: %w", op, err)
	}
	if err := s.budgets.Missions.checkLogEntry(e.Content); err != nil {
		return LogEntry{}, false, fmt.Errorf("store: %s: %w", op, err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	created := e.ID == ""
	if created {
		id := uuid.NewString()
		e.ID = id
	}
	if e.DTG.IsZero() {
		e.DTG = now
	}
	e.ServerTime = now
	err := s.inTx(ctx, op, func(tx *sql.Tx) error {
		var ms []Mission
		for _, name := range e.Missions {
			m, err := missionByName(ctx, tx, name)
			if err != nil {
				return err
			}
			if err := mayWrite(ctx, tx, m, e.CreatorUID); err != nil {
				return err
			}
			if err := s.budgets.Missions.checkLogRoom(ctx, tx, m, e.ID, e.Content); err != nil {
				return err
			}
			ms = append(ms, m)
		}
		if created {
			e.Created = now
			if _, err := tx.ExecContext(ctx, `INSERT INTO mission_logs(id, entry_uid, content, creator_uid, dtg, created_at,
				server_time, content_hashes, keywords) VALUES (?,?,?,?,?,?,?,?,?)`, e.ID, e.EntryUID, e.Content, e.CreatorUID,
				unixMilli(e.DTG), unixMilli(now), unixMilli(now), jsonList(e.ContentHashes), jsonList(e.Keywords)); err != nil {
				return err
			}
		} else {
			var createdAt int64
			err := tx.QueryRowContext(ctx, `SELECT created_at FROM mission_logs WHERE id = ?`, e.ID).Scan(&createdAt)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: no log entry %q", ErrNotFound, logx.Cut(e.ID, 64))
			}
			if err != nil {
				return err
			}
			e.Created = fromMilli(createdAt)
			if _, err := tx.ExecContext(ctx, `UPDATE mission_logs SET entry_uid = ?, content = ?, creator_uid = ?, dtg = ?,
				server_time = ?, content_hashes = ?, keywords = ? WHERE id = ?`, e.EntryUID, e.Content, e.CreatorUID,
				unixMilli(e.DTG), unixMilli(now), jsonList(e.ContentHashes), jsonList(e.Keywords), e.ID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM mission_log_missions WHERE log_id = ?`, e.ID); err != nil {
				return err
			}
		}
		for _, m := range ms {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO mission_log_missions(log_id, mission_id) VALUES (?,?)`, e.ID, m.ID); err != nil {
				return err
			}
			entry := e
			if err := recordChange(ctx, tx, m.ID, ChangeAddContent, e.CreatorUID, now, changeBody{LogEntry: &entry}); err != nil {
				return err
			}
			if err := s.budgets.Missions.pruneChanges(ctx, tx, m.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return LogEntry{}, false, err
	}
	return e, created, nil
}

// DeleteLogEntry removes an entry (ErrNotFound when there is none),
// records a REMOVE_CONTENT change in each of its missions, and returns
// what it was.
func (s *Missions) DeleteLogEntry(ctx context.Context, id string) (LogEntry, error) {
	const op = "delete log entry"
	if err := s.check(ctx); err != nil {
		return LogEntry{}, fmt.Errorf("store: %s: %w", op, err)
	}
	var e LogEntry
	err := s.inTxAnySpace(ctx, op, func(tx *sql.Tx) error {
		list, err := queryLogs(ctx, tx, `WHERE l.id = ?`, id)
		if err != nil {
			return err
		}
		if len(list) == 0 {
			return fmt.Errorf("%w: no log entry %q", ErrNotFound, logx.Cut(id, 64))
		}
		e = list[0]
		rows, err := tx.QueryContext(ctx, `SELECT mission_id FROM mission_log_missions WHERE log_id = ?`, id)
		if err != nil {
			return err
		}
		var ids []int64
		for rows.Next() {
			var mid int64
			if err := rows.Scan(&mid); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, mid)
		}
		rows.Close()
		if _, err := tx.ExecContext(ctx, `DELETE FROM mission_logs WHERE id = ?`, id); err != nil {
			return err
		}
		now := time.Now()
		for _, mid := range ids {
			entry := e
			if err := recordChange(ctx, tx, mid, ChangeRemoveContent, e.CreatorUID, now, changeBody{LogEntry: &entry}); err != nil {
				return err
			}
		}
		return s.budgets.Missions.pruneChanges(ctx, tx, ids...)
	})
	return e, err
}

// MissionLogs returns a page of the log entries of a mission (name "": of
// every mission) whose dtg lies in [from, to] (zero: unbounded), oldest
// first, and the cursor of the next (older) page, zero when there is none.
// The page is chosen on the entries' dtg, id and size; only the entries in
// it are read whole.
func (s *Missions) MissionLogs(ctx context.Context, name string, from, to time.Time, p Page) ([]LogEntry, Cursor, error) {
	const op = "mission logs"
	if err := s.check(ctx); err != nil {
		return nil, Cursor{}, fmt.Errorf("store: %s: %w", op, err)
	}
	if err := p.check(); err != nil {
		return nil, Cursor{}, fmt.Errorf("store: %s: %w", op, err)
	}
	lo, hi := window(from, to)
	at, id := p.below()
	where, args := `WHERE l.dtg >= ? AND l.dtg <= ? AND (l.dtg, l.id) < (?, ?)`, []any{lo, hi, at, id}
	if name != "" {
		m, err := s.MissionByName(ctx, name)
		if err != nil {
			return nil, Cursor{}, err
		}
		where += ` AND l.id IN (SELECT log_id FROM mission_log_missions WHERE mission_id = ?)`
		args = append(args, m.ID)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT l.dtg, l.id, octet_length(l.content) FROM mission_logs l `+where+`
		ORDER BY l.dtg DESC, l.id DESC LIMIT ?`, append(args, p.Limit+1)...)
	if err != nil {
		return nil, Cursor{}, s.wrapErr(op, err)
	}
	g := &pager{p: p}
	ids := []string{}
	for rows.Next() {
		var (
			c    Cursor
			size int
		)
		if err := rows.Scan(&c.At, &c.ID, &size); err != nil {
			rows.Close()
			return nil, Cursor{}, s.wrapErr(op, err)
		}
		if !g.take(c, size) {
			break
		}
		ids = append(ids, c.ID)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, Cursor{}, s.wrapErr(op, err)
	}
	if len(ids) == 0 {
		return []LogEntry{}, Cursor{}, nil
	}
	list, err := queryLogs(ctx, s.r, `WHERE l.id IN (SELECT value FROM json_each(?))`, jsonList(ids)) // oldest first
	if err != nil {
		return nil, Cursor{}, s.wrapErr(op, err)
	}
	return list, g.next(), nil
}

func queryLogs(ctx context.Context, q querier, where string, args ...any) ([]LogEntry, error) {
	rows, err := q.QueryContext(ctx, `SELECT l.id, l.entry_uid, l.content, l.creator_uid, l.dtg, l.created_at,
		l.server_time, l.content_hashes, l.keywords,
		COALESCE((SELECT json_group_array(m.name) FROM mission_log_missions lm JOIN missions m ON m.id = lm.mission_id
			WHERE lm.log_id = l.id), '[]')
		FROM mission_logs l `+where+` ORDER BY l.dtg, l.id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []LogEntry{}
	for rows.Next() {
		var (
			e                   LogEntry
			dtg, created, srv   int64
			hashes, kw, mission string
		)
		if err := rows.Scan(&e.ID, &e.EntryUID, &e.Content, &e.CreatorUID, &dtg, &created, &srv, &hashes, &kw, &mission); err != nil {
			return nil, err
		}
		e.DTG, e.Created, e.ServerTime = fromMilli(dtg), fromMilli(created), fromMilli(srv)
		e.ContentHashes, e.Keywords, e.Missions = parseList(hashes), parseList(kw), parseList(mission)
		out = append(out, e)
	}
	return out, rows.Err()
}

// ExternalData is data a mission points to that lives elsewhere (an
// ExCheck checklist, a web page).
type ExternalData struct {
	UID     string `json:"uid"`
	Name    string `json:"name"`
	Tool    string `json:"tool"`
	URLData string `json:"urlData"`
	URLView string `json:"urlView"`
	Notes   string `json:"notes"`
}

func (x *ExternalData) validate() error {
	if err := checkText("uid", x.UID, 1, maxPackageField); err != nil {
		return err
	}
	for _, f := range []struct{ n, v string }{{"name", x.Name}, {"tool", x.Tool}, {"urlData", x.URLData},
		{"urlView", x.URLView}, {"notes", x.Notes}} {
		if err := checkText(f.n, f.v, 0, maxMissionField); err != nil {
			return err
		}
	}
	return nil
}

// PutExternalData adds (or replaces, by uid) external data of a mission
// and records an ADD_CONTENT change holding it.
func (s *Missions) PutExternalData(ctx context.Context, name string, x ExternalData, creator string) (Mission, error) {
	const op = "put external data"
	if err := s.check(ctx); err != nil {
		return Mission{}, fmt.Errorf("store: %s: %w", op, err)
	}
	if err := x.validate(); err != nil {
		return Mission{}, fmt.Errorf("store: %s: %w", op, err)
	}
	var m Mission
	err := s.inTx(ctx, op, func(tx *sql.Tx) error {
		var err error
		if m, err = missionByName(ctx, tx, name); err != nil {
			return err
		}
		if err := mayWrite(ctx, tx, m, creator); err != nil {
			return err
		}
		now := time.Now()
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO mission_external_data(mission_id, uid, name, tool, url_data,
			url_view, notes, creator_uid, added_at) VALUES (?,?,?,?,?,?,?,?,?)`, m.ID, x.UID, x.Name, x.Tool, x.URLData,
			x.URLView, x.Notes, creator, unixMilli(now)); err != nil {
			return err
		}
		if err := recordChange(ctx, tx, m.ID, ChangeAddContent, creator, now, changeBody{ExternalData: &x}); err != nil {
			return err
		}
		return s.budgets.Missions.pruneChanges(ctx, tx, m.ID)
	})
	return m, err
}

// MissionExternalData lists a mission's external data.
func (s *Missions) MissionExternalData(ctx context.Context, missionID int64) ([]ExternalData, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT uid, name, tool, url_data, url_view, notes FROM mission_external_data
		WHERE mission_id = ? ORDER BY added_at, uid`, missionID)
	if err != nil {
		return nil, s.wrapErr("mission external data", err)
	}
	defer rows.Close()
	out := []ExternalData{}
	for rows.Next() {
		var x ExternalData
		if err := rows.Scan(&x.UID, &x.Name, &x.Tool, &x.URLData, &x.URLView, &x.Notes); err != nil {
			return nil, s.wrapErr("mission external data", err)
		}
		out = append(out, x)
	}
	return out, s.wrapErr("mission external data", rows.Err())
}

// LogEntry returns the entry id (ErrNotFound when there is none).
func (s *Missions) LogEntry(ctx context.Context, id string) (LogEntry, error) {
	if err := s.check(ctx); err != nil {
		return LogEntry{}, fmt.Errorf("store: log entry: %w", err)
	}
	list, err := queryLogs(ctx, s.r, `WHERE l.id = ?`, id)
	if err != nil {
		return LogEntry{}, s.wrapErr("log entry", err)
	}
	if len(list) == 0 {
		return LogEntry{}, fmt.Errorf("store: log entry: %w: no log entry %q", ErrNotFound, logx.Cut(id, 64))
	}
	return list[0], nil
}
