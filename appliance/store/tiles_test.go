package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outpost/internal/testkit"
)

func writeTiles(t *testing.T, meta map[string]string, tiles []testkit.Tile) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "map.mbtiles")
	testkit.WriteMBTiles(t, p, meta, tiles)
	return p
}

func TestOpenTilesMetadataAndTMSRows(t *testing.T) {
	ctx := context.Background()
	tile := testkit.PNGTile(t, 2, 1, 0)
	p := writeTiles(t, map[string]string{"name": "Area\x00 North", "format": "png", "minzoom": "0", "maxzoom": "2",
		"bounds": "-10.5,40,5,52.25", "attribution": "survey"}, []testkit.Tile{{Z: 2, X: 1, Y: 0, Data: tile}})
	ts, err := OpenTiles(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	m := ts.Meta()
	if m.Format != TileFormatPNG || m.MinZoom != 0 || m.MaxZoom != 2 || !m.HasBounds ||
		m.Bounds != [4]float64{-10.5, 40, 5, 52.25} || m.Attribution != "survey" {
		t.Fatalf("meta = %+v", m)
	}
	// WriteMBTiles stored XYZ y=0 at TMS row 3 at zoom 2.
	got, err := ts.Tile(ctx, 2, 1, 3)
	if err != nil || !bytes.Equal(got, tile) {
		t.Fatalf("Tile(2,1,row 3) = %d bytes, %v", len(got), err)
	}
	if _, err := ts.Tile(ctx, 2, 1, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing tile: %v, want ErrNotFound", err)
	}
	for _, c := range [][3]int{{-1, 0, 0}, {31, 0, 0}, {2, 4, 0}, {2, 0, 4}, {2, -1, 0}} {
		if _, err := ts.Tile(ctx, c[0], c[1], c[2]); !errors.Is(err, ErrInvalid) {
			t.Errorf("Tile%v: %v, want ErrInvalid", c, err)
		}
	}
}

func TestOpenTilesFillsWhatMetadataLacks(t *testing.T) {
	jpeg := append([]byte{0xff, 0xd8, 0xff, 0xe0}, make([]byte, 20)...)
	p := writeTiles(t, map[string]string{"name": "no format"}, []testkit.Tile{
		{Z: 3, X: 0, Y: 0, Data: jpeg}, {Z: 5, X: 1, Y: 1, Data: jpeg},
	})
	ts, err := OpenTiles(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	if m := ts.Meta(); m.Format != TileFormatJPEG || m.MinZoom != 3 || m.MaxZoom != 5 || m.HasBounds {
		t.Fatalf("meta = %+v", m)
	}
}

func TestOpenTilesRefuses(t *testing.T) {
	png := testkit.PNGTile(t, 0, 0, 0)
	notSQLite := filepath.Join(t.TempDir(), "x.mbtiles")
	os.WriteFile(notSQLite, []byte("this is not a database, just text of some length"), 0o600)
	cases := []struct {
		name, path, want string
	}{
		{"vector tiles", writeTiles(t, map[string]string{"format": "pbf"}, []testkit.Tile{{Data: png}}), "vector tiles"},
		{"unknown format", writeTiles(t, map[string]string{"format": "tiff"}, []testkit.Tile{{Data: png}}), "not png"},
		{"no tiles", writeTiles(t, map[string]string{"format": "png"}, nil), "holds no tiles"},
		{"format unrecognisable", writeTiles(t, map[string]string{}, []testkit.Tile{{Data: []byte("GIF89a....")}}), "not PNG, JPEG or WebP"},
		{"bad zoom range", writeTiles(t, map[string]string{"format": "png", "minzoom": "0", "maxzoom": "40"}, []testkit.Tile{{Data: png}}), "zoom levels"},
		{"not sqlite", notSQLite, ""},
		{"missing", filepath.Join(t.TempDir(), "none.mbtiles"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts, err := OpenTiles(context.Background(), c.path)
			if err == nil {
				ts.Close()
				t.Fatal("opened")
			}
			if c.want != "" && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("err = %v, want ErrInvalid containing %q", err, c.want)
			}
		})
	}
}

func TestOpenTilesIsReadOnly(t *testing.T) {
	p := writeTiles(t, testkit.MBTilesMeta("ro", 0, 0), []testkit.Tile{{Data: testkit.PNGTile(t, 0, 0, 0)}})
	before, _ := os.ReadFile(p)
	ts, err := OpenTiles(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.db.Exec(`DELETE FROM tiles`); err == nil {
		t.Fatal("a write went through")
	}
	ts.Close()
	after, _ := os.ReadFile(p)
	if !bytes.Equal(before, after) {
		t.Fatal("the file changed")
	}
}

func TestNewestPackageWithKeyword(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	if _, err := s.Files().NewestPackageWithKeyword(ctx, "basemap"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("empty store: %v", err)
	}
	put := func(name string, kw []string, at time.Time) DataPackage {
		p, err := s.Files().PutDataPackage(ctx, DataPackageInput{Name: name, Keywords: kw, SubmittedAt: at}, strings.NewReader(name+" content"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	t0 := time.Now().Add(-time.Hour)
	put("old.mbtiles", []string{"missionpackage", "BaseMap"}, t0)
	newer := put("new.mbtiles", []string{"basemap"}, t0.Add(time.Minute))
	put("other.zip", []string{"missionpackage", "basemapx"}, t0.Add(2*time.Minute))
	got, err := s.Files().NewestPackageWithKeyword(ctx, "basemap")
	if err != nil || got.PrimaryKey != newer.PrimaryKey {
		t.Fatalf("got %+v, %v; want %s", got, err, newer.Name)
	}
}
