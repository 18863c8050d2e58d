package store

// The file manager's listing of the client API (GET
// /Marti/api/files/metadata and its count, api-marti.md "Files"): the
// packages a reader may see, filtered by name, by the missionpackage
// keyword or by mission, sorted and paged in SQL, so a page costs its rows
// whatever the table holds.

import (
	"context"
	"fmt"
	"strings"
)

// File sort orders of FileQuery.Sort.
const (
	FileSortTime = "time" // submission time (the default: newest first)
	FileSortName = "name"
	FileSortSize = "size"
)

// FileQuery selects data packages for a reader.
type FileQuery struct {
	// Sees is the reader's mask (access.md "Groups"); Owner the name its
	// own packages are recorded under, which it sees whatever their groups
	// ("" for none).
	Sees  uint64
	Owner string
	// Name keeps the packages of this file name ("" any).
	Name string
	// MissionPackages keeps the packages tagged MissionPackageKeyword.
	MissionPackages bool
	// Mission keeps the files of the mission of this name ("" any).
	Mission string
	// Sort is FileSortTime (""), FileSortName or FileSortSize; Ascending
	// orders it from the oldest, the first name, the smallest. Without a
	// Sort the newest come first.
	Sort      string
	Ascending bool
	// Limit is the most packages listed (0: all), after skipping Offset.
	Limit, Offset int
}

// where is q's condition and its arguments (over data_packages d).
func (q FileQuery) where() (string, []any) {
	seen, args := seenBy("d.groups", q.Sees)
	conds := []string{"(" + seen + " OR (d.owner <> '' AND d.owner = ?))"}
	args = append(args, q.Owner)
	if q.Name != "" {
		conds, args = append(conds, "d.name = ?"), append(args, q.Name)
	}
	if q.MissionPackages {
		conds = append(conds, "EXISTS (SELECT 1 FROM json_each(d.keywords) WHERE json_each.value = ?)")
		args = append(args, MissionPackageKeyword)
	}
	if q.Mission != "" {
		conds = append(conds, `d.id IN (SELECT c.package_id FROM mission_contents c JOIN missions m ON m.id = c.mission_id WHERE m.name = ?)`)
		args = append(args, q.Mission)
	}
	return strings.Join(conds, " AND "), args
}

// order is q's ORDER BY, complete (the id breaks ties).
func (q FileQuery) order() (string, error) {
	dir := "DESC"
	if q.Ascending {
		dir = "ASC"
	}
	switch q.Sort {
	case "":
		return "d.submitted_at DESC, d.id DESC", nil
	case FileSortTime:
		return "d.submitted_at " + dir + ", d.id " + dir, nil
	case FileSortName:
		return "d.name " + dir + ", d.id " + dir, nil
	case FileSortSize:
		return "d.size " + dir + ", d.id " + dir, nil
	}
	return "", fmt.Errorf("%w: sort %q is not one of %s, %s, %s", ErrInvalid, q.Sort, FileSortTime, FileSortName, FileSortSize)
}

// EachFile calls fn with each package q selects, in q's order, as they are
// read.
func (s *Files) EachFile(ctx context.Context, q FileQuery, fn func(DataPackage) error) error {
	const op = "list files"
	order, err := q.order()
	if err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	if q.Limit < 0 || q.Offset < 0 {
		return fmt.Errorf("store: %s: %w: limit and offset must not be negative", op, ErrInvalid)
	}
	where, args := q.where()
	from := `data_packages d WHERE ` + where
	if q.Limit > 0 || q.Offset > 0 {
		// The page first, then read in chunks like any listing.
		limit := int64(q.Limit)
		if limit == 0 {
			limit = -1 // SQLite: no limit
		}
		from = `(SELECT d.* FROM ` + from + ` ORDER BY ` + order + ` LIMIT ? OFFSET ?) d`
		args = append(args, limit, q.Offset)
	}
	cols := "d." + strings.ReplaceAll(packageColumns, ", ", ", d.")
	return s.eachPackage(ctx, op, `SELECT `+cols+` FROM `+from+` ORDER BY `+order, args, fn)
}

// CountFiles is how many packages q selects, Limit and Offset aside.
func (s *Files) CountFiles(ctx context.Context, q FileQuery) (int64, error) {
	const op = "count files"
	if err := s.check(ctx); err != nil {
		return 0, fmt.Errorf("store: %s: %w", op, err)
	}
	where, args := q.where()
	var n int64
	if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM data_packages d WHERE `+where, args...).Scan(&n); err != nil {
		return 0, s.wrapErr(op, err)
	}
	return n, nil
}
