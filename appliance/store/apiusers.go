package store

// API users (api.md §2.2): a name and a bearer token, nothing else. Their
// calls are not audited (api.md §5.5). Managed by `outpost token` and created
// on first run as "admin".

import (
	"context"
	"fmt"
	"time"
)

// APIUserInfo is a stored API user. It never carries the token, except in
// the result of CreateAPIUser and EnsureAPIUser.
type APIUserInfo struct {
	Name      string
	CreatedAt time.Time
	Token     string // in clear, only when just created
}

// ValidateAPIUserName checks an API user name: 1-64 characters of ASCII
// letters, digits, '.', '_' and '-'.
func ValidateAPIUserName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("%w: API user name must be 1 to 64 characters", ErrInvalid)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w: API user name may hold only letters, digits, '.', '_' and '-'", ErrInvalid)
		}
	}
	return nil
}

// CreateAPIUser creates an API user with a new random token, returned once.
// Errors: ErrInvalid, ErrConflict (the name exists).
func (s *Accounts) CreateAPIUser(ctx context.Context, name string) (APIUserInfo, error) {
	u, created, err := s.insertAPIUser(ctx, name, false)
	if err == nil && !created {
		err = fmt.Errorf("store: create API user: %w: %q exists", ErrConflict, name)
	}
	return u, err
}

// EnsureAPIUser creates the API user name when no API user exists at all
// (first run) and reports whether it did. The check and the insert are one
// statement, so two processes starting at once create one user.
func (s *Accounts) EnsureAPIUser(ctx context.Context, name string) (APIUserInfo, bool, error) {
	return s.insertAPIUser(ctx, name, true)
}

func (s *db) insertAPIUser(ctx context.Context, name string, onlyIfNone bool) (APIUserInfo, bool, error) {
	if err := s.check(ctx); err != nil {
		return APIUserInfo{}, false, fmt.Errorf("store: create API user: %w", err)
	}
	if err := ValidateAPIUserName(name); err != nil {
		return APIUserInfo{}, false, fmt.Errorf("store: create API user: %w", err)
	}
	token, err := newToken()
	if err != nil {
		return APIUserInfo{}, false, err
	}
	u := APIUserInfo{Name: name, CreatedAt: time.Now().UTC().Truncate(time.Millisecond), Token: token}
	q := `INSERT INTO api_users(name, token_hash, created_at) SELECT ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM api_users WHERE name = ?)`
	if onlyIfNone {
		q = `INSERT INTO api_users(name, token_hash, created_at) SELECT ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM api_users) AND ? <> ''`
	}
	res, err := s.w.ExecContext(ctx, q, u.Name, tokenHash(token), unixMilli(u.CreatedAt), name)
	if err != nil {
		return APIUserInfo{}, false, s.wrapErr("create API user", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return APIUserInfo{}, false, s.wrapErr("create API user", err)
	}
	if n == 0 {
		return APIUserInfo{}, false, nil
	}
	return u, true, nil
}

// APIUsers lists the API users by name (never their tokens).
func (s *Accounts) APIUsers(ctx context.Context) ([]APIUserInfo, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: list API users: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT name, created_at FROM api_users ORDER BY name`)
	if err != nil {
		return nil, s.wrapErr("list API users", err)
	}
	defer rows.Close()
	out := []APIUserInfo{}
	for rows.Next() {
		var (
			u  APIUserInfo
			ms int64
		)
		if err := rows.Scan(&u.Name, &ms); err != nil {
			return nil, s.wrapErr("list API users", err)
		}
		u.CreatedAt = fromMilli(ms)
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr("list API users", err)
	}
	return out, nil
}

// DeleteAPIUser removes the API user name; its token stops working at once
// (tokens are looked up per request). ErrNotFound when there is none.
func (s *Accounts) DeleteAPIUser(ctx context.Context, name string) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: delete API user: %w", err)
	}
	res, err := s.w.ExecContext(ctx, `DELETE FROM api_users WHERE name = ?`, name)
	if err != nil {
		return s.wrapErr("delete API user", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("store: delete API user: %w: %q", ErrNotFound, name)
	}
	return nil
}
