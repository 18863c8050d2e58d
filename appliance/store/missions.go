package store

// Missions (api.md §4.4): named collections of enterprise sync files, CoT
// uids, log entries and external data (an ExCheck checklist) that clients
// subscribe to. Every change that touches more than one row (the mission
// and its creator's subscription and its change record; contents and their
// change records) commits in one transaction: a change is all there or not
// at all. Every change a client makes is recorded in mission_changes.
//
// Roles: the creator is the mission's owner (MISSION_OWNER); a subscriber
// gets the mission's default role (MISSION_SUBSCRIBER unless the mission
// says otherwise); a client that is not subscribed acts with the default
// role too. Read-only subscribers (MISSION_READONLY_SUBSCRIBER) may not
// change the mission (ErrForbidden); only the owner may change its
// metadata or parent.
//
// Password-protected missions keep a PBKDF2 hash (password.go), checked
// through the password gate on subscribe.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"outpost/appliance/logx"

	"github.com/google/uuid"
)

// Mission roles (the official TAK server's names, which clients parse).
const (
	RoleOwner    = "MISSION_OWNER"
	RoleMember   = "MISSION_SUBSCRIBER"
	RoleReadOnly = "MISSION_READONLY_SUBSCRIBER"
)

// ToolExCheck is the tool of a checklist's mission.
const ToolExCheck = "ExCheck"

// RolePermissions lists a role's permissions.
func RolePermissions(role string) []string {
	switch role {
	case RoleOwner:
		return []string{"MISSION_MANAGE_FEEDS", "MISSION_SET_PASSWORD", "MISSION_WRITE", "MISSION_MANAGE_LAYERS",
			"MISSION_UPDATE_GROUPS", "MISSION_READ", "MISSION_DELETE", "MISSION_SET_ROLE"}
	case RoleMember:
		return []string{"MISSION_WRITE", "MISSION_READ"}
	case RoleReadOnly:
		return []string{"MISSION_READ"}
	}
	return []string{}
}

// ValidRole reports whether role is one of the three mission roles.
func ValidRole(role string) bool {
	return role == RoleOwner || role == RoleMember || role == RoleReadOnly
}

func canWrite(role string) bool { return role == RoleOwner || role == RoleMember }

// Limits of mission fields.
const (
	MaxMissionName      = 255 // bytes
	maxMissionText      = 4096
	maxMissionField     = 1024
	maxMissionList      = 128
	maxMissionPassword  = 256
	MaxMissionBatch     = 1000 // hashes or uids in one contents change
	maxMissionRowsBatch = 4096 // uids in one recorder batch
)

// Mission is a stored mission's metadata.
type Mission struct {
	ID                int64
	Name              string
	GUID              string
	Description       string
	ChatRoom          string
	BaseLayer         string
	BBox              string
	Path              string
	Classification    string
	Tool              string
	Keywords          []string
	Groups            []string
	CreatorUID        string
	DefaultRole       string
	InviteOnly        bool
	PasswordProtected bool
	Expiration        int64
	ParentID          int64 // 0: none
	Created, Updated  time.Time
}

// MissionInput creates or updates a mission. Nil fields keep the stored
// value (or take the default on create).
type MissionInput struct {
	CreatorUID     string
	Description    *string
	ChatRoom       *string
	BaseLayer      *string
	BBox           *string
	Path           *string
	Classification *string
	Tool           *string
	Keywords       *[]string
	Groups         *[]string
	DefaultRole    *string
	InviteOnly     *bool
	Password       *string // "" removes the password
	Expiration     *int64
}

// CheckMissionName checks a mission name: 1 to 255 bytes of UTF-8 without
// control characters.
func CheckMissionName(name string) error { return checkText("mission name", name, 1, MaxMissionName) }

func (in *MissionInput) validate() error {
	if err := checkText("creatorUid", in.CreatorUID, 0, maxMissionField); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    *string
		max  int
	}{{"description", in.Description, maxMissionText}, {"chatRoom", in.ChatRoom, maxMissionField},
		{"baseLayer", in.BaseLayer, maxMissionField}, {"bbox", in.BBox, maxMissionField}, {"path", in.Path, maxMissionField},
		{"classification", in.Classification, maxMissionField}, {"tool", in.Tool, maxMissionField}} {
		if f.v != nil {
			if err := checkText(f.name, *f.v, 0, f.max); err != nil {
				return err
			}
		}
	}
	for _, l := range []struct {
		name string
		v    *[]string
	}{{"keywords", in.Keywords}, {"groups", in.Groups}} {
		if l.v != nil {
			if err := checkList(l.name, *l.v); err != nil {
				return err
			}
		}
	}
	if in.DefaultRole != nil && !ValidRole(*in.DefaultRole) {
		return fmt.Errorf("%w: defaultRole must be %s, %s or %s", ErrInvalid, RoleOwner, RoleMember, RoleReadOnly)
	}
	if in.Password != nil && len(*in.Password) > maxMissionPassword {
		return fmt.Errorf("%w: password must be at most %d bytes", ErrInvalid, maxMissionPassword)
	}
	return nil
}

func checkList(name string, l []string) error {
	if len(l) > maxMissionList {
		return fmt.Errorf("%w: %s holds %d items, at most %d", ErrInvalid, name, len(l), maxMissionList)
	}
	for _, v := range l {
		if err := checkText(name+" item", v, 1, maxKeywordLen); err != nil {
			return err
		}
	}
	return nil
}

func jsonList(l []string) string {
	if l == nil {
		l = []string{}
	}
	b, _ := json.Marshal(l)
	return string(b)
}

func parseList(s string) []string {
	var l []string
	if json.Unmarshal([]byte(s), &l) != nil || l == nil {
		return []string{}
	}
	return l
}

const missionColumns = `id, name, guid, description, chat_room, base_layer, bbox, path, classification, tool,
	keywords, groups, creator_uid, default_role, invite_only, password_hash <> '', expiration, COALESCE(parent_id, 0),
	created_at, updated_at`

func scanMission(sc interface{ Scan(...any) error }) (Mission, error) {
	var (
		m                Mission
		kw, groups       string
		created, updated int64
	)
	if err := sc.Scan(&m.ID, &m.Name, &m.GUID, &m.Description, &m.ChatRoom, &m.BaseLayer, &m.BBox, &m.Path,
		&m.Classification, &m.Tool, &kw, &groups, &m.CreatorUID, &m.DefaultRole, &m.InviteOnly, &m.PasswordProtected,
		&m.Expiration, &m.ParentID, &created, &updated); err != nil {
		return Mission{}, err
	}
	m.Keywords, m.Groups = parseList(kw), parseList(groups)
	m.Created, m.Updated = fromMilli(created), fromMilli(updated)
	return m, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func missionByName(ctx context.Context, q querier, name string) (Mission, error) {
	m, err := scanMission(q.QueryRowContext(ctx, `SELECT `+missionColumns+` FROM missions WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return Mission{}, fmt.Errorf("%w: no mission named %q", ErrNotFound, logx.Cut(name, 64))
	}
	return m, err
}

// roleOf is the role uid acts with in mission m: its subscription's, or
// the mission's default role.
func roleOf(ctx context.Context, q querier, m Mission, uid string) (string, error) {
	if uid != "" {
		var role string
		err := q.QueryRowContext(ctx, `SELECT role FROM mission_subscriptions WHERE mission_id = ? AND client_uid = ?`, m.ID, uid).Scan(&role)
		if err == nil {
			return role, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return "", err
		}
		if uid == m.CreatorUID {
			return RoleOwner, nil
		}
	}
	return m.DefaultRole, nil
}

// mayWrite returns ErrForbidden unless uid may change m's contents.
func mayWrite(ctx context.Context, q querier, m Mission, uid string) error {
	if federateOf(ctx) != "" {
		return nil // a federate's change (missions_federated.go)
	}
	role, err := roleOf(ctx, q, m, uid)
	if err != nil {
		return err
	}
	if !canWrite(role) {
		return fmt.Errorf("%w: %q is %s of mission %q and may not change it", ErrForbidden, logx.Cut(uid, 64), role, logx.Cut(m.Name, 64))
	}
	return nil
}

// PutMission creates the mission name or, when it exists, updates the
// fields in gives (only its owner may). A new mission's creator is
// subscribed as its owner; the creation is recorded as a CREATE_MISSION
// change. It returns the mission, whether it was created, and the
// creator's subscription (empty token when there is no creator).
func (s *Missions) PutMission(ctx context.Context, name string, in MissionInput) (Mission, bool, Subscription, error) {
	const op = "put mission"
	if err := s.check(ctx); err != nil {
		return Mission{}, false, Subscription{}, fmt.Errorf("store: %s: %w", op, err)
	}
	if err := CheckMissionName(name); err != nil {
		return Mission{}, false, Subscription{}, fmt.Errorf("store: %s: %w", op, err)
	}
	if err := in.validate(); err != nil {
		return Mission{}, false, Subscription{}, fmt.Errorf("store: %s: %w", op, err)
	}
	hash, err := s.missionPasswordHash(ctx, in.Password)
	if err != nil {
		return Mission{}, false, Subscription{}, fmt.Errorf("store: %s: %w", op, err)
	}
	var (
		m       Mission
		created bool
		sub     Subscription
	)
	err = s.inTx(ctx, op, func(tx *sql.Tx) error {
		existing, err := missionByName(ctx, tx, name)
		switch {
		case errors.Is(err, ErrNotFound):
			created = true
			m, sub, err = createMissionTx(ctx, tx, name, in, hash, time.Now())
			return err
		case err != nil:
			return err
		}
		role, err := roleOf(ctx, tx, existing, in.CreatorUID)
		if err != nil {
			return err
		}
		if role != RoleOwner {
			return fmt.Errorf("%w: only the owner may change mission %q", ErrForbidden, logx.Cut(name, 64))
		}
		m, err = updateMissionTx(ctx, tx, existing, in, hash)
		return err
	})
	if err != nil {
		return Mission{}, false, Subscription{}, err
	}
	if created {
		s.refreshSubscribers(ctx, name)
	}
	return m, created, sub, nil
}

// missionPasswordHash hashes a new password through the password gate
// (hashing is as slow as checking); nil for none given, "" to remove.
func (s *db) missionPasswordHash(ctx context.Context, pw *string) (*string, error) {
	if pw == nil {
		return nil, nil
	}
	if *pw == "" {
		empty := ""
		return &empty, nil
	}
	release, err := s.pwGate.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	h, err := hashPassword(*pw, s.passwordIter)
	if err != nil {
		return nil, err
	}
	return &h, nil
}

func str(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

func createMissionTx(ctx context.Context, tx *sql.Tx, name string, in MissionInput, hash *string, now time.Time) (Mission, Subscription, error) {
	guid := uuid.NewString()
	kw, groups := []string{}, []string{}
	if in.Keywords != nil {
		kw = *in.Keywords
	}
	if in.Groups != nil {
		groups = *in.Groups
	}
	inviteOnly, expiration := false, int64(-1)
	if in.InviteOnly != nil {
		inviteOnly = *in.InviteOnly
	}
	if in.Expiration != nil {
		expiration = *in.Expiration
	}
	at := unixMilli(now)
	res, err := tx.ExecContext(ctx, `INSERT INTO missions(name, guid, description, chat_room, base_layer, bbox, path,
		classification, tool, keywords, groups, creator_uid, default_role, invite_only, password_hash, expiration,
		created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		name, guid, str(in.Description, ""), str(in.ChatRoom, ""), str(in.BaseLayer, ""), str(in.BBox, ""), str(in.Path, ""),
		str(in.Classification, ""), str(in.Tool, ToolPublic), jsonList(kw), jsonList(groups), in.CreatorUID,
		str(in.DefaultRole, RoleMember), inviteOnly, str(hash, ""), expiration, at, at)
	if isUniqueViolation(err) {
		return Mission{}, Subscription{}, fmt.Errorf("%w: mission %q exists", ErrConflict, logx.Cut(name, 64))
	}
	if err != nil {
		return Mission{}, Subscription{}, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return Mission{}, Subscription{}, err
	}
	m, err := scanMission(tx.QueryRowContext(ctx, `SELECT `+missionColumns+` FROM missions WHERE id = ?`, id))
	if err != nil {
		return Mission{}, Subscription{}, err
	}
	var sub Subscription
	if in.CreatorUID != "" {
		if sub, err = subscribeTx(ctx, tx, m, in.CreatorUID, "", RoleOwner, now); err != nil {
			return Mission{}, Subscription{}, err
		}
	}
	return m, sub, recordChange(ctx, tx, m.ID, ChangeCreateMission, in.CreatorUID, now, changeBody{})
}

func updateMissionTx(ctx context.Context, tx *sql.Tx, m Mission, in MissionInput, hash *string) (Mission, error) {
	set := func(p *string, dst *string) {
		if p != nil {
			*dst = *p
		}
	}
	set(in.Description, &m.Description)
	set(in.ChatRoom, &m.ChatRoom)
	set(in.BaseLayer, &m.BaseLayer)
	set(in.BBox, &m.BBox)
	set(in.Path, &m.Path)
	set(in.Classification, &m.Classification)
	set(in.Tool, &m.Tool)
	set(in.DefaultRole, &m.DefaultRole)
	if in.Keywords != nil {
		m.Keywords = *in.Keywords
	}
	if in.Groups != nil {
		m.Groups = *in.Groups
	}
	if in.InviteOnly != nil {
		m.InviteOnly = *in.InviteOnly
	}
	if in.Expiration != nil {
		m.Expiration = *in.Expiration
	}
	m.Updated = time.Now().UTC().Truncate(time.Millisecond)
	if _, err := tx.ExecContext(ctx, `UPDATE missions SET description = ?, chat_room = ?, base_layer = ?, bbox = ?,
		path = ?, classification = ?, tool = ?, keywords = ?, groups = ?, default_role = ?, invite_only = ?,
		expiration = ?, updated_at = ? WHERE id = ?`, m.Description, m.ChatRoom, m.BaseLayer, m.BBox, m.Path,
		m.Classification, m.Tool, jsonList(m.Keywords), jsonList(m.Groups), m.DefaultRole, m.InviteOnly, m.Expiration,
		unixMilli(m.Updated), m.ID); err != nil {
		return Mission{}, err
	}
	if hash != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE missions SET password_hash = ? WHERE id = ?`, *hash, m.ID); err != nil {
			return Mission{}, err
		}
		m.PasswordProtected = *hash != ""
	}
	return m, nil
}

// MissionByName returns the mission's metadata.
func (s *Missions) MissionByName(ctx context.Context, name string) (Mission, error) {
	if err := s.check(ctx); err != nil {
		return Mission{}, fmt.Errorf("store: mission: %w", err)
	}
	m, err := missionByName(ctx, s.r, name)
	if err != nil {
		if isSentinel(err) {
			return Mission{}, fmt.Errorf("store: mission: %w", err)
		}
		return Mission{}, s.wrapErr("mission", err)
	}
	return m, nil
}

// Missions lists at most limit missions by name, those after the name
// after ("": from the first); with tool set, only that tool's. more says
// missions after the last listed remain.
func (s *Missions) Missions(ctx context.Context, tool, after string, limit int) (list []Mission, more bool, err error) {
	const op = "list missions"
	if limit <= 0 {
		return nil, false, fmt.Errorf("store: %s: %w: limit must be positive", op, ErrInvalid)
	}
	list, err = s.missionsWhere(ctx, op, `(? = '' OR tool = ?) AND name > ? ORDER BY name LIMIT ?`, tool, tool, after, limit+1)
	if err != nil {
		return nil, false, err
	}
	list, more = firstOf(list, limit)
	return list, more, nil
}

func (s *db) missionsWhere(ctx context.Context, op, where string, args ...any) ([]Mission, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: %s: %w", op, err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+missionColumns+` FROM missions WHERE `+where, args...)
	if err != nil {
		return nil, s.wrapErr(op, err)
	}
	defer rows.Close()
	out := []Mission{}
	for rows.Next() {
		m, err := scanMission(rows)
		if err != nil {
			return nil, s.wrapErr(op, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr(op, err)
	}
	return out, nil
}
