package store

// Batch changes of data packages for the management API's PUT and DELETE
// /DataPackageTable (api.md §4.1): each batch is one transaction, so either
// every item is applied or, when one is invalid or unknown, none.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"outpost/appliance/logx"
)

// DataPackageByID returns the package with this PrimaryKey.
func (s *Files) DataPackageByID(ctx context.Context, id int64) (DataPackage, error) {
	return s.packageWhere(ctx, "data package by id", `id = ?`, id)
}

// DataPackageUpdate changes one package's metadata; nil fields stay.
type DataPackageUpdate struct {
	PrimaryKey int64
	Name       *string
	Keywords   *[]string
	Private    *bool // also sets Tool (api.md §3: privacy and tool move together)
}

// UpdateDataPackages applies every update in one transaction. Errors:
// ErrInvalid, ErrNotFound (naming the unknown PrimaryKey); nothing changes
// then.
func (s *Files) UpdateDataPackages(ctx context.Context, ups []DataPackageUpdate) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: update data packages: %w", err)
	}
	type stmt struct {
		sets []string
		args []any
	}
	stmts := make([]stmt, 0, len(ups))
	for _, up := range ups {
		var st stmt
		if up.Name != nil {
			if err := checkText("file name", *up.Name, 1, maxPackageNameLen); err != nil {
				return fmt.Errorf("store: update data packages: %w", err)
			}
			st.sets, st.args = append(st.sets, "name = ?"), append(st.args, logx.FileName(*up.Name, ""))
		}
		if up.Keywords != nil {
			kw, err := CleanKeywords(*up.Keywords)
			if err != nil {
				return fmt.Errorf("store: update data packages: %w", err)
			}
			b, err := json.Marshal(kw)
			if err != nil {
				return fmt.Errorf("store: update data packages: %w", err)
			}
			st.sets, st.args = append(st.sets, "keywords = ?"), append(st.args, string(b))
		}
		if up.Private != nil {
			privacy, tool := 0, ToolPublic
			if *up.Private {
				privacy, tool = 1, ToolPrivate
			}
			st.sets, st.args = append(st.sets, "privacy = ?", "tool = ?"), append(st.args, privacy, tool)
		}
		st.args = append(st.args, up.PrimaryKey)
		stmts = append(stmts, st)
	}
	return s.inTx(ctx, "update data packages", func(tx *sql.Tx) error {
		for i, st := range stmts {
			var res sql.Result
			var err error
			if len(st.sets) == 0 {
				// Nothing to change: the package must still exist.
				res, err = tx.ExecContext(ctx, `UPDATE data_packages SET id = id WHERE id = ?`, st.args...)
			} else {
				res, err = tx.ExecContext(ctx, `UPDATE data_packages SET `+strings.Join(st.sets, ", ")+` WHERE id = ?`, st.args...)
			}
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				return fmt.Errorf("%w: no data package with PrimaryKey %d", ErrNotFound, ups[i].PrimaryKey)
			}
		}
		return nil
	})
}

// DeleteDataPackagesByHash removes the packages with these hashes (any
// case; duplicates count once) and their blobs: in one transaction the rows
// go and the blobs become invisible, then the chunks are removed. Errors:
// ErrNotFound naming the first unknown hash; nothing changes then.
func (s *Files) DeleteDataPackagesByHash(ctx context.Context, hashes []string) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: delete data packages: %w", err)
	}
	seen := map[string]bool{}
	var blobIDs []int64
	err := s.inTxAnySpace(ctx, "delete data packages", func(tx *sql.Tx) error {
		for _, h := range hashes {
			h = strings.ToLower(h)
			if seen[h] {
				continue
			}
			seen[h] = true
			var id, blobID int64
			err := tx.QueryRowContext(ctx, `SELECT id, blob_id FROM data_packages WHERE hash = ?`, h).Scan(&id, &blobID)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: no data package with hash %q", ErrNotFound, h)
			}
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM data_packages WHERE id = ?`, id); err != nil {
				return err
			}
			if err := markBlobDeleting(ctx, tx, blobID); err != nil {
				return err
			}
			blobIDs = append(blobIDs, blobID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range blobIDs {
		if err := s.purgeBlob(context.WithoutCancel(ctx), id); err != nil {
			s.log.Warn("could not remove a deleted package's blob; it will be removed at next start", "blob", id, "error", err)
		}
	}
	return nil
}
