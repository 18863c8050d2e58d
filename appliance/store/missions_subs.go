package store

// Mission subscriptions, invitations and the parent/child links, and the
// in-memory list of each mission's subscribed client uids that the relay
// reads for every mission-addressed event (no SQL on that path).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"outpost/appliance/logx"
)

// Subscription is a client's subscription to a mission.
type Subscription struct {
	MissionName string
	ClientUID   string
	Token       string
	Username    string
	Role        string
	Active      bool // false: disconnected (disconnectOnly), data kept
	Created     time.Time
}

// subscriberCache holds the active subscribers of every mission, loaded
// once and refreshed per mission after each committed subscription change.
type subscriberCache struct {
	once sync.Once
	// refresh serialises refreshes (read and store together), so a
	// refresh that read an older state never overwrites a newer one.
	refresh sync.Mutex
	mu      sync.RWMutex
	m       map[string][]string // mission name → client uids (never mutated in place)
}

// MissionSubscribers returns the client uids subscribed to the mission
// (broker.Options.MissionSubscribers). It reads memory only, after the
// first call; the slice must not be modified.
func (s *Missions) MissionSubscribers(name string) []string {
	s.subs.once.Do(func() { s.loadSubscribers() })
	s.subs.mu.RLock()
	defer s.subs.mu.RUnlock()
	return s.subs.m[name]
}

func (s *db) loadSubscribers() {
	m := map[string][]string{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := s.r.QueryContext(ctx, `SELECT m.name, s.client_uid FROM mission_subscriptions s
		JOIN missions m ON m.id = s.mission_id WHERE s.active = 1 ORDER BY m.name, s.created_at, s.client_uid`)
	if err != nil {
		s.log.Error("could not load mission subscribers; mission-addressed events reach no one until the next subscription change", "err", err)
	} else {
		defer rows.Close()
		for rows.Next() {
			var name, uid string
			if rows.Scan(&name, &uid) == nil {
				m[name] = append(m[name], uid)
			}
		}
	}
	s.subs.mu.Lock()
	s.subs.m = m
	s.subs.mu.Unlock()
}

// refreshSubscribers reloads one mission's list after a committed change.
func (s *db) refreshSubscribers(ctx context.Context, name string) {
	s.subs.once.Do(func() { s.loadSubscribers() })
	s.subs.refresh.Lock()
	defer s.subs.refresh.Unlock()
	ctx = context.WithoutCancel(ctx)
	rows, err := s.r.QueryContext(ctx, `SELECT s.client_uid FROM mission_subscriptions s
		JOIN missions m ON m.id = s.mission_id WHERE m.name = ? AND s.active = 1 ORDER BY s.created_at, s.client_uid`, name)
	if err != nil {
		s.log.Error("could not refresh a mission's subscribers", "err", err)
		return
	}
	defer rows.Close()
	var uids []string
	for rows.Next() {
		var u string
		if rows.Scan(&u) == nil {
			uids = append(uids, u)
		}
	}
	s.subs.mu.Lock()
	if len(uids) == 0 {
		delete(s.subs.m, name)
	} else {
		s.subs.m[name] = uids
	}
	s.subs.mu.Unlock()
}

func subscribeTx(ctx context.Context, tx *sql.Tx, m Mission, uid, username, role string, now time.Time) (Subscription, error) {
	sub := Subscription{MissionName: m.Name, ClientUID: uid, Username: username, Role: role, Active: true}
	var created int64
	err := tx.QueryRowContext(ctx, `SELECT token, username, role, created_at FROM mission_subscriptions
		WHERE mission_id = ? AND client_uid = ?`, m.ID, uid).Scan(&sub.Token, &sub.Username, &sub.Role, &created)
	switch {
	case err == nil:
		if username != "" {
			sub.Username = username
		}
		sub.Created = fromMilli(created)
		_, err = tx.ExecContext(ctx, `UPDATE mission_subscriptions SET active = 1, username = ? WHERE mission_id = ? AND client_uid = ?`,
			sub.Username, m.ID, uid)
		return sub, err
	case !errors.Is(err, sql.ErrNoRows):
		return Subscription{}, err
	}
	if sub.Token, err = newToken(); err != nil {
		return Subscription{}, err
	}
	sub.Created = now.UTC().Truncate(time.Millisecond)
	_, err = tx.ExecContext(ctx, `INSERT INTO mission_subscriptions(mission_id, client_uid, token, username, role, active, created_at)
		VALUES (?,?,?,?,?,1,?)`, m.ID, uid, sub.Token, username, role, unixMilli(now))
	return sub, err
}

// Subscribe subscribes the client uid to the mission (again: the same
// token and role, active again). A password-protected mission needs its
// password (ErrBadCredentials otherwise; the check passes the password
// gate, ErrBusy when it has no capacity); its owner needs none.
func (s *Missions) Subscribe(ctx context.Context, name, uid, username, password string) (Subscription, error) {
	const op = "subscribe"
	if err := s.check(ctx); err != nil {
		return Subscription{}, fmt.Errorf("store: %s: %w", op, err)
	}
	if err := checkText("uid", uid, 1, maxPackageField); err != nil {
		return Subscription{}, fmt.Errorf("store: %s: %w", op, err)
	}
	if err := checkText("username", username, 0, maxPackageField); err != nil {
		return Subscription{}, fmt.Errorf("store: %s: %w", op, err)
	}
	m, err := s.MissionByName(ctx, name)
	if err != nil {
		return Subscription{}, err
	}
	if m.PasswordProtected && uid != m.CreatorUID {
		if err := s.checkMissionPassword(ctx, m.ID, password); err != nil {
			return Subscription{}, fmt.Errorf("store: %s: %w", op, err)
		}
	}
	var sub Subscription
	err = s.inTx(ctx, op, func(tx *sql.Tx) error {
		m, err := missionByName(ctx, tx, name)
		if err != nil {
			return err
		}
		role := m.DefaultRole
		if uid == m.CreatorUID {
			role = RoleOwner
		}
		sub, err = subscribeTx(ctx, tx, m, uid, username, role, time.Now())
		return err
	})
	if err != nil {
		return Subscription{}, err
	}
	s.refreshSubscribers(ctx, name)
	return sub, nil
}

// CheckPassword checks the password of the mission name (it passes the
// password gate: ErrBusy when it has no capacity). ErrBadCredentials for a
// wrong one; nil for a mission without a password.
func (s *Missions) CheckPassword(ctx context.Context, name, password string) error {
	m, err := s.MissionByName(ctx, name)
	if err != nil {
		return err
	}
	if !m.PasswordProtected {
		return nil
	}
	if err := s.checkMissionPassword(ctx, m.ID, password); err != nil {
		return fmt.Errorf("store: check mission password: %w", err)
	}
	return nil
}

func (s *db) checkMissionPassword(ctx context.Context, missionID int64, password string) error {
	release, err := s.pwGate.enter(ctx)
	if err != nil {
		return err
	}
	defer release()
	if len(password) > maxMissionPassword {
		burnPasswordWork(password[:maxMissionPassword], s.passwordIter)
		return fmt.Errorf("%w: wrong mission password", ErrBadCredentials)
	}
	var ph string
	if err := s.r.QueryRowContext(ctx, `SELECT password_hash FROM missions WHERE id = ?`, missionID).Scan(&ph); err != nil {
		return err
	}
	ok, err := checkPassword(ph, password)
	if err != nil {
		s.log.Error("a stored mission password hash cannot be read", "mission_id", missionID, "err", err)
		return fmt.Errorf("%w: wrong mission password", ErrBadCredentials)
	}
	if !ok {
		return fmt.Errorf("%w: wrong mission password", ErrBadCredentials)
	}
	return nil
}

// Unsubscribe ends uid's subscription to the mission; with disconnectOnly
// the subscription (token, role) is kept but inactive: the client no
// longer receives the mission's traffic. ErrNotFound when uid is not
// subscribed.
func (s *Missions) Unsubscribe(ctx context.Context, name, uid string, disconnectOnly bool) error {
	const op = "unsubscribe"
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	err := s.inTxAnySpace(ctx, op, func(tx *sql.Tx) error {
		m, err := missionByName(ctx, tx, name)
		if err != nil {
			return err
		}
		q := `DELETE FROM mission_subscriptions WHERE mission_id = ? AND client_uid = ?`
		if disconnectOnly {
			q = `UPDATE mission_subscriptions SET active = 0 WHERE mission_id = ? AND client_uid = ?`
		}
		res, err := tx.ExecContext(ctx, q, m.ID, uid)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: %q is not subscribed to mission %q", ErrNotFound, logx.Cut(uid, 64), logx.Cut(name, 64))
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.refreshSubscribers(ctx, name)
	return nil
}

// Subscriptions lists the active subscriptions of a mission (name ""
// lists those of every mission), oldest first.
func (s *Missions) Subscriptions(ctx context.Context, name string) ([]Subscription, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: subscriptions: %w", err)
	}
	if name != "" {
		if _, err := s.MissionByName(ctx, name); err != nil {
			return nil, err
		}
	}
	rows, err := s.r.QueryContext(ctx, `SELECT m.name, s.client_uid, s.token, s.username, s.role, s.created_at
		FROM mission_subscriptions s JOIN missions m ON m.id = s.mission_id
		WHERE s.active = 1 AND (? = '' OR m.name = ?) ORDER BY m.name, s.created_at, s.client_uid`, name, name)
	if err != nil {
		return nil, s.wrapErr("subscriptions", err)
	}
	defer rows.Close()
	out := []Subscription{}
	for rows.Next() {
		sub := Subscription{Active: true}
		var created int64
		if err := rows.Scan(&sub.MissionName, &sub.ClientUID, &sub.Token, &sub.Username, &sub.Role, &created); err != nil {
			return nil, s.wrapErr("subscriptions", err)
		}
		sub.Created = fromMilli(created)
		out = append(out, sub)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr("subscriptions", err)
	}
	return out, nil
}

// Invitation invites a client (by uid, callsign, user name, group or team)
// to a mission.
type Invitation struct {
	MissionName string
	Type        string
	Invitee     string
	CreatorUID  string
	Role        string
	Token       string
	Created     time.Time
}

// Invite stores an invitation (replacing one to the same invitee) and
// returns it with its token. The inviter needs write access.
func (s *Missions) Invite(ctx context.Context, name string, inv Invitation) (Invitation, error) {
	const op = "invite"
	if err := s.check(ctx); err != nil {
		return Invitation{}, fmt.Errorf("store: %s: %w", op, err)
	}
	for _, f := range []struct{ n, v string }{{"type", inv.Type}, {"invitee", inv.Invitee}} {
		if err := checkText(f.n, f.v, 1, maxPackageField); err != nil {
			return Invitation{}, fmt.Errorf("store: %s: %w", op, err)
		}
	}
	if err := checkText("creatorUid", inv.CreatorUID, 0, maxPackageField); err != nil {
		return Invitation{}, fmt.Errorf("store: %s: %w", op, err)
	}
	if inv.Role != "" && !ValidRole(inv.Role) {
		return Invitation{}, fmt.Errorf("store: %s: %w: role must be %s, %s or %s", op, ErrInvalid, RoleOwner, RoleMember, RoleReadOnly)
	}
	err := s.inTx(ctx, op, func(tx *sql.Tx) error {
		m, err := missionByName(ctx, tx, name)
		if err != nil {
			return err
		}
		if err := mayWrite(ctx, tx, m, inv.CreatorUID); err != nil {
			return err
		}
		if inv.Role == "" {
			inv.Role = m.DefaultRole
		}
		if inv.Token, err = newToken(); err != nil {
			return err
		}
		inv.MissionName = m.Name
		inv.Created = time.Now().UTC().Truncate(time.Millisecond)
		_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO mission_invitations(mission_id, type, invitee, creator_uid, role, token, created_at)
			VALUES (?,?,?,?,?,?,?)`, m.ID, inv.Type, inv.Invitee, inv.CreatorUID, inv.Role, inv.Token, unixMilli(inv.Created))
		return err
	})
	return inv, err
}

// Invitations lists the invitations addressed to any of the invitees
// (a client uid, a user name...), newest first.
func (s *Missions) Invitations(ctx context.Context, invitees ...string) ([]Invitation, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: invitations: %w", err)
	}
	out := []Invitation{}
	seen := map[string]bool{}
	for _, who := range invitees {
		if who == "" || seen[who] {
			continue
		}
		seen[who] = true
		rows, err := s.r.QueryContext(ctx, `SELECT m.name, i.type, i.invitee, i.creator_uid, i.role, i.token, i.created_at
			FROM mission_invitations i JOIN missions m ON m.id = i.mission_id WHERE i.invitee = ? ORDER BY i.created_at DESC`, who)
		if err != nil {
			return nil, s.wrapErr("invitations", err)
		}
		for rows.Next() {
			var (
				inv     Invitation
				created int64
			)
			if err := rows.Scan(&inv.MissionName, &inv.Type, &inv.Invitee, &inv.CreatorUID, &inv.Role, &inv.Token, &created); err != nil {
				rows.Close()
				return nil, s.wrapErr("invitations", err)
			}
			inv.Created = fromMilli(created)
			out = append(out, inv)
		}
		rows.Close()
	}
	return out, nil
}

// SetMissionParent makes parent the parent of child (only child's owner
// may); a link that would make a cycle is ErrInvalid.
func (s *Missions) SetMissionParent(ctx context.Context, child, parent, creator string) error {
	const op = "set mission parent"
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	return s.inTx(ctx, op, func(tx *sql.Tx) error {
		c, err := missionByName(ctx, tx, child)
		if err != nil {
			return err
		}
		p, err := missionByName(ctx, tx, parent)
		if err != nil {
			return err
		}
		if err := mayWrite(ctx, tx, c, creator); err != nil {
			return err
		}
		for id, hops := p.ID, 0; id != 0 && hops < 10000; hops++ {
			if id == c.ID {
				return fmt.Errorf("%w: mission %q cannot be a parent of its own ancestor %q", ErrInvalid, logx.Cut(child, 64), logx.Cut(parent, 64))
			}
			var next sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT parent_id FROM missions WHERE id = ?`, id).Scan(&next); err != nil {
				return err
			}
			id = next.Int64
		}
		_, err = tx.ExecContext(ctx, `UPDATE missions SET parent_id = ? WHERE id = ?`, p.ID, c.ID)
		return err
	})
}

// ClearMissionParent removes child's parent link.
func (s *Missions) ClearMissionParent(ctx context.Context, child, creator string) error {
	const op = "clear mission parent"
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	return s.inTx(ctx, op, func(tx *sql.Tx) error {
		c, err := missionByName(ctx, tx, child)
		if err != nil {
			return err
		}
		if err := mayWrite(ctx, tx, c, creator); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE missions SET parent_id = NULL WHERE id = ?`, c.ID)
		return err
	})
}

// MissionChildren lists the missions whose parent is name.
func (s *Missions) MissionChildren(ctx context.Context, name string) ([]Mission, error) {
	m, err := s.MissionByName(ctx, name)
	if err != nil {
		return nil, err
	}
	return s.missionsWhere(ctx, "mission children", `parent_id = ? ORDER BY name`, m.ID)
}

// MissionParent returns the parent of name (ErrNotFound when it has none).
func (s *Missions) MissionParent(ctx context.Context, name string) (Mission, error) {
	m, err := s.MissionByName(ctx, name)
	if err != nil {
		return Mission{}, err
	}
	ps, err := s.missionsWhere(ctx, "mission parent", `id = ?`, m.ParentID)
	if err != nil {
		return Mission{}, err
	}
	if len(ps) == 0 {
		return Mission{}, fmt.Errorf("store: mission parent: %w: mission %q has no parent", ErrNotFound, logx.Cut(name, 64))
	}
	return ps[0], nil
}
