package store

// Budgets of the tables clients can grow (RELIABILITY.md "Budgets: the
// full disk and everything a client can grow"). A write that would take a
// table past its budget is refused with ErrConflict naming the budget and
// changes nothing, except the audit log, which a client must not be able
// to stop: beyond its budget its oldest records are pruned (audit.go).

import (
	"context"
	"database/sql"
	"fmt"
)

// Defaults of Budgets.
const (
	DefaultMaxAuditRecords     = 100_000
	DefaultMaxExCheckDocuments = 10_000
	DefaultMaxExCheckBytes     = 256 << 20
	DefaultMaxVideoConnections = 256
	DefaultMaxServerObjects    = 1_000
	DefaultMaxDataPackages     = 10_000
)

// Budgets bound the tables clients can grow; a zero field takes its
// default.
type Budgets struct {
	AuditRecords     int            // audit records kept (the newest)
	ExCheckDocuments int            // templates kept, and checklists kept
	ExCheckBytes     int64          // XML of every template and checklist together
	VideoConnections int            // video connections kept
	ServerObjects    int            // geo objects and emergencies made through the management API
	DataPackages     int            // data package rows (their content is budgeted by the disk reserve)
	Missions         MissionBudgets // what one mission may hold (missions_budget.go); zero: no limit
}

func (b Budgets) withDefaults() Budgets {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&b.AuditRecords, DefaultMaxAuditRecords)
	def(&b.ExCheckDocuments, DefaultMaxExCheckDocuments)
	def(&b.VideoConnections, DefaultMaxVideoConnections)
	def(&b.ServerObjects, DefaultMaxServerObjects)
	def(&b.DataPackages, DefaultMaxDataPackages)
	if b.ExCheckBytes <= 0 {
		b.ExCheckBytes = DefaultMaxExCheckBytes
	}
	return b
}

// Budgets are the budgets this store enforces (defaults filled in).
func (s *db) Budgets() Budgets { return s.budgets }

// overBudget is the refusal of a write that would take a table past its
// budget: what is kept, the most kept, the setting that says so, and what
// the client can do.
func overBudget(what string, limit int64, setting, remedy string) error {
	return fmt.Errorf("%w: at most %d %s are kept (%s); %s", ErrConflict, limit, what, setting, remedy)
}

// countWhere counts the rows of table that where selects (a constant
// condition with ? placeholders), inside tx.
func countWhere(ctx context.Context, tx *sql.Tx, table, where string, args ...any) (int64, error) {
	var n int64
	q := `SELECT COUNT(*) FROM ` + table
	if where != "" {
		q += ` WHERE ` + where
	}
	err := tx.QueryRowContext(ctx, q, args...).Scan(&n)
	return n, err
}
