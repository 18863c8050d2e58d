package store

// Listings in chunks: a caller that writes a long list to a client holds
// one chunk of rows at a time (httpapi.Listing), never the table, and never
// a read connection while it writes. A client that reads its answer slowly,
// or not at all, must not keep one of the few read connections (the pool
// has ReadConns of them) nor hold a read transaction open, which would stop
// the WAL from being checkpointed and let it grow for as long as the client
// waits. So each chunk is read whole, the connection goes back to the pool,
// and only then is the chunk handed on.

import (
	"context"
	"fmt"
)

// scanner is a row to scan: *sql.Row or *sql.Rows. The scan functions
// take the same type, spelled either way.
type scanner = interface{ Scan(...any) error }

// listChunk is how many rows of a listing are read at once; large rows
// (ExCheck documents of up to 1 MiB) use fewer.
const listChunk = 256

// eachRow runs the query q, which must end in an ORDER BY that orders its
// rows completely, on the read pool in chunks of chunk rows (LIMIT and
// OFFSET appended), scans each row with scan and calls fn with it once its
// chunk has been read and the connection released. A row inserted or
// deleted between two chunks may shift the rows after it by one: a listing
// is a list of what was there while it was read, not one snapshot. An error
// of fn ends the listing and is returned as it is; the store's own errors
// are wrapped with op.
func eachRow[T any](s *db, ctx context.Context, op, q string, args []any, chunk int, scan func(scanner) (T, error), fn func(T) error) error {
	q += ` LIMIT ? OFFSET ?`
	for offset := 0; ; offset += chunk {
		if err := s.check(ctx); err != nil {
			return fmt.Errorf("store: %s: %w", op, err)
		}
		batch, err := readChunk(s, ctx, q, append(args[:len(args):len(args)], chunk, offset), chunk, scan)
		if err != nil {
			return s.wrapErr(op, err)
		}
		for _, v := range batch {
			if err := fn(v); err != nil {
				return err
			}
		}
		if len(batch) < chunk {
			return nil
		}
	}
}

// readChunk reads the rows of one chunk and closes the cursor.
func readChunk[T any](s *db, ctx context.Context, q string, args []any, chunk int, scan func(scanner) (T, error)) ([]T, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	batch := make([]T, 0, chunk)
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		batch = append(batch, v)
	}
	return batch, rows.Err()
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
