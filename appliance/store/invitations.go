package store

// Enrollment invitations (protocol.md §8 "Enrolling with an invitation"):
// a random token a device presents to the enrollment port, with its user's
// name, in place of the password. Like bearer tokens (tokens.go) it is
// 256 random bits stored only as its SHA-256 hex: a high-entropy secret
// needs no slow hash, the lookup matches on the hash and the final
// comparison is constant-time. The token is returned once, by
// CreateEnrollInvitation. A use is spent with one UPDATE whose WHERE clause
// holds every condition (not revoked, not expired, a use left), so two
// enrollments racing for the last use cannot both win.

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Limits of invitations.
const (
	// MaxEnrollInvitationUses is the most uses one invitation may have.
	MaxEnrollInvitationUses = 100
	// maxInvitationsPerUser bounds the invitations kept per user: a new one
	// beyond it pushes out the oldest that can no longer be used.
	maxInvitationsPerUser = 100
	maxCreatedBy          = 128 // bytes of EnrollInvitation.CreatedBy
)

// EnrollDevices are the devices an invitation may be for.
var EnrollDevices = []string{"atak", "itak", "wintak"}

// EnrollInvitationInput creates an invitation.
type EnrollInvitationInput struct {
	UserUID   string
	Device    string // one of EnrollDevices
	Expires   time.Time
	Uses      int    // 1..MaxEnrollInvitationUses
	CreatedBy string // who asked for it (audit), clipped to 128 bytes
}

// EnrollInvitation is a stored invitation; it never carries the token's hash.
type EnrollInvitation struct {
	ID        string
	UserUID   string
	User      string // the user's name
	Device    string
	Created   time.Time
	Expires   time.Time
	Uses      int // uses it was created with
	UsesLeft  int
	Revoked   time.Time // zero: not revoked
	CreatedBy string
	// Token is the secret in clear, set only in CreateEnrollInvitation's result.
	Token string
}

// Usable reports whether the invitation can still enroll a device at now.
func (i EnrollInvitation) Usable(now time.Time) bool {
	return i.Revoked.IsZero() && i.UsesLeft > 0 && now.Before(i.Expires)
}

// State names the invitation's state at now: "active", "used", "expired"
// or "revoked".
func (i EnrollInvitation) State(now time.Time) string {
	switch {
	case !i.Revoked.IsZero():
		return "revoked"
	case i.UsesLeft <= 0:
		return "used"
	case !now.Before(i.Expires):
		return "expired"
	}
	return "active"
}

const invitationColumns = `i.id, i.user_uid, u.name, i.device, i.created_at, i.expires_at, i.uses, i.uses_left, i.revoked_at, i.created_by`

func scanInvitation(sc scanner, extra ...any) (EnrollInvitation, error) {
	var (
		inv                       EnrollInvitation
		created, expires, revoked int64
	)
	dest := append([]any{&inv.ID, &inv.UserUID, &inv.User, &inv.Device, &created, &expires, &inv.Uses, &inv.UsesLeft, &revoked, &inv.CreatedBy}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return EnrollInvitation{}, err
	}
	inv.Created, inv.Expires = fromMilli(created), fromMilli(expires)
	if revoked != 0 {
		inv.Revoked = fromMilli(revoked)
	}
	return inv, nil
}

func validDevice(d string) bool {
	for _, v := range EnrollDevices {
		if d == v {
			return true
		}
	}
	return false
}

// CreateEnrollInvitation stores a new invitation for a system user and returns
// it with its token (the only time the token exists in clear). Errors:
// ErrInvalid (device, uses, an expiry not after now), ErrNotFound (no such
// user), ErrConflict (the user has maxInvitationsPerUser usable ones).
func (s *Accounts) CreateEnrollInvitation(ctx context.Context, in EnrollInvitationInput, now time.Time) (EnrollInvitation, error) {
	const op = "create invitation"
	if err := s.check(ctx); err != nil {
		return EnrollInvitation{}, fmt.Errorf("store: %s: %w", op, err)
	}
	switch {
	case !validDevice(in.Device):
		return EnrollInvitation{}, fmt.Errorf("store: %s: %w: device must be atak, itak or wintak", op, ErrInvalid)
	case in.Uses < 1 || in.Uses > MaxEnrollInvitationUses:
		return EnrollInvitation{}, fmt.Errorf("store: %s: %w: uses must be 1 to %d", op, ErrInvalid, MaxEnrollInvitationUses)
	case !in.Expires.After(now):
		return EnrollInvitation{}, fmt.Errorf("store: %s: %w: the expiry must be in the future", op, ErrInvalid)
	}
	if len(in.CreatedBy) > maxCreatedBy {
		in.CreatedBy = in.CreatedBy[:maxCreatedBy]
	}
	token, err := newToken()
	if err != nil {
		return EnrollInvitation{}, err
	}
	inv := EnrollInvitation{
		ID: uuid.NewString(), UserUID: in.UserUID, Device: in.Device,
		Created: fromMilli(unixMilli(now)), Expires: fromMilli(unixMilli(in.Expires)),
		Uses: in.Uses, UsesLeft: in.Uses, CreatedBy: in.CreatedBy, Token: token,
	}
	err = s.inTx(ctx, op, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT name FROM system_users WHERE uid = ?`, in.UserUID).Scan(&inv.User); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: no system user with uid %q", ErrNotFound, in.UserUID)
			}
			return err
		}
		// Make room: the oldest invitations that can no longer be used go
		// first; usable ones are never dropped.
		if _, err := tx.ExecContext(ctx, `DELETE FROM enroll_invitations WHERE id IN (
				SELECT id FROM enroll_invitations WHERE user_uid = ?1
					AND (revoked_at <> 0 OR uses_left = 0 OR expires_at <= ?2)
				ORDER BY created_at, id
				LIMIT max(0, (SELECT COUNT(*) FROM enroll_invitations WHERE user_uid = ?1) - ?3))`,
			in.UserUID, unixMilli(now), maxInvitationsPerUser-1); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM enroll_invitations WHERE user_uid = ?`, in.UserUID).Scan(&n); err != nil {
			return err
		}
		if n >= maxInvitationsPerUser {
			return fmt.Errorf("%w: the user has %d invitations that can still be used; revoke some first", ErrConflict, n)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO enroll_invitations(id, user_uid, token_hash, device, created_at, expires_at, uses, uses_left, created_by)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			inv.ID, inv.UserUID, tokenHash(token), inv.Device, unixMilli(inv.Created), unixMilli(inv.Expires), inv.Uses, inv.UsesLeft, inv.CreatedBy)
		return err
	})
	if err != nil {
		return EnrollInvitation{}, err
	}
	return inv, nil
}

// EnrollInvitations lists invitations, newest first: every user's when userUID is
// "", otherwise that user's. Tokens are never listed.
func (s *Accounts) EnrollInvitations(ctx context.Context, userUID string) ([]EnrollInvitation, error) {
	q := `SELECT ` + invitationColumns + ` FROM enroll_invitations i JOIN system_users u ON u.uid = i.user_uid`
	var args []any
	if userUID != "" {
		q += ` WHERE i.user_uid = ?`
		args = append(args, userUID)
	}
	q += ` ORDER BY i.created_at DESC, i.id`
	return collect(func(fn func(EnrollInvitation) error) error {
		return eachRow(s.db, ctx, "list invitations", q, args, listChunk, func(sc scanner) (EnrollInvitation, error) { return scanInvitation(sc) }, fn)
	})
}

// EnrollInvitation returns one invitation. Errors: ErrNotFound.
func (s *Accounts) EnrollInvitation(ctx context.Context, id string) (EnrollInvitation, error) {
	const op = "invitation"
	if err := s.check(ctx); err != nil {
		return EnrollInvitation{}, fmt.Errorf("store: %s: %w", op, err)
	}
	inv, err := scanInvitation(s.r.QueryRowContext(ctx, `SELECT `+invitationColumns+`
		FROM enroll_invitations i JOIN system_users u ON u.uid = i.user_uid WHERE i.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return EnrollInvitation{}, fmt.Errorf("store: %s: %w", op, ErrNotFound)
	}
	if err != nil {
		return EnrollInvitation{}, s.wrapErr(op, err)
	}
	return inv, nil
}

// RevokeEnrollInvitation revokes an invitation at now; revoking one twice keeps
// the first time. Errors: ErrNotFound.
func (s *Accounts) RevokeEnrollInvitation(ctx context.Context, id string, now time.Time) (EnrollInvitation, error) {
	const op = "revoke invitation"
	if err := s.check(ctx); err != nil {
		return EnrollInvitation{}, fmt.Errorf("store: %s: %w", op, err)
	}
	res, err := s.w.ExecContext(ctx, `UPDATE enroll_invitations SET revoked_at = ? WHERE id = ? AND revoked_at = 0`, unixMilli(now), id)
	if err != nil {
		return EnrollInvitation{}, s.wrapErr(op, err)
	}
	if _, err := res.RowsAffected(); err != nil {
		return EnrollInvitation{}, s.wrapErr(op, err)
	}
	return s.EnrollInvitation(ctx, id)
}

// CheckEnrollInvitation finds the usable invitation of the user named name whose
// token this is, without spending it (the enrollment's configuration call
// may come before the signing call). A wrong user, an unknown, revoked,
// expired or used-up token are all ErrBadCredentials, like a wrong
// password.
func (s *Accounts) CheckEnrollInvitation(ctx context.Context, name, token string, now time.Time) (EnrollInvitation, error) {
	const op = "check invitation"
	if err := s.check(ctx); err != nil {
		return EnrollInvitation{}, fmt.Errorf("store: %s: %w", op, err)
	}
	if token == "" || len(token) > maxTokenBytes {
		return EnrollInvitation{}, fmt.Errorf("store: %s: %w", op, ErrBadCredentials)
	}
	want := tokenHash(token)
	var stored string
	inv, err := scanInvitation(s.r.QueryRowContext(ctx, `SELECT `+invitationColumns+`, i.token_hash
		FROM enroll_invitations i JOIN system_users u ON u.uid = i.user_uid WHERE i.token_hash = ?`, want), &stored)
	if errors.Is(err, sql.ErrNoRows) {
		return EnrollInvitation{}, fmt.Errorf("store: %s: %w", op, ErrBadCredentials)
	}
	if err != nil {
		return EnrollInvitation{}, s.wrapErr(op, err)
	}
	if subtle.ConstantTimeCompare([]byte(stored), []byte(want)) != 1 || inv.User != name || !inv.Usable(now) {
		return EnrollInvitation{}, fmt.Errorf("store: %s: %w", op, ErrBadCredentials)
	}
	return inv, nil
}

// SpendEnrollInvitation takes one use of the invitation id at now, in a single
// UPDATE that also requires it to be unrevoked, unexpired and to have a
// use left: of two callers racing for the last use, exactly one succeeds.
// The loser, and any call for an invitation that is no longer usable, gets
// ErrBadCredentials.
func (s *Accounts) SpendEnrollInvitation(ctx context.Context, id string, now time.Time) error {
	const op = "spend invitation"
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	res, err := s.w.ExecContext(ctx, `UPDATE enroll_invitations SET uses_left = uses_left - 1
		WHERE id = ? AND uses_left > 0 AND revoked_at = 0 AND expires_at > ?`, id, unixMilli(now))
	if err != nil {
		return s.wrapErr(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.wrapErr(op, err)
	}
	if n != 1 {
		return fmt.Errorf("store: %s: %w", op, ErrBadCredentials)
	}
	return nil
}
