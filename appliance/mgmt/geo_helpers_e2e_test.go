package mgmt_test

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"outpost/appliance/cot"
	"outpost/appliance/takclient"
)

// wait is how long a test waits for an event it expects.
const wait = 10 * time.Second

// joined waits for a client's protocol offer, which the server sends once
// the client's session has joined the broker and its replay is queued
// (protocol.md §5): everything the server sends from then on reaches it.
// It returns what was replayed before the offer.
func joined(t testing.TB, c *takclient.Client) []*cot.Event {
	t.Helper()
	var replay []*cot.Event
	for {
		ev, err := c.Next(wait)
		if err != nil {
			t.Fatalf("waiting for the protocol offer: %v", err)
		}
		if ev.Type == "t-x-takp-v" {
			return replay
		}
		replay = append(replay, ev)
	}
}

// clients connects a TAK client to the TCP CoT listener and one with a
// certificate to the TLS listener, both joined.
func (e *env) clients(t testing.TB) (tcp, tls *takclient.Client) {
	t.Helper()
	tcp = e.app.DialTCP(t)
	tls = e.app.DialTLS(t, e.app.Issue(t, "viewer-"+strings.ReplaceAll(uuid.NewString()[:8], "-", "")))
	joined(t, tcp)
	joined(t, tls)
	return tcp, tls
}

// next returns the next event of uid (and type, when typ is not "") a
// client receives.
func next(t testing.TB, c *takclient.Client, uid, typ string) *cot.Event {
	t.Helper()
	ev, err := c.WaitFor(func(ev *cot.Event) bool { return ev.UID == uid && (typ == "" || ev.Type == typ) }, wait)
	if err != nil {
		t.Fatalf("waiting for %s %s: %v", typ, uid, err)
	}
	return ev
}

// deleteOf returns the next t-x-d-d a client receives that links uid.
func deleteOf(t testing.TB, c *takclient.Client, uid string) *cot.Event {
	t.Helper()
	ev, err := c.WaitFor(func(ev *cot.Event) bool {
		return ev.Type == "t-x-d-d" && len(ev.Detail.Links) > 0 && ev.Detail.Links[0].UID == uid
	}, wait)
	if err != nil {
		t.Fatalf("waiting for the delete of %s: %v", uid, err)
	}
	return ev
}

// uids lists the uids of events.
func uids(evs []*cot.Event) map[string]int {
	out := map[string]int{}
	for _, ev := range evs {
		out[ev.UID]++
	}
	return out
}

// detail reports whether an event's detail contains s.
func detail(ev *cot.Event, s string) bool { return bytes.Contains(ev.Detail.XML, []byte(s)) }

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// post sends a JSON request and returns the {"message"} of a 200.
func (e *env) post(method, path string, body any) string {
	e.t.Helper()
	r := e.do(method, path, e.admin, body, "Content-Type", "application/json")
	want(e.t, method+" "+path, r, 200)
	return r.Message()
}

// geoItems is a getGeoObject answer.
type geoItems []struct {
	Latitude, Longitude, Distance, Direction float64
	Type, Attitude                           string
}

// geoQuery runs getGeoObject.
func (e *env) geoQuery(lat, lon, radius float64, attitude string) geoItems {
	e.t.Helper()
	q := fmt.Sprintf("/ManageGeoObject/getGeoObject?latitude=%v&longitude=%v&radius=%v", lat, lon, radius)
	if attitude != "" {
		q += "&attitude=" + attitude
	}
	r := e.do("GET", q, e.admin, nil)
	want(e.t, "getGeoObject", r, 200)
	var out geoItems
	r.JSON(e.t, &out)
	return out
}

// repeated runs GetRepeatedMessages.
func (e *env) repeated() map[string]string {
	e.t.Helper()
	r := e.do("GET", "/ManageGeoObject/GetRepeatedMessages", e.admin, nil)
	want(e.t, "GetRepeatedMessages", r, 200)
	var out struct{ Messages map[string]string }
	r.JSON(e.t, &out)
	if out.Messages == nil {
		e.t.Fatalf("GetRepeatedMessages: %s", r.Body)
	}
	return out.Messages
}

// emergency is a getEmergency item.
type emergency struct {
	UID, Name, Type string
	Lat, Lon        float64
}

func (e *env) emergencies() map[string]emergency {
	e.t.Helper()
	r := e.do("GET", "/ManageEmergency/getEmergency", e.admin, nil)
	want(e.t, "getEmergency", r, 200)
	var out struct {
		JSONList []emergency `json:"json_list"`
	}
	r.JSON(e.t, &out)
	if out.JSONList == nil {
		e.t.Fatalf("getEmergency: %s", r.Body)
	}
	m := map[string]emergency{}
	for _, it := range out.JSONList {
		m[it.UID] = it
	}
	return m
}

// marker builds a marker as ATAK places one (the "Marker - 2525" capture's
// shape): an a- type with only a callsign, a link to its creator.
func marker(uid, typ, callsign string, lat, lon float64, stale time.Duration) *cot.Event {
	now := time.Now().UTC()
	xml := `<status readiness="true"/><archive/><link uid="ANDROID-creator" production_time="2026-01-01T00:00:00Z" type="a-f-G-U-C" parent_callsign="HOPE" relation="p-p"/>` +
		`<contact callsign="` + callsign + `"/><remarks></remarks><archive/><color argb="-1"/>`
	ev, err := cot.Decode((&cot.Event{Version: "2.0", UID: uid, Type: typ, How: "h-g-i-g-o", Time: now, Start: now, Stale: now.Add(stale),
		Point: cot.Point{Lat: lat, Lon: lon, Hae: cot.Unknown, Ce: cot.Unknown, Le: cot.Unknown}, Detail: cot.Detail{XML: []byte(xml)}}).AppendXML(nil))
	if err != nil {
		panic(err)
	}
	return ev
}

// fakeGeocoder is a Nominatim-compatible /search on a real socket: it knows
// one street address.
type fakeGeocoder struct {
	srv *httptest.Server
	url string
	n   atomic.Int64
}

func newGeocoder(t testing.TB) *fakeGeocoder {
	g := &fakeGeocoder{}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.NotFound(w, r)
			return
		}
		if strings.Contains(r.URL.Query().Get("q"), "Downing Street") {
			w.Write([]byte(`[{"place_id": 1, "lat": "51.5034", "lon": "-0.1276", "display_name": "10 Downing Street"}]`))
			return
		}
		w.Write([]byte(`[]`))
	}))
	t.Cleanup(g.srv.Close)
	g.url = g.srv.URL
	return g
}

func (g *fakeGeocoder) asked() int64 { return g.n.Load() }
