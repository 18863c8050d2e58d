package store

// The enterprise sync search of the client API (api.md §4.2): public
// packages by keyword.

import (
	"context"
)

// SearchDataPackages lists the public packages (Privacy 0) that carry
// keyword among their enterprise sync keywords (SyncKeywords: the stored
// keywords, the file name, the submitter), newest submission first: the
// client API's search (api.md §4.2), where private packages never appear.
// An empty keyword matches every public package. For tests and short
// lists; the search itself uses EachSearchDataPackage.
func (s *Files) SearchDataPackages(ctx context.Context, keyword string) ([]DataPackage, error) {
	return collect(func(fn func(DataPackage) error) error { return s.EachSearchDataPackage(ctx, keyword, fn) })
}

// EachSearchDataPackage calls fn with each package SearchDataPackages
// lists, as they are read.
func (s *Files) EachSearchDataPackage(ctx context.Context, keyword string, fn func(DataPackage) error) error {
	return s.eachPackage(ctx, "search data packages", `SELECT `+packageColumns+` FROM data_packages
		WHERE privacy = 0 AND (?1 = '' OR name = ?1 OR submission_user = ?1
			OR EXISTS (SELECT 1 FROM json_each(data_packages.keywords) WHERE json_each.value = ?1))
		ORDER BY submitted_at DESC, id DESC`, []any{keyword}, fn)
}
