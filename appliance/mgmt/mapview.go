package mgmt

// The live picture for the console's map (docs/api-management.md "Map"):
// GET /api/map answers, with a bearer token like every other route, the
// connected clients with their latest position (from the relay, live) and
// the latest event of every other uid inside a box (from the CoT history:
// markers clients sent, geo objects, emergencies). GET /api/map/event
// answers one uid's latest event in full. The console polls /api/map every
// second; one call is one indexed query and a walk of the client list.

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"outpost/appliance/access"
	"outpost/appliance/cot"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// Limits of /api/map.
const (
	mapDefaultLimit    = 2000
	mapDefaultMaxStale = 24 * time.Hour
	mapMaxMaxStale     = 30 * 24 * time.Hour
	mapDeleteWindow    = 7 * 24 * time.Hour // deletions looked at
	mapDeleteLimit     = 5000
)

// mapClient is a connected client on the map.
type mapClient struct {
	clientItem
	Type   string   `json:"type"`
	How    string   `json:"how"`
	Lat    *float64 `json:"lat"` // null before the first position report
	Lon    *float64 `json:"lon"`
	Hae    *float64 `json:"hae"` // null when unknown
	Course *float64 `json:"course"`
	Speed  *float64 `json:"speed"`
	Stale  string   `json:"stale"`
}

// mapItem is the latest event of a uid that is not a connected client.
type mapItem struct {
	UID      string   `json:"uid"`
	Type     string   `json:"type"`
	How      string   `json:"how"`
	Callsign string   `json:"callsign"`
	Lat      float64  `json:"lat"`
	Lon      float64  `json:"lon"`
	Hae      *float64 `json:"hae"`
	Time     string   `json:"time"`
	Stale    string   `json:"stale"`
	Received string   `json:"received"`
	Source   string   `json:"source"`  // the listener it came in on, or "server"
	Deleted  bool     `json:"deleted"` // a deletion (t-x-d-d without force) marked it stale
}

type mapAnswer struct {
	Time      string      `json:"time"`
	Clients   []mapClient `json:"clients"`
	Items     []mapItem   `json:"items"`
	Truncated bool        `json:"truncated"` // more items than limit lie in the box
}

// mapTypes are the CoT types drawn on the map: atoms (units, equipment,
// installations, markers), alarms and emergencies, map points, reports.
func mapType(t string) bool {
	if t == "b-a-o-can" {
		return false // an emergency's cancellation
	}
	for _, p := range []string{"a-", "b-a-", "b-m-p-", "b-r-f-"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// mapView answers GET /api/map?bbox=west,south,east,north&limit=N&maxStale=D.
func (a *API) mapView(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	box, err := parseBBox(q.Get("bbox"))
	if err != nil {
		return err
	}
	limit, err := queryInt(q, "limit", mapDefaultLimit, 1, store.MaxBoxLimit)
	if err != nil {
		return err
	}
	maxStale := mapDefaultMaxStale
	if v := q.Get("maxStale"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > mapMaxMaxStale {
			return httpapi.BadRequest("maxStale", "must be a duration from 0s to %v, like 1h or 90m", mapMaxMaxStale)
		}
		maxStale = d
	}
	now := a.opts.Now()
	sees := access.From(r).Reads() // access.md "Groups": what the caller's groups see
	out := mapAnswer{Time: httpapi.FormatTime(now), Clients: []mapClient{}, Items: []mapItem{}}
	connected := map[string]bool{}
	if a.opts.Broker != nil {
		// Each identified session's latest position report, by uid.
		positions := map[string]*cot.Event{}
		for _, s := range a.opts.Broker.Sessions() {
			if sa := s.LastSA(); sa != nil {
				positions[s.Identity().UID] = sa
			}
		}
		for _, c := range visibleClients(a.opts.Broker.Clients(), sees) {
			connected[c.UID] = true
			out.Clients = append(out.Clients, newMapClient(positions[c.UID], clientItemOf(c)))
		}
	}
	if a.opts.Events == nil {
		httpapi.WriteJSON(w, http.StatusOK, out)
		return nil
	}
	events, err := a.opts.Events.LatestInBox(r.Context(), box[1], box[0], box[3], box[2], limit, sees)
	if err != nil {
		return mapFailed(err)
	}
	deleted, err := a.deletions(r, now)
	if err != nil {
		return mapFailed(err)
	}
	out.Truncated = len(events) == limit
	for _, e := range events {
		if connected[e.UID] || !mapType(e.Type) || now.Sub(e.Stale) > maxStale {
			continue
		}
		d, isDeleted := deleted[e.UID]
		if isDeleted && !e.ReceivedAt.After(d.at) && d.force {
			continue
		}
		out.Items = append(out.Items, mapItem{
			UID: e.UID, Type: e.Type, How: e.How, Callsign: e.Callsign, Lat: e.Lat, Lon: e.Lon, Hae: known(e.Hae),
			Time: httpapi.FormatTime(e.Time), Stale: httpapi.FormatTime(e.Stale), Received: httpapi.FormatTime(e.ReceivedAt),
			Source: e.Source, Deleted: isDeleted && !e.ReceivedAt.After(d.at),
		})
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// mapFailed is a failure to read the CoT history for the map: a fault of
// ours, answered with api.md §7's text.
func mapFailed(err error) error {
	return httpapi.Internal(fmt.Errorf("the map could not be read from the CoT history: %w", err), "An error occurred retrieving the map.")
}

// deletion is the newest t-x-d-d naming a uid.
type deletion struct {
	at    time.Time
	force bool // <__forcedelete/>: remove, not just mark stale
}

// deletionCache holds the uids named by recent t-x-d-d events. Each map
// call reads only the deletions received lately (since the newest one read,
// less deleteOverlap: the history commits an event up to a flush interval
// after its receive time), so a console polling every second costs one
// small indexed query, not a decode of a week of deletions.
type deletionCache struct {
	mu     sync.Mutex
	byUID  map[string]deletion
	seen   map[int64]time.Time // ids of the deletions read within the overlap
	mark   time.Time           // receive time of the newest deletion read
	pruned time.Time
}

const deleteOverlap = 5 * time.Second

// deletions returns the uids deleted within mapDeleteWindow of now.
func (a *API) deletions(r *http.Request, now time.Time) (map[string]deletion, error) {
	c := &a.deleted
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byUID == nil {
		c.byUID, c.seen = map[string]deletion{}, map[int64]time.Time{}
	}
	since := now.Add(-mapDeleteWindow)
	if m := c.mark.Add(-deleteOverlap); m.After(since) {
		since = m
	}
	// Every reader shares the cache: a deletion only ever hides an item
	// the reader's own query returned.
	evs, err := a.opts.Events.RecentOfType(r.Context(), "t-x-d-d", since, mapDeleteLimit, store.AllGroups)
	if err != nil {
		return nil, err
	}
	for _, e := range evs {
		if _, ok := c.seen[e.ID]; ok {
			continue
		}
		c.seen[e.ID] = e.ReceivedAt
		if e.ReceivedAt.After(c.mark) {
			c.mark = e.ReceivedAt
		}
		ev, err := e.Event()
		if err != nil {
			continue
		}
		force := bytes.Contains(ev.Detail.XML, []byte("<__forcedelete"))
		for _, l := range ev.Detail.Links {
			if prev, ok := c.byUID[l.UID]; l.UID != "" && (!ok || !e.ReceivedAt.Before(prev.at)) {
				c.byUID[l.UID] = deletion{at: e.ReceivedAt, force: force}
			}
		}
	}
	for id, at := range c.seen {
		if at.Before(c.mark.Add(-2 * deleteOverlap)) {
			delete(c.seen, id)
		}
	}
	if now.Sub(c.pruned) > time.Hour {
		c.pruned = now
		for uid, d := range c.byUID {
			if now.Sub(d.at) > mapDeleteWindow {
				delete(c.byUID, uid)
			}
		}
	}
	out := make(map[string]deletion, len(c.byUID))
	for k, v := range c.byUID {
		out[k] = v
	}
	return out, nil
}

// newMapClient places a connected client from its latest position report.
func newMapClient(sa *cot.Event, item clientItem) mapClient {
	c := mapClient{clientItem: item}
	if sa == nil {
		return c
	}
	lat, lon := sa.Point.Lat, sa.Point.Lon
	c.Type, c.How, c.Lat, c.Lon, c.Hae = sa.Type, sa.How, &lat, &lon, known(sa.Point.Hae)
	c.Stale = httpapi.FormatTime(sa.Stale)
	if t := sa.Detail.Track; t != nil {
		course, speed := t.Course, t.Speed
		c.Course, c.Speed = &course, &speed
	}
	return c
}

// known is nil for CoT's "unknown" value (and for non-finite values).
func known(v float64) *float64 {
	if v == cot.Unknown || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// parseBBox reads "west,south,east,north" in degrees; empty is the whole
// world. Longitudes are wrapped into ±180 (a box crossing the antimeridian
// has west > east); a box 360° wide or more is the whole world.
func parseBBox(s string) ([4]float64, error) {
	world := [4]float64{-180, -90, 180, 90}
	if s == "" {
		return world, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return world, httpapi.BadRequest("bbox", "must be west,south,east,north in degrees")
	}
	var b [4]float64
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e6 {
			return world, httpapi.BadRequest("bbox", "must be west,south,east,north in degrees")
		}
		b[i] = v
	}
	if b[1] < -90 || b[3] > 90 || b[1] > b[3] {
		return world, httpapi.BadRequest("bbox", "south and north must be within ±90, south not above north")
	}
	if b[2] < b[0] {
		return world, httpapi.BadRequest("bbox", "east must not be less than west (use longitudes beyond ±180 to cross the antimeridian)")
	}
	if b[2]-b[0] >= 360 {
		b[0], b[2] = -180, 180
		return b, nil
	}
	b[0], b[2] = wrapLon(b[0]), wrapLon(b[2])
	return b, nil
}

// wrapLon brings a longitude into [-180, 180].
func wrapLon(v float64) float64 {
	if v >= -180 && v <= 180 {
		return v
	}
	v = math.Mod(v+180, 360)
	if v < 0 {
		v += 360
	}
	return v - 180
}

// queryInt reads an optional whole-number query parameter within [min, max].
func queryInt(q url.Values, name string, def, min, max int) (int, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		return 0, httpapi.BadRequest(name, "must be a whole number from %d to %d", min, max)
	}
	return n, nil
}

// mapEvent is GET /api/map/event: one uid's latest event in full.
type mapEvent struct {
	mapItem
	Ce      *float64 `json:"ce"`
	Le      *float64 `json:"le"`
	Start   string   `json:"start"`
	Remarks string   `json:"remarks"`
	XML     string   `json:"xml"`
}

// mapEventByUID answers GET /api/map/event?uid=<uid>.
func (a *API) mapEventByUID(w http.ResponseWriter, r *http.Request) error {
	uid := r.URL.Query().Get("uid")
	if uid == "" || len(uid) > 1024 {
		return httpapi.BadRequest("uid", "is required (at most 1024 bytes)")
	}
	if a.opts.Events == nil {
		return notFound("no event of this uid")
	}
	e, err := a.opts.Events.LatestEvent(r.Context(), uid, access.From(r).Reads())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound("no event of uid " + strconv.Quote(logx.Clip(uid)))
	case err != nil:
		return mapFailed(err)
	}
	out := mapEvent{
		mapItem: mapItem{UID: e.UID, Type: e.Type, How: e.How, Callsign: e.Callsign, Lat: e.Lat, Lon: e.Lon, Hae: known(e.Hae),
			Time: httpapi.FormatTime(e.Time), Stale: httpapi.FormatTime(e.Stale), Received: httpapi.FormatTime(e.ReceivedAt),
			Source: e.Source},
		Start: httpapi.FormatTime(e.Start),
		XML:   string(e.XML),
	}
	if ev, err := e.Event(); err == nil {
		out.Ce, out.Le = known(ev.Point.Ce), known(ev.Point.Le)
		out.Remarks = remarksOf(ev.Detail.XML)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// maxRemarks bounds the remarks answered for one event.
const maxRemarks = 4096

// remarksOf is the text of the first <remarks> child of a detail.
func remarksOf(detail []byte) string {
	dec := xml.NewDecoder(bytes.NewReader(detail))
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 && t.Name.Local == "remarks" {
				var text struct {
					Body string `xml:",chardata"`
				}
				if dec.DecodeElement(&text, &t) != nil {
					return ""
				}
				return truncateUTF8(strings.TrimSpace(text.Body), maxRemarks)
			}
			depth++
		case xml.EndElement:
			depth--
		}
	}
}

// truncateUTF8 cuts s to at most n bytes at a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
