package store

// The audit log (api.md §5.5): one row per management API call made as a
// system user. The API decides what goes into a row (secrets masked, bodies
// clipped, uploads by size); the store keeps it, lists it and prunes it.

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Limits of one audit row; longer values are cut (the API clips first).
const (
	maxAuditEndpoint = 2048
	maxAuditBody     = 16 << 10
	maxAuditField    = 255
)

// AuditEntry is one recorded call.
type AuditEntry struct {
	ID       int64
	At       time.Time
	UserUID  string
	UserName string
	Remote   string // client address
	Method   string
	Endpoint string // path and query, secrets masked
	Status   int
	Body     string // request body, secrets masked and clipped, or a note
	BodySize int64  // bytes of the request body
}

// AddAudit records e (At zero: now).
func (s *Accounts) AddAudit(ctx context.Context, e AuditEntry) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: add audit entry: %w", err)
	}
	if err := s.room("add audit entry"); err != nil {
		return err
	}
	if e.At.IsZero() {
		e.At = time.Now()
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO audit_log(at, user_uid, user_name, remote, method, endpoint, status, body, body_size)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		unixMilli(e.At), cut(e.UserUID, maxAuditField), cut(e.UserName, maxAuditField), cut(e.Remote, maxAuditField),
		cut(e.Method, maxAuditField), cut(e.Endpoint, maxAuditEndpoint), e.Status, cut(e.Body, maxAuditBody), e.BodySize)
	if err != nil {
		return s.wrapErr("add audit entry", err)
	}
	return nil
}

// AuditFilter selects audit entries; zero fields select everything.
type AuditFilter struct {
	Since time.Time // entries at or after
	User  string    // user name or uid
	Limit int       // newest N (0: no limit)
}

// AuditEntries lists the entries f selects, oldest first.
func (s *Accounts) AuditEntries(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: list audit entries: %w", err)
	}
	q := `SELECT id, at, user_uid, user_name, remote, method, endpoint, status, body, body_size FROM audit_log WHERE at >= ?`
	args := []any{unixMilli(f.Since)}
	if f.User != "" {
		q += ` AND (user_name = ? OR user_uid = ?)`
		args = append(args, f.User, f.User)
	}
	q += ` ORDER BY at DESC, id DESC`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.wrapErr("list audit entries", err)
	}
	defer rows.Close()
	out := []AuditEntry{}
	for rows.Next() {
		var (
			e  AuditEntry
			at int64
		)
		if err := rows.Scan(&e.ID, &at, &e.UserUID, &e.UserName, &e.Remote, &e.Method, &e.Endpoint, &e.Status, &e.Body, &e.BodySize); err != nil {
			return nil, s.wrapErr("list audit entries", err)
		}
		e.At = fromMilli(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr("list audit entries", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// auditPruneBatch is how many rows one pruning transaction removes, so the
// writer is never held for long.
const auditPruneBatch = 5000

// PruneAudit removes the entries older than before and returns how many.
func (s *Accounts) PruneAudit(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for {
		if err := s.check(ctx); err != nil {
			return total, fmt.Errorf("store: prune audit log: %w", err)
		}
		res, err := s.w.ExecContext(ctx, `DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ? LIMIT ?)`,
			unixMilli(before), auditPruneBatch)
		if err != nil {
			return total, s.wrapErr("prune audit log", err)
		}
		n, _ := res.RowsAffected()
		total += n
		if n < auditPruneBatch {
			return total, nil
		}
	}
}

// cut shortens s to at most n bytes on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return strings.ToValidUTF8(s[:n], "")
}
