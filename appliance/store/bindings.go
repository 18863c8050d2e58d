package store

// Uids bound to certificate identities (access.md "Uids belong to
// identities"): the broker keeps the bindings in memory and has them
// written here as they are made, so they survive a restart.

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Binding is a uid and the certificate identity (common name) it belongs to.
type Binding struct {
	UID      string
	Identity string
	At       time.Time
}

// UIDBindings lists every binding, oldest first.
func (s *Accounts) UIDBindings(ctx context.Context) ([]Binding, error) {
	return s.bindingsWhere(ctx, "", nil)
}

// UIDsOf lists the uids bound to identity (its devices), oldest first.
func (s *Accounts) UIDsOf(ctx context.Context, identity string) ([]Binding, error) {
	return s.bindingsWhere(ctx, ` WHERE identity = ?`, []any{identity})
}

func (s *Accounts) bindingsWhere(ctx context.Context, where string, args []any) ([]Binding, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: uid bindings: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT uid, identity, bound_at FROM uid_bindings`+where+` ORDER BY bound_at, uid`, args...)
	if err != nil {
		return nil, s.wrapErr("uid bindings", err)
	}
	defer rows.Close()
	out := []Binding{}
	for rows.Next() {
		var (
			b  Binding
			at int64
		)
		if err := rows.Scan(&b.UID, &b.Identity, &at); err != nil {
			return nil, s.wrapErr("uid bindings", err)
		}
		b.At = fromMilli(at)
		out = append(out, b)
	}
	return out, s.wrapErr("uid bindings", rows.Err())
}

// BindUIDs stores bindings; a uid already bound keeps its first identity.
func (s *Accounts) BindUIDs(ctx context.Context, bs []Binding) error {
	if len(bs) == 0 {
		return nil
	}
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: bind uids: %w", err)
	}
	return s.inTx(ctx, "bind uids", func(tx *sql.Tx) error {
		for _, b := range bs {
			if err := checkText("uid", b.UID, 1, 1024); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO uid_bindings(uid, identity, bound_at) VALUES (?, ?, ?)`,
				b.UID, b.Identity, unixMilli(b.At)); err != nil {
				return err
			}
		}
		return nil
	})
}
