package store

// The audit log (api.md §5.5): one row per management API call made as a
// system user. The API decides what goes into a row (secrets masked, bodies
// clipped, uploads by size); the store keeps it, lists it and prunes it.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"outpost/appliance/logx"
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

// AddAudit records e (At zero: now). When the log then holds more than
// Budgets.AuditRecords records, the oldest beyond it are pruned in the same
// transaction: a client can never have its calls refused for want of room,
// and the pruning is counted (AuditPruned) and logged.
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
	var pruned int64
	err := s.inTx(ctx, "add audit entry", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO audit_log(at, user_uid, user_name, remote, method, endpoint, status, body, body_size)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			unixMilli(e.At), cut(e.UserUID, maxAuditField), cut(e.UserName, maxAuditField), cut(e.Remote, maxAuditField),
			cut(e.Method, maxAuditField), cut(e.Endpoint, maxAuditEndpoint), e.Status, cut(e.Body, maxAuditBody), e.BodySize)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		// Ids grow by one per record and pruning removes the oldest, so
		// the newest N are those above id-N (fewer only where the
		// retention removed a record out of order: never more).
		res, err = tx.ExecContext(ctx, `DELETE FROM audit_log WHERE id <= ?`, id-int64(s.budgets.AuditRecords))
		if err != nil {
			return err
		}
		pruned, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return err
	}
	if pruned > 0 {
		total := s.audit.byCount.Add(uint64(pruned))
		s.audit.log.Info("the audit log is at its budget: the oldest records are pruned as new ones are added",
			"maxAuditRecords", s.budgets.AuditRecords, "pruned_since_start", total)
	}
	return nil
}

// auditState counts what the audit log's pruning removed.
type auditState struct {
	byAge   atomic.Uint64 // older than the retention (PruneAudit)
	byCount atomic.Uint64 // beyond Budgets.AuditRecords (AddAudit)
	log     *logx.Limiter // one line an hour about pruning by count
}

// AuditPruned is how many audit records were pruned since the store
// opened: for their age (PruneAudit) and beyond the budget (AddAudit).
func (s *Accounts) AuditPruned() (byAge, byCount uint64) {
	return s.audit.byAge.Load(), s.audit.byCount.Load()
}

// AuditFilter selects audit entries; zero fields select everything.
type AuditFilter struct {
	Since time.Time // entries at or after
	User  string    // user name or uid
	Limit int       // newest N (0: no limit)
}

// AuditEntries lists the entries f selects, oldest first (EachAuditEntry
// into a slice: for tests and short lists).
func (s *Accounts) AuditEntries(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	return collect(func(fn func(AuditEntry) error) error { return s.EachAuditEntry(ctx, f, fn) })
}

// EachAuditEntry calls fn with each entry f selects, oldest first, as the
// rows are read: a listing of the whole log holds one entry at a time. An
// error from fn ends the listing and is returned.
func (s *Accounts) EachAuditEntry(ctx context.Context, f AuditFilter, fn func(AuditEntry) error) error {
	const cols = `id, at, user_uid, user_name, remote, method, endpoint, status, body, body_size`
	q := `SELECT ` + cols + ` FROM audit_log WHERE at >= ?`
	args := []any{unixMilli(f.Since)}
	if f.User != "" {
		q += ` AND (user_name = ? OR user_uid = ?)`
		args = append(args, f.User, f.User)
	}
	if f.Limit > 0 {
		q = `SELECT ` + cols + ` FROM (` + q + ` ORDER BY at DESC, id DESC LIMIT ?)`
		args = append(args, f.Limit)
	}
	const op = "list audit entries"
	return eachRow(s.db, ctx, op, q+` ORDER BY at, id`, args, listChunk, func(sc scanner) (AuditEntry, error) {
		var (
			e  AuditEntry
			at int64
		)
		err := sc.Scan(&e.ID, &at, &e.UserUID, &e.UserName, &e.Remote, &e.Method, &e.Endpoint, &e.Status, &e.Body, &e.BodySize)
		e.At = fromMilli(at)
		return e, err
	}, fn)
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
		s.audit.byAge.Add(uint64(n))
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
