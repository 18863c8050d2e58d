package store

// Listings as their rows are read: a caller that writes a long list to a
// client holds one row at a time (httpapi.Listing), never the table.

import (
	"context"
	"fmt"
)

// scanner is a row to scan: *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// eachRow runs the query q on the read pool and calls fn with each row.
// An error of fn ends the listing and is returned as it is; the store's own
// errors are wrapped with op.
func (s *db) eachRow(ctx context.Context, op, q string, args []any, fn func(scanner) error) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return s.wrapErr(op, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return s.wrapErr(op, rows.Err())
}

// collect gathers what an Each method lists into a slice (for short lists
// and tests; a listing for a client writes as it reads).
func collect[T any](each func(func(T) error) error) ([]T, error) {
	out := []T{}
	if err := each(func(v T) error { out = append(out, v); return nil }); err != nil {
		return nil, err
	}
	return out, nil
}
