package store

// Changes to system users: the management API's putSystemUser (flat and
// batch, api.md §4.1), batch deletion, and the certificate package of a user
// created with certificates (api.md §5.10).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"outpost/appliance/logx"
)

// UserUpdate changes one system user; nil fields are left as they are.
type UserUpdate struct {
	Name     *string
	Password *string // a new password also ends the user's login tokens
	Token    *string
}

// UpdateUser applies up to the user uid and returns the user as stored.
// Errors: ErrNotFound, ErrInvalid, ErrConflict (name or token in use);
// nothing is changed then.
func (s *Accounts) UpdateUser(ctx context.Context, uid string, up UserUpdate) (User, error) {
	if err := s.check(ctx); err != nil {
		return User{}, fmt.Errorf("store: update user: %w", err)
	}
	var (
		sets []string
		args []any
	)
	if up.Name != nil {
		if err := validateUserName(*up.Name); err != nil {
			return User{}, fmt.Errorf("store: update user: %w", err)
		}
		sets, args = append(sets, "name = ?"), append(args, *up.Name)
	}
	if up.Token != nil {
		if err := checkText("token", *up.Token, 1, maxTokenBytes); err != nil {
			return User{}, fmt.Errorf("store: update user: %w", err)
		}
		sets, args = append(sets, "token_hash = ?"), append(args, tokenHash(*up.Token))
	}
	if up.Password != nil {
		if len(*up.Password) < 1 || len(*up.Password) > maxPasswordBytes {
			return User{}, fmt.Errorf("store: update user: %w: password must be 1 to %d bytes", ErrInvalid, maxPasswordBytes)
		}
		// The slow hash is computed before the transaction.
		ph, err := hashPassword(*up.Password, s.passwordIter)
		if err != nil {
			return User{}, err
		}
		sets, args = append(sets, "password_hash = ?"), append(args, ph)
	}
	var u User
	err := s.inTx(ctx, "update user", func(tx *sql.Tx) error {
		if len(sets) > 0 {
			res, err := tx.ExecContext(ctx, `UPDATE system_users SET `+strings.Join(sets, ", ")+` WHERE uid = ?`, append(args, uid)...)
			if isUniqueViolation(err) {
				return conflictOf(err)
			}
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				return fmt.Errorf("%w: no system user with uid %q", ErrNotFound, uid)
			}
			if up.Password != nil {
				if _, err := tx.ExecContext(ctx, `DELETE FROM login_tokens WHERE user_uid = ?`, uid); err != nil {
					return err
				}
			}
		}
		var err error
		u, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM system_users WHERE uid = ?`, uid))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: no system user with uid %q", ErrNotFound, uid)
		}
		return err
	})
	return u, err
}

// conflictOf names the unique column a violation is about.
func conflictOf(err error) error {
	if strings.Contains(err.Error(), "token_hash") {
		return fmt.Errorf("%w: token already in use", ErrConflict)
	}
	return fmt.Errorf("%w: user name exists", ErrConflict)
}

// TokenChange sets the bearer token of the system user UID.
type TokenChange struct {
	UID   string
	Token string
}

// SetUserTokens rotates the tokens of several users in one transaction:
// all of them change, or (ErrNotFound, ErrInvalid, ErrConflict) none.
func (s *Accounts) SetUserTokens(ctx context.Context, changes []TokenChange) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: set user tokens: %w", err)
	}
	for _, c := range changes {
		if err := checkText("token", c.Token, 1, maxTokenBytes); err != nil {
			return fmt.Errorf("store: set user tokens: %w", err)
		}
	}
	return s.inTx(ctx, "set user tokens", func(tx *sql.Tx) error {
		for _, c := range changes {
			res, err := tx.ExecContext(ctx, `UPDATE system_users SET token_hash = ? WHERE uid = ?`, tokenHash(c.Token), c.UID)
			if isUniqueViolation(err) {
				return conflictOf(err)
			}
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				return fmt.Errorf("%w: no system user with uid %q", ErrNotFound, c.UID)
			}
		}
		return nil
	})
}

// SetUserCertificatePackage records the certificate package (file name and
// data package hash) of the user uid.
func (s *Accounts) SetUserCertificatePackage(ctx context.Context, uid, name, hash string) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: set certificate package: %w", err)
	}
	if err := checkText("certificate package name", name, 0, maxUserField); err != nil {
		return fmt.Errorf("store: set certificate package: %w", err)
	}
	res, err := s.w.ExecContext(ctx, `UPDATE system_users SET certificate_package_name = ?, certificate_package_hash = ? WHERE uid = ?`,
		name, strings.ToLower(hash), uid)
	if err != nil {
		return s.wrapErr("set certificate package", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("store: set certificate package: %w: no system user with uid %q", ErrNotFound, uid)
	}
	return nil
}

// SetRole gives the user uid a role (UserRoleUser or UserRoleAdmin).
// Errors: ErrInvalid, ErrNotFound.
func (s *Accounts) SetRole(ctx context.Context, uid, role string) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: set role: %w", err)
	}
	if !ValidUserRole(role) {
		return fmt.Errorf("store: set role: %w: role must be %s or %s, not %q", ErrInvalid, UserRoleUser, UserRoleAdmin, logx.Cut(role, 32))
	}
	return s.inTx(ctx, "set role", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE system_users SET role = ? WHERE uid = ?`, role, uid)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return fmt.Errorf("%w: no system user with uid %q", ErrNotFound, logx.Cut(uid, 64))
		}
		return bumpAccessTx(ctx, tx)
	})
}

// DeleteUsers removes several users in one transaction: all of them, or
// (ErrNotFound naming the first unknown uid) none. Their login tokens go
// with them.
func (s *Accounts) DeleteUsers(ctx context.Context, uids []string) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: delete users: %w", err)
	}
	return s.inTxAnySpace(ctx, "delete users", func(tx *sql.Tx) error {
		for _, uid := range uids {
			var name string
			err := tx.QueryRowContext(ctx, `DELETE FROM system_users WHERE uid = ? RETURNING name`, uid).Scan(&name)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: no system user with uid %q", ErrNotFound, uid)
			}
			if err != nil {
				return err
			}
			// Its uids are free again (its certificates are revoked by now).
			if _, err := tx.ExecContext(ctx, `DELETE FROM uid_bindings WHERE identity = ?`, name); err != nil {
				return err
			}
		}
		return bumpAccessTx(ctx, tx)
	})
}

// UserChange is one item of a batch change of system users (the batch
// shape of putSystemUser and FreeTAKServer's updateSystemUser): nil fields
// are left as they are.
type UserChange struct {
	UID      string
	Password *string // a new password also ends the user's login tokens
	Token    *string
	// Groups replaces the user's memberships with these groups, each both
	// ways (those that do not exist are made); switches of a group the
	// user was already in are kept.
	Groups *[]string
}

// UpdateUsers applies changes in one transaction: all of them, or
// (ErrNotFound naming the first unknown uid, ErrInvalid, ErrConflict for a
// token in use) none.
func (s *Accounts) UpdateUsers(ctx context.Context, changes []UserChange) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: update users: %w", err)
	}
	hashes := make([]string, len(changes))
	for i, c := range changes {
		if c.Token != nil {
			if err := checkText("token", *c.Token, 1, maxTokenBytes); err != nil {
				return fmt.Errorf("store: update users: %w", err)
			}
		}
		if c.Groups != nil {
			ms := make([]Membership, 0, len(*c.Groups))
			for _, g := range *c.Groups {
				ms = append(ms, Membership{Group: g, In: true, Out: true})
			}
			if err := checkMemberships(ms); err != nil {
				return fmt.Errorf("store: update users: %w", err)
			}
		}
		if c.Password != nil {
			if len(*c.Password) < 1 || len(*c.Password) > maxPasswordBytes {
				return fmt.Errorf("store: update users: %w: password must be 1 to %d bytes", ErrInvalid, maxPasswordBytes)
			}
			// The slow hashes are computed before the transaction.
			ph, err := hashPassword(*c.Password, s.passwordIter)
			if err != nil {
				return err
			}
			hashes[i] = ph
		}
	}
	return s.inTx(ctx, "update users", func(tx *sql.Tx) error {
		for i, c := range changes {
			var one int
			if err := tx.QueryRowContext(ctx, `SELECT 1 FROM system_users WHERE uid = ?`, c.UID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: no system user with uid %q", ErrNotFound, logx.Cut(c.UID, 64))
			} else if err != nil {
				return err
			}
			if c.Token != nil {
				if _, err := tx.ExecContext(ctx, `UPDATE system_users SET token_hash = ? WHERE uid = ?`, tokenHash(*c.Token), c.UID); isUniqueViolation(err) {
					return conflictOf(err)
				} else if err != nil {
					return err
				}
			}
			if c.Password != nil {
				if _, err := tx.ExecContext(ctx, `UPDATE system_users SET password_hash = ? WHERE uid = ?`, hashes[i], c.UID); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `DELETE FROM login_tokens WHERE user_uid = ?`, c.UID); err != nil {
					return err
				}
			}
			if c.Groups != nil {
				if err := ensureGroupsTx(ctx, tx, *c.Groups, time.Now()); err != nil {
					return err
				}
				ms := make([]Membership, 0, len(*c.Groups))
				for _, g := range *c.Groups {
					ms = append(ms, Membership{Group: g, In: true, Out: true})
				}
				if err := setMembershipsTx(ctx, tx, c.UID, ms); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
