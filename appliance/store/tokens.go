package store

// Bearer tokens (api.md §5.1-5.3): API users' tokens, system users' tokens
// and login tokens (POST /api/login) are random strings stored only as the
// SHA-256 hex of the token. Authenticate finds a token's owner with one
// indexed query over the three tables and compares the stored hash with the
// computed one in constant time: the lookup itself matches on a hash, which
// an attacker cannot steer byte by byte, and the final comparison leaks no
// timing either way.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// maxLoginTokensPerUser bounds the live login tokens of one system user; a
// new login beyond it drops the oldest.
const maxLoginTokensPerUser = 100

// newToken returns a random bearer token: 32 bytes (256 bits) from
// crypto/rand, URL-safe base64 without padding (43 characters).
func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("store: random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// tokenHash is what is stored and looked up for a bearer token.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// PrincipalKind says which kind of user a token belongs to.
type PrincipalKind int

// The kinds of principals (api.md §2.1, §2.2).
const (
	APIUser PrincipalKind = iota
	SystemUser
)

func (k PrincipalKind) String() string {
	if k == APIUser {
		return "api user"
	}
	return "system user"
}

// Principal is the owner of a bearer token.
type Principal struct {
	Kind PrincipalKind
	Name string // API user name, or system user name
	UID  string // system user uid; "" for API users
	// Login is true when the token is a login token (POST /api/login)
	// rather than the system user's own token.
	Login bool
}

// Authenticate returns the owner of token: API users first, then system
// users (api.md §5.2), then unexpired login tokens of system users. An
// unknown, expired, empty or oversized token is ErrNotFound.
func (s *Accounts) Authenticate(ctx context.Context, token string, now time.Time) (Principal, error) {
	if err := s.check(ctx); err != nil {
		return Principal{}, fmt.Errorf("store: authenticate: %w", err)
	}
	if token == "" || len(token) > maxTokenBytes {
		return Principal{}, fmt.Errorf("store: authenticate: %w", ErrNotFound)
	}
	want := tokenHash(token)
	var (
		p      Principal
		rank   int
		stored string
	)
	err := s.r.QueryRowContext(ctx, `
		SELECT 0, name, '', token_hash FROM api_users WHERE token_hash = ?1
		UNION ALL
		SELECT 1, name, uid, token_hash FROM system_users WHERE token_hash = ?1
		UNION ALL
		SELECT 2, u.name, u.uid, l.token_hash FROM login_tokens l JOIN system_users u ON u.uid = l.user_uid
			WHERE l.token_hash = ?1 AND l.expires_at > ?2
		ORDER BY 1 LIMIT 1`, want, unixMilli(now)).Scan(&rank, &p.Name, &p.UID, &stored)
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, fmt.Errorf("store: authenticate: %w", ErrNotFound)
	}
	if err != nil {
		return Principal{}, s.wrapErr("authenticate", err)
	}
	if subtle.ConstantTimeCompare([]byte(stored), []byte(want)) != 1 {
		return Principal{}, fmt.Errorf("store: authenticate: %w", ErrNotFound)
	}
	switch rank {
	case 0:
		p.Kind = APIUser
	case 1:
		p.Kind = SystemUser
	default:
		p.Kind, p.Login = SystemUser, true
	}
	return p, nil
}

// CreateLoginToken issues a login token for the system user uid, valid
// until expires. The token is returned once and stored hashed. A user
// keeps at most maxLoginTokensPerUser live tokens (the oldest go).
func (s *Accounts) CreateLoginToken(ctx context.Context, uid string, expires time.Time) (string, error) {
	if err := s.check(ctx); err != nil {
		return "", fmt.Errorf("store: create login token: %w", err)
	}
	token, err := newToken()
	if err != nil {
		return "", err
	}
	now := time.Now()
	err = s.inTx(ctx, "create login token", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO login_tokens(token_hash, user_uid, created_at, expires_at)
			SELECT ?, uid, ?, ? FROM system_users WHERE uid = ?`, tokenHash(token), unixMilli(now), unixMilli(expires), uid)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return fmt.Errorf("%w: no system user with uid %q", ErrNotFound, uid)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM login_tokens WHERE user_uid = ? AND token_hash NOT IN
			(SELECT token_hash FROM login_tokens WHERE user_uid = ? ORDER BY created_at DESC, rowid DESC LIMIT ?)`,
			uid, uid, maxLoginTokensPerUser)
		return err
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// PruneLoginTokens removes the login tokens expired at now.
func (s *Accounts) PruneLoginTokens(ctx context.Context, now time.Time) (int64, error) {
	if err := s.check(ctx); err != nil {
		return 0, fmt.Errorf("store: prune login tokens: %w", err)
	}
	res, err := s.w.ExecContext(ctx, `DELETE FROM login_tokens WHERE expires_at <= ?`, unixMilli(now))
	if err != nil {
		return 0, s.wrapErr("prune login tokens", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
