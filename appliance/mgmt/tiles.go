package mgmt

// The offline basemap (console.md "Offline basemap"): raster tiles from an
// MBTiles file at /tiles/{z}/{x}/{y}, the tile set's description at
// /tiles/metadata.json, and an ATAK custom map source pointing at the tiles
// at /tiles/mapsource.xml. These routes are public: TAK clients use the tile
// URL as a map source and cannot send a bearer token, and the imagery is
// what every client on the mesh is meant to see.
//
// The tile set is the file named by basemapPath or, without it, the newest
// data package carrying the keyword "basemap". Tiles need random access, so
// such a package is copied once out of the blob store into
// <dataDir>/basemaps/<sha256>.mbtiles (checked against its hash), in the
// background; the previous tile set is served until the copy is ready. The
// source is re-examined at most every basemapRecheck, so an upload, a
// keyword change or a deletion takes effect within seconds.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"outpost/appliance/atomicfile"
	"outpost/appliance/diskspace"
	"outpost/appliance/fault"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// BasemapKeyword marks a data package holding an MBTiles basemap.
const BasemapKeyword = "basemap"

const (
	basemapRecheck     = 2 * time.Second  // how often the source is looked at again
	basemapNoRoomRetry = time.Minute      // how long a copy refused for the disk reserve waits to be tried again
	basemapCloseDelay  = 30 * time.Second // a replaced tile set is closed this long after
	tileCache          = "public, max-age=300"
)

// tileTypes maps a tile format to its Content-Type.
var tileTypes = map[string]string{
	store.TileFormatPNG:  "image/png",
	store.TileFormatJPEG: "image/jpeg",
	store.TileFormatWebP: "image/webp",
}

// openBasemap is a tile set being served.
type openBasemap struct {
	tiles *store.Tiles
	key   string // what it was opened from: path|size|mtime, or the package hash
	tag   string // short form of key for ETags
	label string // where it came from, for people: "basemapPath" or "data package <name>"
}

// basemap finds, prepares and opens the tile set.
type basemap struct {
	path  string           // basemapPath; "" to use a data package
	dir   string           // where uploaded basemaps are copied; "" disables them
	files PackageStore     // nil: no basemap from data packages
	space *diskspace.Gauge // a copy must leave the reserve free
	log   *slog.Logger

	mu        sync.Mutex
	cur       *openBasemap
	checked   time.Time
	preparing string    // hash of the package being copied
	failed    string    // key that failed to open (not retried until it changes)
	noRoom    time.Time // a copy found no room on the disk: tried again after basemapNoRoomRetry
	closed    bool
}

// current returns the tile set to serve, or nil.
func (b *basemap) current(ctx context.Context) *openBasemap {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	if now := time.Now(); now.Sub(b.checked) >= basemapRecheck {
		b.checked = now
		b.refreshLocked(ctx)
	}
	return b.cur
}

// refreshLocked opens the source when it changed since the last look.
func (b *basemap) refreshLocked(ctx context.Context) {
	if b.path != "" {
		st, err := os.Stat(b.path)
		if err != nil {
			b.failLocked("stat:"+err.Error(), "the basemapPath file cannot be read", err)
			return
		}
		key := fmt.Sprintf("%s|%d|%d", b.path, st.Size(), st.ModTime().UnixNano())
		if b.cur == nil || b.cur.key != key {
			b.openLocked(b.path, key, "basemapPath")
		}
		return
	}
	if b.files == nil || b.dir == "" {
		return
	}
	p, err := b.files.NewestPackageWithKeyword(ctx, BasemapKeyword)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if b.cur != nil {
			b.log.Info("basemap removed: no data package carries the keyword", "keyword", BasemapKeyword)
			b.swapLocked(nil)
			b.removeCopies("")
		}
		return
	case err != nil:
		if ctx.Err() == nil {
			b.log.Error("could not look for a basemap data package", "err", err)
		}
		return
	}
	if (b.cur != nil && b.cur.key == p.Hash) || b.preparing == p.Hash || b.failed == p.Hash ||
		time.Since(b.noRoom) < basemapNoRoomRetry {
		return
	}
	file := filepath.Join(b.dir, p.Hash+".mbtiles")
	if _, err := os.Stat(file); err == nil {
		b.openLocked(file, p.Hash, "data package "+p.Name)
		return
	}
	b.preparing = p.Hash
	go b.copyPackage(p, file)
}

// openLocked opens path and serves it from now on.
func (b *basemap) openLocked(path, key, label string) {
	if b.failed == key {
		return
	}
	// Not the request's context: a client going away must not mark the
	// file as broken.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t, err := store.OpenTiles(ctx, path)
	if err != nil {
		b.failLocked(key, "the basemap could not be opened", err)
		return
	}
	sum := sha256.Sum256([]byte(key))
	m := t.Meta()
	b.log.Info("basemap opened", "source", logx.Clip(label), "name", logx.Clip(m.Name), "format", m.Format,
		"min_zoom", m.MinZoom, "max_zoom", m.MaxZoom)
	b.failed = ""
	b.swapLocked(&openBasemap{tiles: t, key: key, tag: hex.EncodeToString(sum[:6]), label: label})
}

// failLocked logs a failure once per key and stops serving the old set
// when the source itself is gone or broken.
func (b *basemap) failLocked(key, msg string, err error) {
	if b.failed != key {
		b.log.Error(msg+"; no basemap is served", "err", err)
		b.failed = key
	}
	b.swapLocked(nil)
}

// swapLocked replaces the served set; the old one is closed later, when
// the requests that hold it are done.
func (b *basemap) swapLocked(next *openBasemap) {
	old := b.cur
	b.cur = next
	if old != nil {
		time.AfterFunc(basemapCloseDelay, func() { old.tiles.Close() })
	}
}

// copyPackage copies a basemap package out of the blob store, checking its
// hash, then lets the next request open it.
func (b *basemap) copyPackage(p store.DataPackage, file string) {
	err := b.copyBlob(p, file)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.preparing = ""
	b.checked = time.Time{} // look again at the next request
	if errors.Is(err, diskspace.ErrNoSpace) || errors.Is(err, diskspace.ErrWouldCross) {
		// Not the package's fault: tried again once space may be back.
		b.log.Warn("basemap data package not copied for serving: it would take the disk below its reserve; trying again in a minute",
			"package", logx.Clip(p.Name), "bytes", p.Size, "reason", fault.Detail(err))
		b.noRoom = time.Now()
		return
	}
	if err != nil {
		b.log.Error("could not copy the basemap data package to a file", "package", logx.Clip(p.Name), "err", err)
		b.failed = p.Hash
		return
	}
	b.log.Info("basemap data package copied for serving", "package", logx.Clip(p.Name), "bytes", p.Size)
	b.removeCopies(p.Hash)
}

func (b *basemap) copyBlob(p store.DataPackage, file string) error {
	if err := b.space.CheckUpload(p.Size); err != nil {
		return err
	}
	b.space.Note(p.Size)
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	src, err := b.files.OpenBlob(ctx, p.BlobID)
	if err != nil {
		return err
	}
	defer src.Close()
	// A copy whose content is not the package's is never put in place.
	return atomicfile.WriteFrom(file, 0o600, func(w io.Writer) error {
		h := sha256.New()
		if _, err := io.Copy(io.MultiWriter(w, h), src); err != nil {
			return err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != p.Hash {
			return fmt.Errorf("content hash %s, expected %s", got, p.Hash)
		}
		return nil
	})
}

// removeCopies deletes copied basemaps other than keep's.
func (b *basemap) removeCopies(keep string) {
	entries, _ := os.ReadDir(b.dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".mbtiles") && e.Name() != keep+".mbtiles" {
			os.Remove(filepath.Join(b.dir, e.Name()))
		}
	}
}

// close stops serving and closes the open set.
func (b *basemap) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.cur != nil {
		b.cur.tiles.Close()
		b.cur = nil
	}
}

// tiles serves everything below /tiles/.
func (a *API) tiles(w http.ResponseWriter, r *http.Request) error {
	setSecurityHeaders(w.Header())
	rest := strings.TrimPrefix(r.URL.Path, "/tiles/")
	switch rest {
	case "metadata.json":
		return a.tileMetadata(w, r)
	case "mapsource.xml":
		return a.mapSource(w, r)
	}
	z, x, y, err := parseTilePath(rest)
	if err != nil {
		return err
	}
	bm := a.basemap.current(r.Context())
	if bm == nil {
		return errNoBasemap
	}
	// XYZ rows count from the north, MBTiles (TMS) rows from the south.
	data, err := bm.tiles.Tile(r.Context(), z, x, (1<<z)-1-y)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return httpapi.Errorf(http.StatusNotFound, "tile %d/%d/%d: not in the basemap", z, x, y)
	case err != nil:
		return httpapi.Internal(fmt.Errorf("basemap tile %d/%d/%d could not be read: %w", z, x, y, err), basemapError)
	}
	h := w.Header()
	h.Set("Content-Type", tileTypes[bm.tiles.Meta().Format])
	h.Set("Cache-Control", tileCache)
	h.Set("ETag", fmt.Sprintf(`"%s-%d-%d-%d"`, bm.tag, z, x, y))
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	return nil
}

// errNoBasemap answers a tile route while no basemap is served.
var errNoBasemap = notFound("no basemap: set basemapPath, or upload an MBTiles file as a data package with the keyword basemap")

// basemapError is the 500 text of the tile routes.
const basemapError = "An error occurred reading the basemap."

// parseTilePath reads "{z}/{x}/{y}" where y may carry the tile type's
// extension (.png, .jpg, .jpeg, .webp), as map clients append it.
func parseTilePath(p string) (z, x, y int, err error) {
	parts := strings.Split(p, "/")
	if len(parts) != 3 {
		return 0, 0, 0, httpapi.BadRequest("path", "a tile is /tiles/{z}/{x}/{y}")
	}
	last := parts[2]
	if i := strings.IndexByte(last, '.'); i >= 0 {
		switch strings.ToLower(last[i:]) {
		case ".png", ".jpg", ".jpeg", ".webp":
			last = last[:i]
		default:
			return 0, 0, 0, httpapi.BadRequest("y", "must be a whole number, optionally followed by .png, .jpg, .jpeg or .webp")
		}
	}
	if z, err = tileNumber("z", parts[0], store.MaxTileZoom); err != nil {
		return
	}
	limit := 1<<z - 1
	if x, err = tileNumber("x", parts[1], limit); err != nil {
		return
	}
	y, err = tileNumber("y", last, limit)
	return
}

// tileNumber parses a decimal number from 0 to max (digits only, at most 10).
func tileNumber(field, s string, max int) (int, error) {
	if s == "" || len(s) > 10 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, httpapi.BadRequest(field, "must be a whole number from 0 to %d", max)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > max {
		return 0, httpapi.BadRequest(field, "must be a whole number from 0 to %d", max)
	}
	return n, nil
}

// tileMetadataItem is GET /tiles/metadata.json.
type tileMetadataItem struct {
	Basemap     bool        `json:"basemap"`
	Name        string      `json:"name,omitempty"`
	Format      string      `json:"format,omitempty"`
	MinZoom     int         `json:"minZoom"`
	MaxZoom     int         `json:"maxZoom"`
	Bounds      *[4]float64 `json:"bounds,omitempty"` // west, south, east, north
	Attribution string      `json:"attribution,omitempty"`
	Source      string      `json:"source,omitempty"`
	Tiles       string      `json:"tiles"`     // URL template, relative to this server
	MapSource   string      `json:"mapSource"` // the ATAK custom map source
}

func (a *API) tileMetadata(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Cache-Control", "no-cache")
	out := tileMetadataItem{Tiles: "/tiles/{z}/{x}/{y}", MapSource: "/tiles/mapsource.xml"}
	if bm := a.basemap.current(r.Context()); bm != nil {
		m := bm.tiles.Meta()
		out.Basemap, out.Name, out.Format = true, m.Name, m.Format
		out.MinZoom, out.MaxZoom, out.Attribution, out.Source = m.MinZoom, m.MaxZoom, m.Attribution, bm.label
		if m.HasBounds {
			b := m.Bounds
			out.Bounds = &b
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// customMapSource is ATAK's (MOBAC's) custom map source document.
type customMapSource struct {
	XMLName         xml.Name `xml:"customMapSource"`
	Name            string   `xml:"name"`
	MinZoom         int      `xml:"minZoom"`
	MaxZoom         int      `xml:"maxZoom"`
	TileType        string   `xml:"tileType"`
	TileUpdate      string   `xml:"tileUpdate"`
	URL             string   `xml:"url"`
	BackgroundColor string   `xml:"backgroundColor"`
}

// mapSource serves GET /tiles/mapsource.xml: a file to import into ATAK
// (or any MOBAC-style client) so that it loads this server's tiles. The
// URL names publicHost and the port the request came in on.
func (a *API) mapSource(w http.ResponseWriter, r *http.Request) error {
	bm := a.basemap.current(r.Context())
	if bm == nil {
		return errNoBasemap
	}
	m := bm.tiles.Meta()
	name := m.Name
	if name == "" {
		name = "Outpost basemap"
	}
	doc := customMapSource{
		Name: name, MinZoom: m.MinZoom, MaxZoom: m.MaxZoom, TileType: m.Format, TileUpdate: "None",
		URL:             "http://" + a.serverHostPort(r) + "/tiles/{$z}/{$x}/{$y}",
		BackgroundColor: "#000000",
	}
	body, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return httpapi.Internal(err, basemapError)
	}
	h := w.Header()
	h.Set("Content-Type", "application/xml; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Disposition", `attachment; filename="outpost-basemap.xml"`)
	w.Write([]byte(xml.Header))
	w.Write(body)
	w.Write([]byte("\n"))
	return nil
}

// serverHostPort is publicHost with the port the request arrived on; the
// request's Host when publicHost is not set.
func (a *API) serverHostPort(r *http.Request) string {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return hostPort(a.opts.PublicHost, local, r.Host)
}
