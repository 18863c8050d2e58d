package store

// System users (api.md §2.1; authentication api.md §5). Neither the password
// nor the bearer token is stored: password_hash is PBKDF2 (password.go),
// token_hash the SHA-256 hex of the token, so a token lookup is an index
// lookup of a hash and no secret is compared as a string. A generated token
// is returned once, by CreateUser, and cannot be read back.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"outpost/appliance/logx"

	"github.com/google/uuid"
)

// Input limits for system users.
const (
	maxUserNameRunes = 64
	maxPasswordBytes = 256
	maxTokenBytes    = 256
	maxUserField     = 255 // bytes: group, device type, certificate package name
)

// Roles of system users (access.md "Roles"); the Role* constants of
// missions.go are mission roles.
const (
	UserRoleUser  = "user"
	UserRoleAdmin = "admin"
)

// ValidUserRole reports whether r is a system user role.
func ValidUserRole(r string) bool { return r == UserRoleUser || r == UserRoleAdmin }

// UserInput creates a system user (api.md §2.1).
type UserInput struct {
	Name                   string // 1-64 characters, unique
	Group                  string // group names separated by commas: the user joins each, both ways (access.md "Groups")
	Role                   string // UserRoleUser (default) or UserRoleAdmin
	Password               string // 1-256 bytes
	Token                  string // bearer token; empty: a random one is generated
	DeviceType             string // "mobile", "desktop", ... (normalised by the API)
	CertificatePackageName string
}

// User is a stored system user. It never carries the password or its hash.
type User struct {
	UID                    string
	Name                   string
	Role                   string // UserRoleUser or UserRoleAdmin
	DeviceType             string
	CertificatePackageName string
	CertificatePackageHash string // SHA-256 of the package's data package ("" when none)
	CreatedAt              time.Time
	// Token is the bearer token in clear, set only in CreateUser's result
	// (it is stored hashed and cannot be read back).
	Token string
}

// CreateUser stores a new user with a random UUID. Errors: ErrInvalid,
// ErrConflict (name or token already in use).
func (s *Accounts) CreateUser(ctx context.Context, in UserInput) (User, error) {
	if err := s.check(ctx); err != nil {
		return User{}, fmt.Errorf("store: create user: %w", err)
	}
	if err := validateUserInput(in); err != nil {
		return User{}, fmt.Errorf("store: create user: %w", err)
	}
	groups, err := ParseGroupField(in.Group)
	if err != nil {
		return User{}, fmt.Errorf("store: create user: %w", err)
	}
	if in.Role == "" {
		in.Role = UserRoleUser
	}
	uid := uuid.NewString()
	token := in.Token
	if token == "" {
		var err error
		if token, err = newToken(); err != nil {
			return User{}, fmt.Errorf("store: create user: %w", err)
		}
	}
	// The slow hash is computed before the transaction: it never holds the writer.
	ph, err := hashPassword(in.Password, s.passwordIter)
	if err != nil {
		return User{}, err
	}
	u := User{
		UID:                    uid,
		Name:                   in.Name,
		Role:                   in.Role,
		DeviceType:             in.DeviceType,
		CertificatePackageName: in.CertificatePackageName,
		CreatedAt:              time.Now().UTC().Truncate(time.Millisecond),
		Token:                  token,
	}
	// The user and its groups (those named that do not exist are made)
	// commit together.
	err = s.inTx(ctx, "create user", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO system_users(uid, name, role, password_hash, token_hash,
			certificate_package_name, device_type, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			u.UID, u.Name, u.Role, ph, tokenHash(token), u.CertificatePackageName, u.DeviceType, unixMilli(u.CreatedAt)); err != nil {
			return err
		}
		if err := ensureGroupsTx(ctx, tx, groups, u.CreatedAt); err != nil {
			return err
		}
		for _, g := range groups {
			if _, err := tx.ExecContext(ctx, `INSERT INTO group_members(user_uid, group_name, dir_in, dir_out) VALUES (?, ?, 1, 1)`, u.UID, g); err != nil {
				return err
			}
		}
		return nil
	})
	if isUniqueViolation(err) {
		if strings.Contains(err.Error(), "token_hash") {
			return User{}, fmt.Errorf("store: create user: %w: token already in use", ErrConflict)
		}
		return User{}, fmt.Errorf("store: create user: %w: user name %q exists", ErrConflict, in.Name)
	}
	if err != nil {
		return User{}, s.wrapErr("create user", err)
	}
	return u, nil
}

// validateUserName checks a system user name: 1-64 characters of valid
// UTF-8 without control characters or surrounding spaces.
func validateUserName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: user name is required", ErrInvalid)
	}
	if n := utf8.RuneCountInString(name); n > maxUserNameRunes {
		return fmt.Errorf("%w: user name has %d characters, at most %d", ErrInvalid, n, maxUserNameRunes)
	}
	if err := checkText("user name", name, 1, 4*maxUserNameRunes); err != nil {
		return err
	}
	if strings.TrimSpace(name) != name {
		return fmt.Errorf("%w: user name has leading or trailing spaces", ErrInvalid)
	}
	return nil
}

func validateUserInput(in UserInput) error {
	if err := validateUserName(in.Name); err != nil {
		return err
	}
	if len(in.Password) < 1 || len(in.Password) > maxPasswordBytes {
		return fmt.Errorf("%w: password must be 1 to %d bytes", ErrInvalid, maxPasswordBytes)
	}
	if in.Token != "" {
		if err := checkText("token", in.Token, 1, maxTokenBytes); err != nil {
			return err
		}
	}
	if in.Role != "" && !ValidUserRole(in.Role) {
		return fmt.Errorf("%w: role must be %s or %s, not %q", ErrInvalid, UserRoleUser, UserRoleAdmin, logx.Cut(in.Role, 32))
	}
	for _, f := range []struct{ name, v string }{
		{"group", in.Group}, {"device type", in.DeviceType}, {"certificate package name", in.CertificatePackageName},
	} {
		if err := checkText(f.name, f.v, 0, maxUserField); err != nil {
			return err
		}
	}
	return nil
}

const userColumns = `uid, name, role, certificate_package_name, certificate_package_hash, device_type, created_at`

func scanUser(sc interface{ Scan(...any) error }, extra ...any) (User, error) {
	var (
		u       User
		created int64
	)
	dest := append([]any{&u.UID, &u.Name, &u.Role, &u.CertificatePackageName, &u.CertificatePackageHash, &u.DeviceType, &created}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return User{}, err
	}
	u.CreatedAt = fromMilli(created)
	return u, nil
}

func (s *db) userWhere(ctx context.Context, op, where string, arg any) (User, error) {
	if err := s.check(ctx); err != nil {
		return User{}, fmt.Errorf("store: %s: %w", op, err)
	}
	u, err := scanUser(s.r.QueryRowContext(ctx, `SELECT `+userColumns+` FROM system_users WHERE `+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("store: %s: %w", op, ErrNotFound)
	}
	if err != nil {
		return User{}, s.wrapErr(op, err)
	}
	return u, nil
}

// UserByName returns the user with this exact name.
func (s *Accounts) UserByName(ctx context.Context, name string) (User, error) {
	return s.userWhere(ctx, "user by name", `name = ?`, name)
}

// UserByUID returns the user with this uid.
func (s *Accounts) UserByUID(ctx context.Context, uid string) (User, error) {
	return s.userWhere(ctx, "user by uid", `uid = ?`, uid)
}

// UserByToken returns the user whose bearer token this is (api.md §5.2).
// An empty or oversized token is ErrNotFound without a query.
func (s *Accounts) UserByToken(ctx context.Context, token string) (User, error) {
	if token == "" || len(token) > maxTokenBytes {
		return User{}, fmt.Errorf("store: user by token: %w", ErrNotFound)
	}
	return s.userWhere(ctx, "user by token", `token_hash = ?`, tokenHash(token))
}

// VerifyPassword checks a name and password (certificate enrollment). An
// unknown name and a wrong password both return ErrBadCredentials after the
// same amount of hashing work.
//
// Every check passes the process-wide password gate (passwordgate.go):
// ErrBusy when it has no capacity, without any hashing.
func (s *Accounts) VerifyPassword(ctx context.Context, name, password string) (User, error) {
	if err := s.check(ctx); err != nil {
		return User{}, fmt.Errorf("store: verify password: %w", err)
	}
	release, err := s.pwGate.enter(ctx)
	if err != nil {
		return User{}, fmt.Errorf("store: verify password: %w", err)
	}
	defer release()
	if len(password) > maxPasswordBytes || len(name) > 4*maxUserNameRunes {
		burnPasswordWork(password[:min(len(password), maxPasswordBytes)], s.passwordIter)
		return User{}, fmt.Errorf("store: verify password: %w", ErrBadCredentials)
	}
	var ph string
	u, err := scanUser(s.r.QueryRowContext(ctx, `SELECT `+userColumns+`, password_hash FROM system_users WHERE name = ?`, name), &ph)
	if errors.Is(err, sql.ErrNoRows) {
		burnPasswordWork(password, s.passwordIter)
		return User{}, fmt.Errorf("store: verify password: %w", ErrBadCredentials)
	}
	if err != nil {
		return User{}, s.wrapErr("verify password", err)
	}
	ok, err := checkPassword(ph, password)
	if err != nil {
		s.log.Error("a stored password hash cannot be read", "user_uid", u.UID, "err", err)
		return User{}, fmt.Errorf("store: verify password: %w", ErrBadCredentials)
	}
	if !ok {
		return User{}, fmt.Errorf("store: verify password: %w", ErrBadCredentials)
	}
	return u, nil
}

// DeleteUser removes the user with this uid; ErrNotFound when there is none.
func (s *Accounts) DeleteUser(ctx context.Context, uid string) error {
	return s.DeleteUsers(ctx, []string{uid})
}

// HasUsers reports whether any system user exists.
func (s *Accounts) HasUsers(ctx context.Context) (bool, error) {
	if err := s.check(ctx); err != nil {
		return false, fmt.Errorf("store: any users: %w", err)
	}
	var any bool
	if err := s.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM system_users)`).Scan(&any); err != nil {
		return false, s.wrapErr("any users", err)
	}
	return any, nil
}

// Users lists every user by name.
func (s *Accounts) Users(ctx context.Context) ([]User, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: list users: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+userColumns+` FROM system_users ORDER BY name`)
	if err != nil {
		return nil, s.wrapErr("list users", err)
	}
	defer rows.Close()
	out := []User{}
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, s.wrapErr("list users", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr("list users", err)
	}
	return out, nil
}
