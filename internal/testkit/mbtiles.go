package testkit

import (
	"bytes"
	"database/sql"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"testing"

	_ "modernc.org/sqlite" // MBTiles fixtures are SQLite files
)

// Tile is one tile of an MBTiles fixture, addressed the XYZ way (y counted
// from the north, as map clients ask for it); WriteMBTiles stores it in
// MBTiles' TMS row order.
type Tile struct {
	Z, X, Y int
	Data    []byte
}

// WriteMBTiles writes an MBTiles file at path with the metadata rows given
// (name, format, minzoom, maxzoom, bounds, ...) and the tiles.
func WriteMBTiles(t testing.TB, path string, meta map[string]string, tiles []Tile) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{
		`CREATE TABLE metadata (name TEXT, value TEXT)`,
		`CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB)`,
		`CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row)`,
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("mbtiles fixture: %v", err)
		}
	}
	for k, v := range meta {
		if _, err := db.Exec(`INSERT INTO metadata (name, value) VALUES (?, ?)`, k, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, tl := range tiles {
		row := (1 << tl.Z) - 1 - tl.Y
		if _, err := db.Exec(`INSERT INTO tiles (zoom_level, tile_column, tile_row, tile_data) VALUES (?, ?, ?, ?)`,
			tl.Z, tl.X, row, tl.Data); err != nil {
			t.Fatal(err)
		}
	}
}

// PNGTile is a 256×256 PNG whose colour tells z, x and y apart, with a
// darker border, so a screenshot shows the tile grid.
func PNGTile(t testing.TB, z, x, y int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 256, 256))
	fill := color.RGBA{uint8(40 + 50*z), uint8(80 + (x*67)%120), uint8(90 + (y*89)%120), 255}
	border := color.RGBA{fill.R / 2, fill.G / 2, fill.B / 2, 255}
	for py := 0; py < 256; py++ {
		for px := 0; px < 256; px++ {
			c := fill
			if px < 2 || py < 2 || px > 253 || py > 253 {
				c = border
			}
			img.Set(px, py, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// PyramidTiles is every tile of zoom levels 0 to maxZoom as PNGTile.
func PyramidTiles(t testing.TB, maxZoom int) []Tile {
	t.Helper()
	var out []Tile
	for z := 0; z <= maxZoom; z++ {
		for x := 0; x < 1<<z; x++ {
			for y := 0; y < 1<<z; y++ {
				out = append(out, Tile{Z: z, X: x, Y: y, Data: PNGTile(t, z, x, y)})
			}
		}
	}
	return out
}

// MBTilesMeta is the usual metadata of a PNG fixture.
func MBTilesMeta(name string, minZoom, maxZoom int) map[string]string {
	return map[string]string{
		"name": name, "format": "png", "type": "baselayer", "version": "1",
		"minzoom": fmt.Sprint(minZoom), "maxzoom": fmt.Sprint(maxZoom), "bounds": "-180,-85.0511,180,85.0511",
	}
}
