package store

// MBTiles basemaps (console.md "Offline basemap"): a raster tile set in its own
// SQLite file (the MBTiles 1.3 layout: a metadata table of name/value rows
// and a tiles table or view of zoom_level, tile_column, tile_row and
// tile_data, rows in TMS order). OpenTiles opens such a file read-only
// beside the store's own database; nothing is ever written to it.

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"outpost/appliance/logx"
)

// Tile formats OpenTiles serves (MBTiles metadata "format").
const (
	TileFormatPNG  = "png"
	TileFormatJPEG = "jpg"
	TileFormatWebP = "webp"
)

// MaxTileZoom is the deepest zoom level a tile request may name.
const MaxTileZoom = 30

// TilesMeta describes a tile set.
type TilesMeta struct {
	Name        string
	Format      string // TileFormatPNG, TileFormatJPEG or TileFormatWebP
	MinZoom     int
	MaxZoom     int
	Bounds      [4]float64 // west, south, east, north (degrees); valid when HasBounds
	HasBounds   bool
	Attribution string
}

// Tiles is an MBTiles file opened read-only. It is safe for concurrent use.
type Tiles struct {
	db   *sql.DB
	meta TilesMeta
}

// OpenTiles opens the MBTiles file at path read-only and reads its metadata.
// A file that is not SQLite, has no tiles table, or holds vector tiles
// (format pbf) is refused with ErrInvalid.
func OpenTiles(ctx context.Context, path string) (*Tiles, error) {
	dsn, err := buildDSN(path, []string{"busy_timeout(5000)", "query_only(1)"}, "mode=ro")
	if err != nil {
		return nil, fmt.Errorf("store: open tiles: %w", err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open tiles: %w", err)
	}
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	t := &Tiles{db: db}
	if err := t.readMeta(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open tiles %s: %w", path, err)
	}
	return t, nil
}

// Meta is the tile set's metadata.
func (t *Tiles) Meta() TilesMeta { return t.meta }

// Close closes the file; queries under way finish first.
func (t *Tiles) Close() error { return t.db.Close() }

// Tile returns the image at zoom z, column x and TMS row (MBTiles counts rows
// from the south: row = 2^z - 1 - y of the XYZ scheme). ErrNotFound when the
// set has no such tile, ErrInvalid for coordinates outside the zoom level.
func (t *Tiles) Tile(ctx context.Context, z, x, row int) ([]byte, error) {
	if z < 0 || z > MaxTileZoom {
		return nil, fmt.Errorf("store: tile: %w: zoom %d outside 0..%d", ErrInvalid, z, MaxTileZoom)
	}
	n := 1 << z
	if x < 0 || x >= n || row < 0 || row >= n {
		return nil, fmt.Errorf("store: tile: %w: column or row outside 0..%d at zoom %d", ErrInvalid, n-1, z)
	}
	var data []byte
	err := t.db.QueryRowContext(ctx, `SELECT tile_data FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?`,
		z, x, row).Scan(&data)
	switch {
	case errors.Is(err, sql.ErrNoRows) || (err == nil && len(data) == 0):
		return nil, fmt.Errorf("store: tile %d/%d/%d: %w", z, x, row, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("store: tile %d/%d/%d: %w", z, x, row, err)
	}
	return data, nil
}

// readMeta reads the metadata table and fills what it lacks from the tiles
// themselves (zoom range, format from the first tile's signature).
func (t *Tiles) readMeta(ctx context.Context) error {
	kv := map[string]string{}
	rows, err := t.db.QueryContext(ctx, `SELECT name, value FROM metadata`)
	if err != nil {
		return fmt.Errorf("%w: not an MBTiles file (no metadata table): %w", ErrInvalid, err)
	}
	for rows.Next() {
		var k, v sql.NullString
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return fmt.Errorf("metadata: %w", err)
		}
		if len(kv) < 1000 {
			kv[strings.ToLower(strings.TrimSpace(k.String))] = strings.TrimSpace(v.String)
		}
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	m := TilesMeta{Name: logx.Truncate(kv["name"], 200), Attribution: logx.Truncate(kv["attribution"], 500)}

	// The zoom range from the metadata; from the tiles only when it lacks
	// one (that query may scan a large set).
	minZ, errMin := strconv.Atoi(kv["minzoom"])
	maxZ, errMax := strconv.Atoi(kv["maxzoom"])
	var one int
	if err := t.db.QueryRowContext(ctx, `SELECT 1 FROM tiles LIMIT 1`).Scan(&one); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: the file holds no tiles", ErrInvalid)
		}
		return fmt.Errorf("%w: not an MBTiles file (no tiles table): %w", ErrInvalid, err)
	}
	if errMin != nil || errMax != nil {
		var lo, hi sql.NullInt64
		if err := t.db.QueryRowContext(ctx, `SELECT MIN(zoom_level), MAX(zoom_level) FROM tiles`).Scan(&lo, &hi); err != nil {
			return fmt.Errorf("reading the zoom levels: %w", err)
		}
		minZ, maxZ = int(lo.Int64), int(hi.Int64)
	}
	m.MinZoom, m.MaxZoom = minZ, maxZ
	if m.MinZoom < 0 || m.MaxZoom > MaxTileZoom || m.MinZoom > m.MaxZoom {
		return fmt.Errorf("%w: zoom levels %d..%d outside 0..%d", ErrInvalid, m.MinZoom, m.MaxZoom, MaxTileZoom)
	}

	switch f := strings.ToLower(kv["format"]); f {
	case "png":
		m.Format = TileFormatPNG
	case "jpg", "jpeg":
		m.Format = TileFormatJPEG
	case "webp":
		m.Format = TileFormatWebP
	case "pbf", "mvt":
		return fmt.Errorf("%w: vector tiles (format %s) are not supported; use a raster MBTiles file", ErrInvalid, f)
	case "":
		var first []byte
		if err := t.db.QueryRowContext(ctx, `SELECT tile_data FROM tiles LIMIT 1`).Scan(&first); err != nil {
			return fmt.Errorf("reading a tile: %w", err)
		}
		if m.Format = sniffTileFormat(first); m.Format == "" {
			return fmt.Errorf("%w: no format in the metadata and the tiles are not PNG, JPEG or WebP", ErrInvalid)
		}
	default:
		return fmt.Errorf("%w: tile format %q is not png, jpg or webp", ErrInvalid, logx.Truncate(f, 32))
	}
	m.Bounds, m.HasBounds = parseBounds(kv["bounds"])
	t.meta = m
	return nil
}

// sniffTileFormat recognises PNG, JPEG and WebP by their signatures.
func sniffTileFormat(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return TileFormatPNG
	case bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}):
		return TileFormatJPEG
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return TileFormatWebP
	}
	return ""
}

// parseBounds reads "west,south,east,north".
func parseBounds(s string) ([4]float64, bool) {
	var b [4]float64
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return b, false
	}
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return b, false
		}
		b[i] = v
	}
	if b[0] < -180 || b[2] > 180 || b[1] < -90 || b[3] > 90 || b[1] > b[3] {
		return b, false
	}
	return b, true
}

// NewestPackageWithKeyword returns the most recently submitted data package
// carrying keyword (compared without regard to case); ErrNotFound when none
// does. The appliance finds an uploaded basemap with it.
func (s *Files) NewestPackageWithKeyword(ctx context.Context, keyword string) (DataPackage, error) {
	if err := s.check(ctx); err != nil {
		return DataPackage{}, fmt.Errorf("store: package with keyword: %w", err)
	}
	p, err := scanPackage(s.r.QueryRowContext(ctx, `SELECT `+packageColumns+` FROM data_packages
		WHERE EXISTS (SELECT 1 FROM json_each(data_packages.keywords) k WHERE lower(k.value) = lower(?))
		ORDER BY submitted_at DESC, id DESC LIMIT 1`, keyword))
	if errors.Is(err, sql.ErrNoRows) {
		return DataPackage{}, fmt.Errorf("store: package with keyword %q: %w", keyword, ErrNotFound)
	}
	if err != nil {
		return DataPackage{}, s.wrapErr("package with keyword", err)
	}
	return p, nil
}
