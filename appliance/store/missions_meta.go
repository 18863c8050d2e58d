package store

// A mission's own settings after creation (keywords, password, expiration,
// its subscribers' roles), its lookup by guid, and its deletion. Every
// change checks the acting uid's role inside the transaction that makes it
// (roleOf): keywords want a role that may write, the rest the owner.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"outpost/appliance/logx"

	"github.com/google/uuid"
)

// MissionByGUID returns the mission whose guid is guid (ErrInvalid for a
// string that is no UUID, ErrNotFound for an unknown one).
func (s *Missions) MissionByGUID(ctx context.Context, guid string) (Mission, error) {
	const op = "mission by guid"
	if err := s.check(ctx); err != nil {
		return Mission{}, fmt.Errorf("store: %s: %w", op, err)
	}
	u, err := uuid.Parse(guid)
	if err != nil || len(guid) > 38 {
		return Mission{}, fmt.Errorf("store: %s: %w: guid must be a UUID", op, ErrInvalid)
	}
	m, err := scanMission(s.r.QueryRowContext(ctx, `SELECT `+missionColumns+` FROM missions WHERE guid = ?`, u.String()))
	if errors.Is(err, sql.ErrNoRows) {
		return Mission{}, fmt.Errorf("store: %s: %w: no mission with guid %s", op, ErrNotFound, u.String())
	}
	if err != nil {
		return Mission{}, s.wrapErr(op, err)
	}
	return m, nil
}

// MissionRole is the role uid acts with in the mission: its subscription's,
// the owner's for its creator, else the mission's default role ("" uid:
// the default role).
func (s *Missions) MissionRole(ctx context.Context, name, uid string) (string, error) {
	m, err := s.MissionByName(ctx, name)
	if err != nil {
		return "", err
	}
	role, err := roleOf(ctx, s.r, m, uid)
	if err != nil {
		return "", s.wrapErr("mission role", err)
	}
	return role, nil
}

// Subscription returns uid's active subscription to the mission
// (ErrNotFound when it has none).
func (s *Missions) Subscription(ctx context.Context, name, uid string) (Subscription, error) {
	subs, err := s.Subscriptions(ctx, name)
	if err != nil {
		return Subscription{}, err
	}
	for _, sub := range subs {
		if sub.ClientUID == uid {
			return sub, nil
		}
	}
	return Subscription{}, fmt.Errorf("store: subscription: %w: %q is not subscribed to mission %q", ErrNotFound, logx.Cut(uid, 64), logx.Cut(name, 64))
}

// mayOwn returns ErrForbidden unless uid owns m.
func mayOwn(ctx context.Context, q querier, m Mission, uid, what string) error {
	if federateOf(ctx) != "" {
		return nil // a federate's change (missions_federated.go)
	}
	role, err := roleOf(ctx, q, m, uid)
	if err != nil {
		return err
	}
	if role != RoleOwner {
		return fmt.Errorf("%w: only the owner of mission %q may %s", ErrForbidden, logx.Cut(m.Name, 64), what)
	}
	return nil
}

// changeMission runs fn on mission name within one transaction after the
// role check (owner: only the owner may; otherwise a role that may write),
// stamps the mission edited and returns it as it is then.
func (s *Missions) changeMission(ctx context.Context, op, name, by string, owner bool, fn func(tx *sql.Tx, m *Mission) error) (Mission, error) {
	if err := s.check(ctx); err != nil {
		return Mission{}, fmt.Errorf("store: %s: %w", op, err)
	}
	var out Mission
	err := s.inTx(ctx, op, func(tx *sql.Tx) error {
		m, err := missionByName(ctx, tx, name)
		if err != nil {
			return err
		}
		if owner {
			err = mayOwn(ctx, tx, m, by, op)
		} else {
			err = mayWrite(ctx, tx, m, by)
		}
		if err != nil {
			return err
		}
		if err := fn(tx, &m); err != nil {
			return err
		}
		m.Updated = time.Now().UTC().Truncate(time.Millisecond)
		if _, err := tx.ExecContext(ctx, `UPDATE missions SET updated_at = ? WHERE id = ?`, unixMilli(m.Updated), m.ID); err != nil {
			return err
		}
		out = m
		return nil
	})
	return out, err
}

// SetMissionKeywords replaces the mission's keywords (by must be allowed to
// write to it); duplicates are kept once.
func (s *Missions) SetMissionKeywords(ctx context.Context, name, by string, keywords []string) (Mission, error) {
	const op = "set mission keywords"
	if err := checkList("keywords", keywords); err != nil {
		return Mission{}, fmt.Errorf("store: %s: %w", op, err)
	}
	kw := dedupeKeywords(keywords)
	return s.changeMission(ctx, op, name, by, false, func(tx *sql.Tx, m *Mission) error {
		m.Keywords = kw
		_, err := tx.ExecContext(ctx, `UPDATE missions SET keywords = ? WHERE id = ?`, jsonList(kw), m.ID)
		return err
	})
}

// RemoveMissionKeyword removes one keyword (ErrNotFound when the mission
// does not have it).
func (s *Missions) RemoveMissionKeyword(ctx context.Context, name, by, keyword string) (Mission, error) {
	const op = "remove mission keyword"
	return s.changeMission(ctx, op, name, by, false, func(tx *sql.Tx, m *Mission) error {
		kept := make([]string, 0, len(m.Keywords))
		for _, k := range m.Keywords {
			if k != keyword {
				kept = append(kept, k)
			}
		}
		if len(kept) == len(m.Keywords) {
			return fmt.Errorf("%w: mission %q has no keyword %q", ErrNotFound, logx.Cut(name, 64), logx.Cut(keyword, 64))
		}
		m.Keywords = kept
		_, err := tx.ExecContext(ctx, `UPDATE missions SET keywords = ? WHERE id = ?`, jsonList(kept), m.ID)
		return err
	})
}

// SetMissionPassword sets (or, with "", removes) the mission's password;
// only its owner may. The hash is made before the transaction, through the
// password gate.
func (s *Missions) SetMissionPassword(ctx context.Context, name, by, password string) (Mission, error) {
	const op = "set mission password"
	if len(password) > maxMissionPassword {
		return Mission{}, fmt.Errorf("store: %s: %w: password must be at most %d bytes", op, ErrInvalid, maxMissionPassword)
	}
	if err := s.check(ctx); err != nil {
		return Mission{}, fmt.Errorf("store: %s: %w", op, err)
	}
	// The owner check runs again in the transaction; this one spares a
	// refused caller the slow hash.
	if role, err := s.MissionRole(ctx, name, by); err != nil {
		return Mission{}, err
	} else if role != RoleOwner {
		return Mission{}, fmt.Errorf("store: %s: %w: only the owner of mission %q may set its password", op, ErrForbidden, logx.Cut(name, 64))
	}
	hash, err := s.missionPasswordHash(ctx, &password)
	if err != nil {
		return Mission{}, fmt.Errorf("store: %s: %w", op, err)
	}
	return s.changeMission(ctx, op, name, by, true, func(tx *sql.Tx, m *Mission) error {
		m.PasswordProtected = *hash != ""
		_, err := tx.ExecContext(ctx, `UPDATE missions SET password_hash = ? WHERE id = ?`, *hash, m.ID)
		return err
	})
}

// SetMissionExpiration sets when the mission expires (unix seconds; -1:
// never); only its owner may.
func (s *Missions) SetMissionExpiration(ctx context.Context, name, by string, expiration int64) (Mission, error) {
	const op = "set mission expiration"
	if expiration < -1 {
		return Mission{}, fmt.Errorf("store: %s: %w: expiration must be -1 (never) or a time", op, ErrInvalid)
	}
	return s.changeMission(ctx, op, name, by, true, func(tx *sql.Tx, m *Mission) error {
		m.Expiration = expiration
		_, err := tx.ExecContext(ctx, `UPDATE missions SET expiration = ? WHERE id = ?`, expiration, m.ID)
		return err
	})
}

// SetSubscriptionRole gives uid's subscription to the mission another
// role; only the owner may, and the mission keeps at least one owner
// (ErrConflict otherwise). ErrNotFound when uid is not subscribed.
func (s *Missions) SetSubscriptionRole(ctx context.Context, name, by, uid, role string) (Subscription, error) {
	const op = "set subscription role"
	if !ValidRole(role) {
		return Subscription{}, fmt.Errorf("store: %s: %w: role must be %s, %s or %s", op, ErrInvalid, RoleOwner, RoleMember, RoleReadOnly)
	}
	_, err := s.changeMission(ctx, op, name, by, true, func(tx *sql.Tx, m *Mission) error {
		var old string
		err := tx.QueryRowContext(ctx, `SELECT role FROM mission_subscriptions WHERE mission_id = ? AND client_uid = ?`, m.ID, uid).Scan(&old)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %q is not subscribed to mission %q", ErrNotFound, logx.Cut(uid, 64), logx.Cut(name, 64))
		}
		if err != nil {
			return err
		}
		if old == RoleOwner && role != RoleOwner {
			var owners int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM mission_subscriptions WHERE mission_id = ? AND role = ?`,
				m.ID, RoleOwner).Scan(&owners); err != nil {
				return err
			}
			if owners <= 1 {
				return fmt.Errorf("%w: %q is the only owner of mission %q; make another subscriber owner first", ErrConflict, logx.Cut(uid, 64), logx.Cut(name, 64))
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE mission_subscriptions SET role = ? WHERE mission_id = ? AND client_uid = ?`, role, m.ID, uid)
		return err
	})
	if err != nil {
		return Subscription{}, err
	}
	return s.Subscription(ctx, name, uid)
}

// MissionInvitations lists the invitations to the mission, newest first.
func (s *Missions) MissionInvitations(ctx context.Context, name string) ([]Invitation, error) {
	const op = "mission invitations"
	m, err := s.MissionByName(ctx, name)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT type, invitee, creator_uid, role, token, created_at FROM mission_invitations
		WHERE mission_id = ? ORDER BY created_at DESC, invitee LIMIT ?`, m.ID, maxMissionInvitations)
	if err != nil {
		return nil, s.wrapErr(op, err)
	}
	defer rows.Close()
	out := []Invitation{}
	for rows.Next() {
		inv := Invitation{MissionName: m.Name}
		var created int64
		if err := rows.Scan(&inv.Type, &inv.Invitee, &inv.CreatorUID, &inv.Role, &inv.Token, &created); err != nil {
			return nil, s.wrapErr(op, err)
		}
		inv.Created = fromMilli(created)
		out = append(out, inv)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr(op, err)
	}
	return out, nil
}

// maxMissionInvitations bounds the invitations one listing answers.
const maxMissionInvitations = 10000

// DeleteMission deletes the mission (only its owner may) with everything
// it holds: its contents and uids (the files stay in enterprise sync), its
// subscriptions, invitations, external data and change history, and the
// log entries that belong to no other mission. Its children lose their
// parent. It returns the mission as it was.
func (s *Missions) DeleteMission(ctx context.Context, name, by string) (Mission, error) {
	const op = "delete mission"
	if err := s.check(ctx); err != nil {
		return Mission{}, fmt.Errorf("store: %s: %w", op, err)
	}
	var m Mission
	err := s.inTxAnySpace(ctx, op, func(tx *sql.Tx) error {
		var err error
		if m, err = missionByName(ctx, tx, name); err != nil {
			return err
		}
		if err := mayOwn(ctx, tx, m, by, "delete it"); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM mission_logs WHERE id IN (SELECT log_id FROM mission_log_missions WHERE mission_id = ?)
			AND id NOT IN (SELECT log_id FROM mission_log_missions WHERE mission_id <> ?)`, m.ID, m.ID); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM missions WHERE id = ?`, m.ID)
		return err
	})
	if err != nil {
		return Mission{}, err
	}
	s.refreshSubscribers(ctx, name)
	return m, nil
}
