package mgmt

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outpost/appliance/httpapi"
	"outpost/internal/testkit"
)

// tileServer serves a basemap file with the given format and tiles.
func tileServer(t *testing.T, format string, tiles []testkit.Tile, opts Options) *httptest.Server {
	t.Helper()
	p := filepath.Join(t.TempDir(), "area.mbtiles")
	meta := testkit.MBTilesMeta("Test area", 0, 3)
	meta["format"] = format
	testkit.WriteMBTiles(t, p, meta, tiles)
	opts.BasemapPath = p
	opts.Logger = testkit.Discard()
	a := New(opts)
	t.Cleanup(func() { a.Close() })
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	return srv
}

func TestTileRoute(t *testing.T) {
	tiles := testkit.PyramidTiles(t, 2)
	byXYZ := map[string][]byte{}
	for _, tl := range tiles {
		byXYZ[fmt.Sprintf("%d/%d/%d", tl.Z, tl.X, tl.Y)] = tl.Data
	}
	srv := tileServer(t, "png", tiles, Options{})
	cases := []struct {
		path    string
		status  int
		tile    string // the XYZ tile expected in the body
		message string
	}{
		{"/tiles/0/0/0", 200, "0/0/0", ""},
		{"/tiles/2/1/0", 200, "2/1/0", ""}, // northern row: TMS row 3
		{"/tiles/2/1/3", 200, "2/1/3", ""}, // southern row: TMS row 0
		{"/tiles/2/3/2.png", 200, "2/3/2", ""},
		{"/tiles/2/3/2.PNG", 200, "2/3/2", ""},
		{"/tiles/3/0/0", 404, "", "tile 3/0/0: not in the basemap"},
		{"/tiles/2/4/0", 400, "", "x: must be a whole number from 0 to 3"},
		{"/tiles/2/0/4", 400, "", "y: must be a whole number from 0 to 3"},
		{"/tiles/31/0/0", 400, "", "z: must be a whole number from 0 to 30"},
		{"/tiles/-1/0/0", 400, "", "z: must be"},
		{"/tiles/1/+1/0", 400, "", "x: must be"},
		{"/tiles/1/0/0x1", 400, "", "y: must be"},
		{"/tiles/1/0/0.gif", 400, "", "y: must be a whole number, optionally followed by .png"},
		{"/tiles/1/0/0.png.png", 400, "", "y: must be"},
		{"/tiles/a/0/0", 400, "", "z: must be"},
		{"/tiles/99999999999/0/0", 400, "", "z: must be"},
		{"/tiles/1/0", 400, "", "path: a tile is /tiles/{z}/{x}/{y}"},
		{"/tiles/1/0/0/0", 400, "", "path: a tile is"},
		{"/tiles/", 400, "", "path: a tile is"},
	}
	for _, c := range cases {
		resp, body := get(t, srv.URL+c.path)
		if resp.StatusCode != c.status {
			t.Errorf("%s = %d, want %d: %s", c.path, resp.StatusCode, c.status, body)
			continue
		}
		if c.status == 200 {
			if resp.Header.Get("Content-Type") != "image/png" || !bytes.Equal(body, byXYZ[c.tile]) {
				t.Errorf("%s: %q, %d bytes; want tile %s", c.path, resp.Header.Get("Content-Type"), len(body), c.tile)
			}
			if resp.Header.Get("Cache-Control") != "public, max-age=300" || resp.Header.Get("ETag") == "" {
				t.Errorf("%s: cache headers %v", c.path, resp.Header)
			}
			continue
		}
		var m httpapi.Message
		if json.Unmarshal(body, &m) != nil || !strings.Contains(m.Message, c.message) {
			t.Errorf("%s: body %s, want a message containing %q", c.path, body, c.message)
		}
	}
	// A tile's ETag revalidates.
	resp, _ := get(t, srv.URL+"/tiles/1/1/1")
	resp2, body := get(t, srv.URL+"/tiles/1/1/1", "If-None-Match", resp.Header.Get("ETag"))
	if resp2.StatusCode != 304 || len(body) != 0 {
		t.Fatalf("revalidation: %d", resp2.StatusCode)
	}
}

func TestTileContentTypes(t *testing.T) {
	jpeg := append([]byte{0xff, 0xd8, 0xff, 0xe0}, make([]byte, 32)...)
	webp := []byte("RIFF\x10\x00\x00\x00WEBPVP8 ")
	for format, want := range map[string]struct {
		ctype string
		data  []byte
	}{
		"png": {"image/png", testkit.PNGTile(t, 0, 0, 0)}, "jpg": {"image/jpeg", jpeg}, "jpeg": {"image/jpeg", jpeg},
		"webp": {"image/webp", webp}, "": {"image/jpeg", jpeg}, // no format: recognised from the tiles
	} {
		srv := tileServer(t, format, []testkit.Tile{{Data: want.data}}, Options{})
		resp, body := get(t, srv.URL+"/tiles/0/0/0")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != want.ctype || !bytes.Equal(body, want.data) {
			t.Errorf("format %q: %d %q", format, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
}

func TestTilesWithoutBasemap(t *testing.T) {
	srv := httptest.NewServer(New(Options{Logger: testkit.Discard()}))
	defer srv.Close()
	for _, p := range []string{"/tiles/0/0/0", "/tiles/mapsource.xml"} {
		resp, body := get(t, srv.URL+p)
		if resp.StatusCode != 404 || !strings.Contains(string(body), "no basemap") {
			t.Errorf("%s = %d %s", p, resp.StatusCode, body)
		}
	}
	resp, body := get(t, srv.URL+"/tiles/metadata.json")
	var m tileMetadataItem
	if resp.StatusCode != 200 || json.Unmarshal(body, &m) != nil || m.Basemap || m.Tiles != "/tiles/{z}/{x}/{y}" {
		t.Fatalf("metadata without basemap: %d %s", resp.StatusCode, body)
	}
	// A basemapPath that cannot be opened serves nothing (and is logged).
	logs := &testkit.Buffer{}
	a := New(Options{BasemapPath: filepath.Join(t.TempDir(), "missing.mbtiles"), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	srv2 := httptest.NewServer(a)
	defer srv2.Close()
	if resp, _ := get(t, srv2.URL+"/tiles/0/0/0"); resp.StatusCode != 404 {
		t.Fatalf("missing basemap file: %d", resp.StatusCode)
	}
	if !strings.Contains(logs.String(), "basemapPath file cannot be read") {
		t.Fatalf("not logged: %s", logs.String())
	}
}

func TestTileMetadata(t *testing.T) {
	srv := tileServer(t, "png", testkit.PyramidTiles(t, 1), Options{})
	resp, body := get(t, srv.URL+"/tiles/metadata.json")
	var m tileMetadataItem
	if err := json.Unmarshal(body, &m); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if !m.Basemap || m.Name != "Test area" || m.Format != "png" || m.MinZoom != 0 || m.MaxZoom != 3 ||
		m.Bounds == nil || m.Bounds[3] != 85.0511 || m.Source != "basemapPath" || m.MapSource != "/tiles/mapsource.xml" {
		t.Fatalf("metadata = %+v", m)
	}
}

// TestMapSourceXML: the ATAK custom map source names the tiles on
// publicHost and the port the request came in on, with MOBAC's element
// names and {$z}/{$x}/{$y} placeholders.
func TestMapSourceXML(t *testing.T) {
	srv := tileServer(t, "png", testkit.PyramidTiles(t, 0), Options{PublicHost: "10.20.30.40"})
	resp, body := get(t, srv.URL+"/tiles/mapsource.xml")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/xml; charset=utf-8" ||
		!strings.Contains(resp.Header.Get("Content-Disposition"), "outpost-basemap.xml") {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	if !bytes.HasPrefix(body, []byte(`<?xml version="1.0" encoding="UTF-8"?>`)) {
		t.Fatalf("no XML declaration: %s", body)
	}
	var raw struct {
		XMLName         xml.Name `xml:"customMapSource"`
		Name            string   `xml:"name"`
		MinZoom         int      `xml:"minZoom"`
		MaxZoom         int      `xml:"maxZoom"`
		TileType        string   `xml:"tileType"`
		TileUpdate      string   `xml:"tileUpdate"`
		URL             string   `xml:"url"`
		BackgroundColor string   `xml:"backgroundColor"`
	}
	if err := xml.Unmarshal(body, &raw); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	want := "http://10.20.30.40:" + port + "/tiles/{$z}/{$x}/{$y}"
	if raw.Name != "Test area" || raw.MinZoom != 0 || raw.MaxZoom != 3 || raw.TileType != "png" || raw.URL != want ||
		raw.TileUpdate != "None" || raw.BackgroundColor != "#000000" {
		t.Fatalf("map source = %+v\n%s", raw, body)
	}
	// The URL it names serves the tile.
	if resp, _ := get(t, strings.NewReplacer("10.20.30.40", "127.0.0.1", "{$z}", "0", "{$x}", "0", "{$y}", "0").Replace(raw.URL)); resp.StatusCode != 200 {
		t.Fatalf("the map source's URL: %d", resp.StatusCode)
	}
	// Without publicHost, the Host the client used.
	srv2 := tileServer(t, "png", testkit.PyramidTiles(t, 0), Options{})
	_, body = get(t, srv2.URL+"/tiles/mapsource.xml")
	if !strings.Contains(string(body), "<url>"+srv2.URL+"/tiles/{$z}/{$x}/{$y}</url>") {
		t.Fatalf("without publicHost: %s", body)
	}
}

func TestParseTilePath(t *testing.T) {
	for _, c := range []struct {
		in      string
		z, x, y int
		ok      bool
	}{
		{"0/0/0", 0, 0, 0, true}, {"30/1073741823/1073741823.webp", 30, 1<<30 - 1, 1<<30 - 1, true},
		{"3/7/7.jpeg", 3, 7, 7, true}, {"03/007/1", 3, 7, 1, true},
		{"3/8/0", 0, 0, 0, false}, {"3/0/8", 0, 0, 0, false}, {"30/1073741824/0", 0, 0, 0, false},
		{"1/0/ 0", 0, 0, 0, false}, {"1/0/0.", 0, 0, 0, false}, {"", 0, 0, 0, false}, {"1/0/1e0", 0, 0, 0, false},
	} {
		z, x, y, err := parseTilePath(c.in)
		if (err == nil) != c.ok || (c.ok && (z != c.z || x != c.x || y != c.y)) {
			t.Errorf("parseTilePath(%q) = %d %d %d %v", c.in, z, x, y, err)
		}
	}
}

// TestBasemapPathReplaced: a basemapPath file replaced by another is
// reopened at the next look; one that turns into something else stops being
// served.
func TestBasemapPathReplaced(t *testing.T) {
	p := filepath.Join(t.TempDir(), "area.mbtiles")
	testkit.WriteMBTiles(t, p, testkit.MBTilesMeta("First", 0, 0), testkit.PyramidTiles(t, 0))
	a := New(Options{BasemapPath: p, Logger: testkit.Discard()})
	t.Cleanup(func() { a.Close() })
	srv := httptest.NewServer(a)
	defer srv.Close()
	name := func() string {
		_, body := get(t, srv.URL+"/tiles/metadata.json")
		var m tileMetadataItem
		json.Unmarshal(body, &m)
		return m.Name
	}
	if n := name(); n != "First" {
		t.Fatalf("name %q", n)
	}
	next := filepath.Join(t.TempDir(), "next.mbtiles")
	testkit.WriteMBTiles(t, next, testkit.MBTilesMeta("Second, larger", 0, 1), testkit.PyramidTiles(t, 1))
	if err := os.Rename(next, p); err != nil {
		t.Fatal(err)
	}
	a.basemap.mu.Lock()
	a.basemap.checked = time.Time{} // as if basemapRecheck had passed
	a.basemap.mu.Unlock()
	if n := name(); n != "Second, larger" {
		t.Fatalf("after the replacement: %q", n)
	}
	if resp, _ := get(t, srv.URL+"/tiles/1/1/1"); resp.StatusCode != 200 {
		t.Fatalf("a tile of the new file: %d", resp.StatusCode)
	}
	os.WriteFile(p, []byte("no longer a tile set"), 0o600)
	a.basemap.mu.Lock()
	a.basemap.checked = time.Time{}
	a.basemap.mu.Unlock()
	if resp, _ := get(t, srv.URL+"/tiles/0/0/0"); resp.StatusCode != 404 {
		t.Fatalf("a broken file still served: %d", resp.StatusCode)
	}
}
