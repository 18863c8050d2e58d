package store

// The enterprise sync search of the client API (api.md §4.2): public
// packages by keyword.

import (
	"context"
	"fmt"
)

// SearchDataPackages lists the public packages (Privacy 0) that carry
// keyword among their enterprise sync keywords (SyncKeywords: the stored
// keywords, the file name, the submitter), newest submission first: the
// client API's search (api.md §4.2), where private packages never appear.
// An empty keyword matches every public package.
func (s *Files) SearchDataPackages(ctx context.Context, keyword string) ([]DataPackage, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: search data packages: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+packageColumns+` FROM data_packages
		WHERE privacy = 0 AND (?1 = '' OR name = ?1 OR submission_user = ?1
			OR EXISTS (SELECT 1 FROM json_each(data_packages.keywords) WHERE json_each.value = ?1))
		ORDER BY submitted_at DESC, id DESC`, keyword)
	if err != nil {
		return nil, s.wrapErr("search data packages", err)
	}
	defer rows.Close()
	out := []DataPackage{}
	for rows.Next() {
		p, err := scanPackage(rows)
		if err != nil {
			return nil, s.wrapErr("search data packages", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr("search data packages", err)
	}
	return out, nil
}
