package store

// Mission contents (enterprise sync files by hash, CoT uids), the CoT list
// of a mission and its change history.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/logx"
)

// Change types of the mission change history (the official TAK server's
// names, which clients parse).
const (
	ChangeCreateMission = "CREATE_MISSION"
	ChangeAddContent    = "ADD_CONTENT"
	ChangeRemoveContent = "REMOVE_CONTENT"
)

// ContentResource is an enterprise sync file as a mission shows it.
type ContentResource struct {
	UID            string   `json:"uid"`
	Name           string   `json:"name"`
	Filename       string   `json:"filename"`
	Keywords       []string `json:"keywords"`
	MIMEType       string   `json:"mimeType"`
	Hash           string   `json:"hash"`
	Size           int64    `json:"size"`
	SubmissionTime string   `json:"submissionTime"`
	Submitter      string   `json:"submitter"`
	CreatorUID     string   `json:"creatorUid"`
	Tool           string   `json:"tool"`
	Expiration     int64    `json:"expiration"`
}

// UIDDetails describe a CoT uid in a mission, from its latest event.
type UIDDetails struct {
	Type        string      `json:"type"`
	Callsign    string      `json:"callsign"`
	IconsetPath string      `json:"iconsetPath"`
	Location    UIDLocation `json:"location"`
}

// UIDLocation is the latest position of a uid.
type UIDLocation struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
}

// MissionContent is a file in a mission.
type MissionContent struct {
	Data       ContentResource
	CreatorUID string
	Added      time.Time
}

// MissionUID is a CoT uid in a mission.
type MissionUID struct {
	UID        string
	CreatorUID string
	Added      time.Time
	Details    *UIDDetails // nil when the history holds no event of it
}

// changeBody is what a change record holds besides its type, mission,
// time and creator.
type changeBody struct {
	ContentResource *ContentResource `json:"contentResource,omitempty"`
	ContentUID      string           `json:"contentUid,omitempty"`
	Details         *UIDDetails      `json:"details,omitempty"`
	ExternalData    *ExternalData    `json:"externalData,omitempty"`
	LogEntry        *LogEntry        `json:"logEntry,omitempty"`
	// Federate: the federate the change came from ("" made here;
	// missions_federated.go).
	Federate string `json:"federate,omitempty"`
}

// MissionChange is one record of a mission's change history.
type MissionChange struct {
	ID          int64
	Type        string
	MissionName string
	MissionGUID string
	CreatorUID  string
	At          time.Time
	changeBody
}

func recordChange(ctx context.Context, tx *sql.Tx, missionID int64, typ, creator string, at time.Time, body changeBody) error {
	body.Federate = federateOf(ctx)
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO mission_changes(mission_id, type, creator_uid, at, body) VALUES (?,?,?,?,?)`,
		missionID, typ, creator, unixMilli(at), string(b))
	return err
}

// ContentResourceOf is the resource record of a package (a mission's
// content, an item of /Marti/api/sync/search).
func ContentResourceOf(p DataPackage) ContentResource {
	return ContentResource{UID: p.UID, Name: p.Name, Filename: p.Name, Keywords: SyncKeywords(p), MIMEType: p.MIMEType,
		Hash: p.Hash, Size: p.Size, SubmissionTime: cot.FormatTime(p.SubmittedAt), Submitter: p.SubmissionUser,
		CreatorUID: p.CreatorUID, Tool: p.Tool, Expiration: -1}
}

// ContentChange is what AddMissionContents added: a file or a uid.
type ContentChange struct {
	Content *ContentResource
	UID     string
	Details *UIDDetails
}

// AddMissionContents adds files (by hash) and CoT uids to the mission in
// one transaction, recording an ADD_CONTENT change for each one that was
// not there yet, and returns those. Errors: ErrNotFound (the mission or a
// hash; nothing added), ErrForbidden, ErrInvalid.
func (s *Missions) AddMissionContents(ctx context.Context, name string, hashes, uids []string, creator string) ([]ContentChange, error) {
	const op = "add mission contents"
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: %s: %w", op, err)
	}
	if len(hashes)+len(uids) > MaxMissionBatch {
		return nil, fmt.Errorf("store: %s: %w: at most %d hashes and uids at once", op, ErrInvalid, MaxMissionBatch)
	}
	for _, u := range uids {
		if err := checkText("uids item", u, 1, maxPackageField); err != nil {
			return nil, fmt.Errorf("store: %s: %w", op, err)
		}
	}
	var added []ContentChange
	now := time.Now()
	err := s.inTx(ctx, op, func(tx *sql.Tx) error {
		m, err := missionByName(ctx, tx, name)
		if err != nil {
			return err
		}
		if err := mayWrite(ctx, tx, m, creator); err != nil {
			return err
		}
		room, err := s.budgets.Missions.contentRoom(ctx, tx, m)
		if err != nil {
			return err
		}
		for _, h := range hashes {
			p, err := scanPackage(tx.QueryRowContext(ctx, `SELECT `+packageColumns+` FROM data_packages WHERE hash = ?`, strings.ToLower(h)))
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: no file with hash %q", ErrNotFound, logx.Cut(h, 64))
			}
			if err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO mission_contents(mission_id, package_id, creator_uid, added_at)
				VALUES (?,?,?,?)`, m.ID, p.PrimaryKey, creator, unixMilli(now))
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				continue
			}
			if err := room.add(); err != nil {
				return err
			}
			cr := ContentResourceOf(p)
			if err := recordChange(ctx, tx, m.ID, ChangeAddContent, creator, now, changeBody{ContentResource: &cr}); err != nil {
				return err
			}
			added = append(added, ContentChange{Content: &cr})
		}
		for _, u := range uids {
			c, ok, err := addUIDTx(ctx, tx, m.ID, u, creator, now)
			if err != nil {
				return err
			}
			if ok {
				if err := room.add(); err != nil {
					return err
				}
				added = append(added, c)
			}
		}
		return s.budgets.Missions.pruneChanges(ctx, tx, m.ID)
	})
	if err != nil {
		return nil, err
	}
	return added, nil
}

// addUIDTx adds uid to the mission and records the change; ok false when
// it was there already.
func addUIDTx(ctx context.Context, tx *sql.Tx, missionID int64, uid, creator string, now time.Time) (ContentChange, bool, error) {
	res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO mission_uids(mission_id, uid, creator_uid, added_at) VALUES (?,?,?,?)`,
		missionID, uid, creator, unixMilli(now))
	if err != nil {
		return ContentChange{}, false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ContentChange{}, false, nil
	}
	d, err := uidDetails(ctx, tx, uid)
	if err != nil {
		return ContentChange{}, false, err
	}
	if err := recordChange(ctx, tx, missionID, ChangeAddContent, creator, now, changeBody{ContentUID: uid, Details: d}); err != nil {
		return ContentChange{}, false, err
	}
	return ContentChange{UID: uid, Details: d}, true, nil
}

func uidDetails(ctx context.Context, q querier, uid string) (*UIDDetails, error) {
	var d UIDDetails
	err := q.QueryRowContext(ctx, `SELECT type, callsign, lat, lon FROM cot_latest WHERE uid = ?`, uid).
		Scan(&d.Type, &d.Callsign, &d.Location.Lat, &d.Location.Lon)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// UIDRecord asks RecordMissionUIDs to add a uid to a mission.
type UIDRecord struct {
	Mission, UID, CreatorUID string
}

// RecordMissionUIDs adds the uids of events clients sent to missions
// (<marti><dest mission>) in one transaction. Missions that do not exist
// or are full (MissionBudgets.Contents) and uids already there are
// skipped; roles are not checked (the event was relayed to the mission
// already). It returns the number added.
func (s *Missions) RecordMissionUIDs(ctx context.Context, recs []UIDRecord) (int, error) {
	const op = "record mission uids"
	if err := s.check(ctx); err != nil {
		return 0, fmt.Errorf("store: %s: %w", op, err)
	}
	if len(recs) > maxMissionRowsBatch {
		recs = recs[:maxMissionRowsBatch]
	}
	n := 0
	now := time.Now()
	err := s.inTx(ctx, op, func(tx *sql.Tx) error {
		rooms := map[string]*contentRoom{} // nil: no such mission
		ids := map[string]int64{}
		for _, r := range recs {
			room, seen := rooms[r.Mission]
			if !seen {
				m, err := missionByName(ctx, tx, r.Mission)
				switch {
				case errors.Is(err, ErrNotFound):
				case err != nil:
					return err
				default:
					if room, err = s.budgets.Missions.contentRoom(ctx, tx, m); err != nil {
						return err
					}
					ids[r.Mission] = m.ID
				}
				rooms[r.Mission] = room
			}
			if room == nil || room.full() || checkText("uid", r.UID, 1, maxPackageField) != nil {
				continue
			}
			_, ok, err := addUIDTx(ctx, tx, ids[r.Mission], r.UID, r.CreatorUID, now)
			if err != nil {
				return err
			}
			if ok {
				room.n++
				n++
			}
		}
		for _, id := range ids {
			if err := s.budgets.Missions.pruneChanges(ctx, tx, id); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// RemoveMissionContent removes a file (hash) or a CoT uid from the mission
// and records a REMOVE_CONTENT change. ErrNotFound when the mission does
// not hold it.
func (s *Missions) RemoveMissionContent(ctx context.Context, name, hash, uid, creator string) (ContentChange, error) {
	const op = "remove mission content"
	if err := s.check(ctx); err != nil {
		return ContentChange{}, fmt.Errorf("store: %s: %w", op, err)
	}
	var out ContentChange
	now := time.Now()
	err := s.inTxAnySpace(ctx, op, func(tx *sql.Tx) error {
		m, err := missionByName(ctx, tx, name)
		if err != nil {
			return err
		}
		if err := mayWrite(ctx, tx, m, creator); err != nil {
			return err
		}
		if out, err = removeContentTx(ctx, tx, m, hash, uid, creator, now); err != nil {
			return err
		}
		return s.budgets.Missions.pruneChanges(ctx, tx, m.ID)
	})
	return out, err
}

// removeContentTx removes a file (hash) or a CoT uid from mission m and
// records a REMOVE_CONTENT change (the caller prunes the history).
// ErrNotFound when m does not hold it.
func removeContentTx(ctx context.Context, tx *sql.Tx, m Mission, hash, uid, creator string, now time.Time) (ContentChange, error) {
	var out ContentChange
	name := m.Name
	if hash != "" {
		p, err := scanPackage(tx.QueryRowContext(ctx, `SELECT `+prefixed("d.", packageColumns)+` FROM data_packages d
			JOIN mission_contents c ON c.package_id = d.id WHERE c.mission_id = ? AND d.hash = ?`, m.ID, strings.ToLower(hash)))
		if errors.Is(err, sql.ErrNoRows) {
			return out, fmt.Errorf("%w: mission %q holds no file with hash %q", ErrNotFound, logx.Cut(name, 64), logx.Cut(hash, 64))
		}
		if err != nil {
			return out, err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM mission_contents WHERE mission_id = ? AND package_id = ?`, m.ID, p.PrimaryKey); err != nil {
			return out, err
		}
		cr := ContentResourceOf(p)
		out.Content = &cr
		return out, recordChange(ctx, tx, m.ID, ChangeRemoveContent, creator, now, changeBody{ContentResource: &cr})
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM mission_uids WHERE mission_id = ? AND uid = ?`, m.ID, uid)
	if err != nil {
		return out, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return out, fmt.Errorf("%w: mission %q holds no uid %q", ErrNotFound, logx.Cut(name, 64), logx.Cut(uid, 64))
	}
	d, err := uidDetails(ctx, tx, uid)
	if err != nil {
		return out, err
	}
	out.UID, out.Details = uid, d
	return out, recordChange(ctx, tx, m.ID, ChangeRemoveContent, creator, now, changeBody{ContentUID: uid, Details: d})
}

// MissionContents returns the files of a mission, oldest first.
func (s *Missions) MissionContents(ctx context.Context, missionID int64) ([]MissionContent, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+prefixed("d.", packageColumns)+`, c.creator_uid, c.added_at
		FROM mission_contents c JOIN data_packages d ON d.id = c.package_id WHERE c.mission_id = ? ORDER BY c.added_at, d.id`, missionID)
	if err != nil {
		return nil, s.wrapErr("mission contents", err)
	}
	defer rows.Close()
	out := []MissionContent{}
	for rows.Next() {
		var (
			c     MissionContent
			added int64
		)
		p, err := scanPackage(rows, &c.CreatorUID, &added)
		if err != nil {
			return nil, s.wrapErr("mission contents", err)
		}
		c.Data, c.Added = ContentResourceOf(p), fromMilli(added)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr("mission contents", err)
	}
	return out, nil
}

func prefixed(prefix, columns string) string {
	parts := strings.Split(columns, ",")
	for i, p := range parts {
		parts[i] = prefix + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// MissionUIDs returns the CoT uids of a mission with the details of their
// latest events, oldest first.
func (s *Missions) MissionUIDs(ctx context.Context, missionID int64) ([]MissionUID, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT u.uid, u.creator_uid, u.added_at, l.type, l.callsign, l.lat, l.lon
		FROM mission_uids u LEFT JOIN cot_latest l ON l.uid = u.uid WHERE u.mission_id = ? ORDER BY u.added_at, u.uid`, missionID)
	if err != nil {
		return nil, s.wrapErr("mission uids", err)
	}
	defer rows.Close()
	out := []MissionUID{}
	for rows.Next() {
		var (
			u             MissionUID
			added         int64
			typ, callsign sql.NullString
			lat, lon      sql.NullFloat64
		)
		if err := rows.Scan(&u.UID, &u.CreatorUID, &added, &typ, &callsign, &lat, &lon); err != nil {
			return nil, s.wrapErr("mission uids", err)
		}
		u.Added = fromMilli(added)
		if typ.Valid {
			u.Details = &UIDDetails{Type: typ.String, Callsign: callsign.String, Location: UIDLocation{Lat: lat.Float64, Lon: lon.Float64}}
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr("mission uids", err)
	}
	return out, nil
}

// MissionCoT returns the latest stored event of every uid of the mission,
// in uid order.
func (s *Missions) MissionCoT(ctx context.Context, name string) ([]StoredEvent, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: mission cot: %w", err)
	}
	m, err := s.MissionByName(ctx, name)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+eventColumns+` FROM mission_uids u
		JOIN cot_latest l ON l.uid = u.uid JOIN cot_events e ON e.id = l.event_id WHERE u.mission_id = ? ORDER BY u.uid`, m.ID)
	if err != nil {
		return nil, s.wrapErr("mission cot", err)
	}
	defer rows.Close()
	out := []StoredEvent{}
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, s.wrapErr("mission cot", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr("mission cot", err)
	}
	return out, nil
}

// MissionChanges returns a page of the mission's change history in [from,
// to] (zero: unbounded), oldest first, and the cursor of the next (older)
// page, zero when there is none. The records are read newest first along
// the index, and reading stops at the page's bounds.
func (s *Missions) MissionChanges(ctx context.Context, name string, from, to time.Time, p Page) ([]MissionChange, Cursor, error) {
	const op = "mission changes"
	if err := s.check(ctx); err != nil {
		return nil, Cursor{}, fmt.Errorf("store: %s: %w", op, err)
	}
	if err := p.check(); err != nil {
		return nil, Cursor{}, fmt.Errorf("store: %s: %w", op, err)
	}
	at, before, err := p.belowID("a change history") // change ids are integers
	if err != nil {
		return nil, Cursor{}, fmt.Errorf("store: %s: %w", op, err)
	}
	m, err := s.MissionByName(ctx, name)
	if err != nil {
		return nil, Cursor{}, err
	}
	lo, hi := window(from, to)
	g := &pager{p: p}
	list, err := s.queryChanges(ctx, op, m, g, `WHERE mission_id = ? AND at >= ? AND at <= ? AND (at, id) < (?, ?)
		ORDER BY at DESC, id DESC LIMIT ?`, m.ID, lo, hi, at, before, p.Limit+1)
	if err != nil {
		return nil, Cursor{}, err
	}
	slices.Reverse(list)
	return list, g.next(), nil
}

// queryChanges reads m's change records selected by where (the rest of the
// query after FROM mission_changes) and its arguments; with a pager, only
// those it takes.
func (s *db) queryChanges(ctx context.Context, op string, m Mission, g *pager, where string, args ...any) ([]MissionChange, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, type, creator_uid, at, body FROM mission_changes `+where, args...)
	if err != nil {
		return nil, s.wrapErr(op, err)
	}
	defer rows.Close()
	out := []MissionChange{}
	for rows.Next() {
		var (
			c    MissionChange
			at   int64
			body string
		)
		if err := rows.Scan(&c.ID, &c.Type, &c.CreatorUID, &at, &body); err != nil {
			return nil, s.wrapErr(op, err)
		}
		if g != nil && !g.take(Cursor{At: at, ID: strconv.FormatInt(c.ID, 10)}, len(body)) {
			break
		}
		if err := json.Unmarshal([]byte(body), &c.changeBody); err != nil {
			return nil, s.wrapErr(op, fmt.Errorf("change %d: %w", c.ID, err))
		}
		if cr := c.ContentResource; cr != nil {
			// Recorded before names were reduced (architecture.md "File names").
			if cr.Name == cr.Filename {
				cr.Name = logx.FileName(cr.Name, "")
			}
			cr.Filename = logx.FileName(cr.Filename, "")
		}
		c.At, c.MissionName, c.MissionGUID = fromMilli(at), m.Name, m.GUID
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr(op, err)
	}
	return out, nil
}
