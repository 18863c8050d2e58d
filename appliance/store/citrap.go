package store

// CI-TRAP reports (docs/api-marti.md "CI-TRAP reports"): a report arrives
// as a mission package holding its XML; the package is kept as a data
// package and the report's fields in citrap_reports, both committed in one
// transaction. Who sees a report is who sees its package.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// CitrapKeyword tags the data packages of CI-TRAP reports.
const CitrapKeyword = "citrap"

// CitrapReport is one report's fields (the attributes of its <report>).
type CitrapReport struct {
	ID                  string
	Type                string
	Title               string
	UserCallsign        string
	UserDescription     string
	DateTime            string    // as given
	When                time.Time // DateTime read as a time (zero: none)
	DateTimeDescription string
	Location            string // WKT, as given
	LocationDescription string
	EventScale          string
	Importance          string
	Status              string
	// Extent is the box of the location's coordinates (min lon, min lat,
	// max lon, max lat); HasExtent is false when it has none.
	Extent    [4]float64
	HasExtent bool
	XML       string // the report as posted
	Created   time.Time

	// The package holding it, and who may see and change it.
	PackageID int64
	Hash      string
	Groups    uint64
	Owner     string
}

// PutCitrapReport stores the mission package read from r as a data package
// (in) and rep as its report, in one transaction. A report of the same id
// is replaced, and its former package, when another, deleted. Errors: those
// of PutDataPackage, and ErrConflict when the content is another report's
// package already; nothing is stored then.
func (s *Files) PutCitrapReport(ctx context.Context, in DataPackageInput, r io.Reader, rep CitrapReport) (CitrapReport, error) {
	var gone []int64 // blobs of replaced packages, purged after the commit
	p, err := s.putDataPackage(ctx, in, r, func(tx *sql.Tx, p DataPackage) error {
		var old, oldBlob int64
		err := tx.QueryRowContext(ctx, `SELECT r.package_id, d.blob_id FROM citrap_reports r JOIN data_packages d ON d.id = r.package_id
			WHERE r.id = ?`, rep.ID).Scan(&old, &oldBlob)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			if _, err := tx.ExecContext(ctx, `DELETE FROM citrap_reports WHERE id = ?`, rep.ID); err != nil {
				return err
			}
			if old != p.PrimaryKey {
				if _, err := tx.ExecContext(ctx, `DELETE FROM data_packages WHERE id = ?`, old); err != nil {
					return err
				}
				if err := markBlobDeleting(ctx, tx, oldBlob); err != nil {
					return err
				}
				gone = append(gone, oldBlob)
			}
		}
		var extent [4]any
		if rep.HasExtent {
			for i, v := range rep.Extent {
				extent[i] = v
			}
		}
		when := int64(0)
		if !rep.When.IsZero() {
			when = unixMilli(rep.When)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO citrap_reports(id, package_id, type, title, user_callsign, user_description,
			date_time, date_time_ms, date_time_description, location, location_description, event_scale, importance, status,
			min_lon, min_lat, max_lon, max_lat, created_at, xml) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			rep.ID, p.PrimaryKey, rep.Type, rep.Title, rep.UserCallsign, rep.UserDescription, rep.DateTime, when,
			rep.DateTimeDescription, rep.Location, rep.LocationDescription, rep.EventScale, rep.Importance, rep.Status,
			extent[0], extent[1], extent[2], extent[3], unixMilli(rep.Created), rep.XML)
		if isUniqueViolation(err) {
			return fmt.Errorf("%w: this content is the package of another report already", ErrConflict)
		}
		return err
	})
	if err != nil {
		return CitrapReport{}, err
	}
	for _, id := range gone {
		if err := s.purgeBlob(context.WithoutCancel(ctx), id); err != nil {
			s.log.Warn("could not remove a replaced report's blob; it will be removed at next start", "blob", id, "err", err)
		}
	}
	rep.PackageID, rep.Hash, rep.Groups, rep.Owner = p.PrimaryKey, p.Hash, p.Groups, p.Owner
	return rep, nil
}

const citrapColumns = `r.id, r.type, r.title, r.user_callsign, r.user_description, r.date_time, r.date_time_ms,
	r.date_time_description, r.location, r.location_description, r.event_scale, r.importance, r.status,
	r.min_lon IS NOT NULL, COALESCE(r.min_lon, 0), COALESCE(r.min_lat, 0), COALESCE(r.max_lon, 0), COALESCE(r.max_lat, 0),
	r.created_at, r.package_id, d.hash, d.groups, d.owner`

// scanCitrap reads citrapColumns, and the XML when withXML (the column
// after them).
func scanCitrap(sc scanner, withXML bool) (CitrapReport, error) {
	var (
		r             CitrapReport
		when, created int64
		groups        int64
	)
	dest := []any{&r.ID, &r.Type, &r.Title, &r.UserCallsign, &r.UserDescription, &r.DateTime, &when,
		&r.DateTimeDescription, &r.Location, &r.LocationDescription, &r.EventScale, &r.Importance, &r.Status,
		&r.HasExtent, &r.Extent[0], &r.Extent[1], &r.Extent[2], &r.Extent[3], &created, &r.PackageID, &r.Hash, &groups, &r.Owner}
	if withXML {
		dest = append(dest, &r.XML)
	}
	if err := sc.Scan(dest...); err != nil {
		return CitrapReport{}, err
	}
	if when != 0 {
		r.When = fromMilli(when)
	}
	r.Created, r.Groups = fromMilli(created), maskFromDB(groups)
	return r, nil
}

// CitrapReport returns the report with this id, its XML included.
func (s *Files) CitrapReport(ctx context.Context, id string) (CitrapReport, error) {
	const op = "CI-TRAP report"
	if err := s.check(ctx); err != nil {
		return CitrapReport{}, fmt.Errorf("store: %s: %w", op, err)
	}
	r, err := scanCitrap(s.r.QueryRowContext(ctx, `SELECT `+citrapColumns+`, r.xml FROM citrap_reports r
		JOIN data_packages d ON d.id = r.package_id WHERE r.id = ?`, id), true)
	if errors.Is(err, sql.ErrNoRows) {
		return CitrapReport{}, fmt.Errorf("store: %s: %w: no report %q", op, ErrNotFound, id)
	}
	if err != nil {
		return CitrapReport{}, s.wrapErr(op, err)
	}
	return r, nil
}

// CitrapQuery selects reports for a reader.
type CitrapQuery struct {
	Sees  uint64 // the reader's mask
	Owner string // its own reports, whatever their groups ("" none)
	// Keywords: a report one of whose text fields contains one of them
	// (case-insensitively); Types and Callsigns: reports of one of these
	// types, by one of these callsigns. Empty: any.
	Keywords, Types, Callsigns []string
	From, To                   time.Time // of DateTime (zero: open)
	// BBox keeps the reports whose location's extent meets the box (min
	// lon, min lat, max lon, max lat) when HasBBox.
	BBox    [4]float64
	HasBBox bool
	Limit   int  // at most this many (newest DateTime first); 0: all
	WithXML bool // read each report's XML too
}

// citrapText are the fields keywords= searches.
var citrapText = []string{"r.id", "r.type", "r.title", "r.user_callsign", "r.user_description", "r.date_time_description",
	"r.location_description", "r.event_scale", "r.importance", "d.hash"}

// EachCitrapReport calls fn with each report q selects, newest DateTime
// first, as they are read.
func (s *Files) EachCitrapReport(ctx context.Context, q CitrapQuery, fn func(CitrapReport) error) error {
	seen, args := seenBy("d.groups", q.Sees)
	conds := []string{"(" + seen + " OR (d.owner <> '' AND d.owner = ?))"}
	args = append(args, q.Owner)
	anyOf := func(values []string, cond func(v string) string) {
		if len(values) == 0 {
			return
		}
		or := make([]string, 0, len(values))
		for _, v := range values {
			or = append(or, cond(v))
		}
		conds = append(conds, "("+strings.Join(or, " OR ")+")")
	}
	anyOf(q.Keywords, func(k string) string {
		or := make([]string, 0, len(citrapText))
		for _, col := range citrapText {
			or = append(or, "instr(lower("+col+"), lower(?)) > 0")
			args = append(args, k)
		}
		return strings.Join(or, " OR ")
	})
	anyOf(q.Types, func(t string) string { args = append(args, t); return "r.type = ?" })
	anyOf(q.Callsigns, func(c string) string { args = append(args, c); return "r.user_callsign = ?" })
	if !q.From.IsZero() {
		conds, args = append(conds, "r.date_time_ms >= ?"), append(args, unixMilli(q.From))
	}
	if !q.To.IsZero() {
		conds, args = append(conds, "r.date_time_ms <= ?"), append(args, unixMilli(q.To))
	}
	if q.HasBBox {
		conds = append(conds, "r.min_lon <= ? AND r.max_lon >= ? AND r.min_lat <= ? AND r.max_lat >= ?")
		args = append(args, q.BBox[2], q.BBox[0], q.BBox[3], q.BBox[1])
	}
	cols := citrapColumns
	if q.WithXML {
		cols += ", r.xml"
	}
	query := `SELECT ` + cols + ` FROM citrap_reports r JOIN data_packages d ON d.id = r.package_id WHERE ` +
		strings.Join(conds, " AND ") + ` ORDER BY r.date_time_ms DESC, r.id`
	chunk := listChunk
	if q.WithXML {
		chunk = 16 // their XML is up to maxCitrapXML each
	}
	if q.Limit > 0 && q.Limit < chunk {
		chunk = q.Limit
	}
	n := 0
	err := eachRow(s.db, ctx, "list CI-TRAP reports", query, args, chunk,
		func(sc scanner) (CitrapReport, error) { return scanCitrap(sc, q.WithXML) },
		func(r CitrapReport) error {
			if q.Limit > 0 && n == q.Limit {
				return errEnough
			}
			n++
			return fn(r)
		})
	if errors.Is(err, errEnough) {
		return nil
	}
	return err
}

// errEnough ends a listing that has listed its limit.
var errEnough = errors.New("store: listing limit reached")
