package mgmt_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"outpost/appliance/config"
	"outpost/appliance/cot"
	"outpost/appliance/geo"
	"outpost/internal/testkit"
)

// TestGeoObjectsReachEveryClient: every geo object reaches a TCP and a TLS
// CoT client as CoT of the right type (the attitude's letter), how,
// contact, remarks, link, position and stale time.
func TestGeoObjectsReachEveryClient(t *testing.T) {
	e := newEnv(t, nil)
	tcp, tls := e.clients(t)
	cases := []struct {
		geoObject, attitude, how string
		wantType, wantHow        string
	}{
		{"Sniper", "hostile", "gps", "a-h-G-U-C-I-d", "m-g"},
		{"Medic", "friendly", "human", "a-f-G-U-i-m-etf", "h-e"},
		{"Recon", "friend", "retyped", "a-f-G-U-C-R", "h-t"},
		{"LMG", "neutral", "machine", "a-n-G-E-W-R", "m"},
		{"Grenadier", "unknown", "mensurated", "a-u-G-E-W-Z", "m-i"},
		{"anti Tank", "hostile", "estimated", "a-h-G-U-C-A-A", "h-e"},
		{"AA", "hostile", "nonCoT", "a-h-G-U-C-D", "h-g-i-g-o"},
		{"Engineer", "friendly", "gigo", "a-f-G-U-C-E", "h-g-i-g-o"},
		{"Mortar", "hostile", "gps", "a-h-G-E-W-O", "m-g"},
		{"Vehicle", "neutral", "gps", "a-n-G-E-V-C", "m-g"},
		{"Ambulance", "friendly", "gps", "a-f-G-E-V-m", "m-g"},
		{"Hospital", "friendly", "gps", "a-f-G-I-X-H", "m-g"},
		{"Police Station", "friendly", "gps", "a-f-G-I-i-l", "m-g"},
		{"Emergency Station", "friendly", "gps", "a-f-G-I-i-e", "m-g"},
		{"SAR", "friendly", "gps", "a-f-A-M-F-Q-H", "m-g"},
		{"Medevac", "friendly", "gps", "a-f-G-U-C-V-R-E", "m-g"},
		{"Incident", "unknown", "human", "a-u-X-i-o", "h-e"},
		{"fire", "unknown", "human", "a-u-X-i-f", "h-e"},
		{"earthquake", "unknown", "human", "a-u-X-i-g-e", "h-e"},
		{"avalanche", "unknown", "human", "a-u-X-i-g-a", "h-e"},
		{"vehicle accident", "unknown", "human", "a-u-X-i-t-v-a", "h-e"},
		{"Ground", "hostile", "gps", "a-h-G", "m-g"},
		{"SNIPER", "HOSTILE", "GPS", "a-h-G-U-C-I-d", "m-g"},      // words in any case
		{"a-f-G-U-C-I", "hostile", "gps", "a-h-G-U-C-I", "m-g"},   // a CoT type: the attitude wins
		{"a-.-G-E-X-N", "neutral", "human", "a-n-G-E-X-N", "h-e"}, // with the placeholder
	}
	for i, c := range cases {
		lat, lon := 59.3+float64(i)*0.001, 18.06
		uid := e.post("POST", "/ManageGeoObject/postGeoObject", map[string]any{
			"geoObject": c.geoObject, "attitude": c.attitude, "how": c.how, "latitude": lat, "longitude": lon,
			"timeout": 600, "name": fmt.Sprintf("obj %d <&>", i), "remarks": "seen at dawn\nmoving north",
		})
		for _, cl := range []struct {
			name string
			c    interface {
				WaitFor(func(*cot.Event) bool, time.Duration) (*cot.Event, error)
			}
		}{{"tcp", tcp}, {"tls", tls}} {
			ev, err := cl.c.WaitFor(func(ev *cot.Event) bool { return ev.UID == uid }, wait)
			if err != nil {
				t.Fatalf("%s: %s never reached the %s client: %v", c.geoObject, uid, cl.name, err)
			}
			if ev.Type != c.wantType || ev.How != c.wantHow || ev.Version != "2.0" {
				t.Errorf("%s/%s/%s on %s: type %s how %s version %s, want %s %s 2.0", c.geoObject, c.attitude, c.how, cl.name,
					ev.Type, ev.How, ev.Version, c.wantType, c.wantHow)
			}
			if ev.Detail.Contact == nil || ev.Detail.Contact.Callsign != fmt.Sprintf("obj %d <&>", i) {
				t.Errorf("%s: contact %+v", c.geoObject, ev.Detail.Contact)
			}
			if !detail(ev, "<remarks>seen at dawn&#10;moving north</remarks>") {
				t.Errorf("%s: remarks not in %s", c.geoObject, ev.Detail.XML)
			}
			if !near(ev.Point.Lat, lat, 1e-9) || !near(ev.Point.Lon, lon, 1e-9) || ev.Point.Ce != cot.Unknown || ev.Point.Le != cot.Unknown {
				t.Errorf("%s: point %+v", c.geoObject, ev.Point)
			}
			if d := ev.Stale.Sub(ev.Time); d != 600*time.Second {
				t.Errorf("%s: stale %v after time, want 600s", c.geoObject, d)
			}
		}
	}

	// A link to another object names its type; timeout 0 is persistent:
	// stale a year ahead and archived, not stale on arrival.
	target := e.post("POST", "/ManageGeoObject/postGeoObject", map[string]any{
		"geoObject": "Hospital", "attitude": "friendly", "how": "gps", "latitude": 59.2, "longitude": 18.0, "timeout": 0,
	})
	linked := e.post("POST", "/ManageGeoObject/postGeoObject", map[string]any{
		"geoObject": "Ambulance", "attitude": "friendly", "how": "gps", "latitude": "59.21", "longitude": "18.01",
		"timeout": "0", "link_uid": target, "repeat": "false",
	})
	for _, c := range []interface {
		WaitFor(func(*cot.Event) bool, time.Duration) (*cot.Event, error)
	}{tcp, tls} {
		ev, err := c.WaitFor(func(ev *cot.Event) bool { return ev.UID == linked }, wait)
		if err != nil {
			t.Fatal(err)
		}
		if len(ev.Detail.Links) != 1 || ev.Detail.Links[0].UID != target || ev.Detail.Links[0].Type != "a-f-G-I-X-H" ||
			ev.Detail.Links[0].Relation != "p-p" {
			t.Errorf("link %+v", ev.Detail.Links)
		}
		if ev.Stale.Before(time.Now().Add(360*24*time.Hour)) || !detail(ev, "<archive/>") {
			t.Errorf("persistent object: stale %v, detail %s", ev.Stale, ev.Detail.XML)
		}
		if ev.Detail.Contact == nil || ev.Detail.Contact.Callsign != "Ambulance" {
			t.Errorf("an object without a name is named after its type: %+v", ev.Detail.Contact)
		}
	}
}

// TestGeoObjectOffsetAndAddress: distance/bearing moves the object along
// the geodesic; an address in any coordinate notation works offline; a
// street address goes to the configured geocoder.
func TestGeoObjectOffsetAndAddress(t *testing.T) {
	geocoder := newGeocoder(t)
	e := newEnv(t, func(c *config.Config) { c.GeocoderURL = geocoder.url })
	tcp := e.app.DialTCP(t)
	joined(t, tcp)
	base := geo.Point{Lat: 59.3293, Lon: 18.0686}
	post := func(body map[string]any) *cot.Event {
		t.Helper()
		body["geoObject"], body["attitude"], body["how"], body["timeout"] = "Recon", "hostile", "human", 300
		return next(t, tcp, e.post("POST", "/ManageGeoObject/postGeoObject", body), "")
	}
	// 1500 m east, then north by default (bearing 360).
	ev := post(map[string]any{"latitude": base.Lat, "longitude": base.Lon, "distance": 1500, "bearing": 90})
	if want := geo.Destination(base, 90, 1500); !near(ev.Point.Lat, want.Lat, 1e-9) || !near(ev.Point.Lon, want.Lon, 1e-9) {
		t.Errorf("offset east: %v, %v, want %v", ev.Point.Lat, ev.Point.Lon, want)
	}
	if d := geo.Distance(base, geo.Point{Lat: ev.Point.Lat, Lon: ev.Point.Lon}); !near(d, 1500, 1e-3) {
		t.Errorf("offset east: %v m from the base, want 1500", d)
	}
	ev = post(map[string]any{"latitude": base.Lat, "longitude": base.Lon, "distance": "250"})
	if want := geo.Destination(base, 360, 250); !near(ev.Point.Lat, want.Lat, 1e-9) || !near(ev.Point.Lon, base.Lon, 1e-9) {
		t.Errorf("default bearing: %v, %v, want %v", ev.Point.Lat, ev.Point.Lon, want)
	}
	// Coordinates typed as text, no geocoder asked.
	for _, addr := range []string{"33VXF7400080000", `59°19'45.5"N 18°4'7"E`, "N59 19.758 E018 04.117", "33V 674000 6580000"} {
		want, err := geo.Parse(addr)
		if err != nil {
			t.Fatal(err)
		}
		ev = post(map[string]any{"address": addr, "latitude": 1, "longitude": 1})
		if !near(ev.Point.Lat, want.Lat, 1e-9) || !near(ev.Point.Lon, want.Lon, 1e-9) {
			t.Errorf("address %q: %v, %v, want %v", addr, ev.Point.Lat, ev.Point.Lon, want)
		}
	}
	if n := geocoder.asked(); n != 0 {
		t.Errorf("coordinates went to the geocoder %d times", n)
	}
	ev = post(map[string]any{"address": "10 Downing Street, London"})
	if !near(ev.Point.Lat, 51.5034, 1e-9) || !near(ev.Point.Lon, -0.1276, 1e-9) {
		t.Errorf("geocoded: %v, %v", ev.Point.Lat, ev.Point.Lon)
	}
	uid := e.post("POST", "/ManageEmergency/postEmergency", map[string]any{"emergencyType": "In Contact", "address": "10 Downing Street, London"})
	if ev = next(t, tcp, uid, "b-a-o-opn"); !near(ev.Point.Lat, 51.5034, 1e-9) {
		t.Errorf("geocoded emergency: %v", ev.Point)
	}
	before := e.snapshot()
	r := e.do("POST", "/ManageGeoObject/postGeoObject", e.admin, map[string]any{"geoObject": "Recon", "attitude": "hostile",
		"how": "human", "timeout": 300, "address": "Atlantis"})
	want(t, "unknown place", r, 400)
	if !strings.HasPrefix(r.Message(), "address: the geocoder knows no place") {
		t.Errorf("unknown place: %q", r.Message())
	}
	geocoder.srv.Close()
	r = e.do("POST", "/ManageGeoObject/postGeoObject", e.admin, map[string]any{"geoObject": "Recon", "attitude": "hostile",
		"how": "human", "timeout": 300, "address": "Baker Street"})
	want(t, "geocoder down", r, 502)
	if !strings.HasPrefix(r.Message(), "address: the geocoder failed") {
		t.Errorf("geocoder down: %q", r.Message())
	}
	sameSnapshot(t, "refused addresses", before, e.snapshot())
}

// TestGeoObjectRepeatReplayRestart: repeated and persistent objects are
// re-broadcast (repeated ones), replayed to clients that connect later,
// listed by GetRepeatedMessages, kept across a restart, and removed from
// every map by DeleteRepeatedMessage.
func TestGeoObjectRepeatReplayRestart(t *testing.T) {
	dir := t.TempDir()
	mutate := func(c *config.Config) { c.DataDir = dir; c.RepeatInterval = time.Second }
	e := newEnv(t, mutate)
	tcp := e.app.DialTCP(t)
	joined(t, tcp)
	obj := func(timeout int, repeat bool) string {
		return e.post("POST", "/ManageGeoObject/postGeoObject", map[string]any{"geoObject": "Sniper", "attitude": "hostile",
			"how": "gps", "latitude": 59.3, "longitude": 18.1, "timeout": timeout, "repeat": repeat})
	}
	rep, pers, plain := obj(600, true), obj(0, false), obj(600, false)
	// Sent once, then the repeated one again every second.
	next(t, tcp, rep, "")
	next(t, tcp, pers, "")
	next(t, tcp, plain, "")
	again := next(t, tcp, rep, "")
	if again.Type != "a-h-G-U-C-I-d" {
		t.Fatalf("re-broadcast %s", again.Type)
	}
	check := func(e *env, what string) {
		t.Helper()
		msgs := e.repeated()
		if len(msgs) != 2 || !strings.Contains(msgs[rep], `uid="`+rep+`"`) || !strings.HasPrefix(msgs[pers], "<event ") {
			t.Fatalf("%s: GetRepeatedMessages %v", what, msgs)
		}
		late := e.app.DialTCP(t)
		got := uids(joined(t, late))
		if got[rep] != 1 || got[pers] != 1 || got[plain] != 0 {
			t.Fatalf("%s: a client connecting now was replayed %v, want %s and %s", what, got, rep, pers)
		}
	}
	check(e, "running")

	// Restart on the same data directory.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.app.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e = newEnv(t, mutate)
	check(e, "after a restart")
	tcp = e.app.DialTCP(t)
	joined(t, tcp)
	next(t, tcp, rep, "") // still re-broadcast

	// Unknown uids: 404 naming them, nothing changed.
	before := e.snapshot()
	r := e.do("DELETE", "/ManageGeoObject/DeleteRepeatedMessage?ids="+rep+","+plain+",nope", e.admin, nil)
	want(t, "unknown ids", r, 404)
	if !strings.HasPrefix(r.Message(), "ids: no repeated message") || !strings.Contains(r.Message(), plain) ||
		!strings.Contains(r.Message(), "nope") || strings.Contains(r.Message(), rep) {
		t.Fatalf("unknown ids: %q", r.Message())
	}
	sameSnapshot(t, "unknown ids", before, e.snapshot())
	if len(e.repeated()) != 2 {
		t.Fatal("a refused delete changed the repeated messages")
	}

	if msg := e.post("DELETE", "/ManageGeoObject/DeleteRepeatedMessage?ids="+rep+",%20"+pers, nil); msg != "operation successful" {
		t.Fatalf("delete: %q", msg)
	}
	for _, uid := range []string{rep, pers} {
		ev := deleteOf(t, tcp, uid)
		if ev.Detail.Links[0].Type != "a-h-G-U-C-I-d" || ev.Detail.Links[0].Relation != "p-p" || !detail(ev, "<__forcedelete/>") ||
			ev.UID == uid {
			t.Errorf("delete of %s: %s", uid, ev.AppendXML(nil))
		}
	}
	if msgs := e.repeated(); len(msgs) != 0 {
		t.Fatalf("after delete: %v", msgs)
	}
	late := e.app.DialTCP(t)
	if got := uids(joined(t, late)); got[rep]+got[pers] != 0 {
		t.Fatalf("deleted objects still replayed: %v", got)
	}
	// No longer retained, so no longer re-broadcast.
	for key := range e.app.Broker().Retained() {
		if strings.HasSuffix(key, rep) || strings.HasSuffix(key, pers) {
			t.Fatalf("still retained: %s", key)
		}
	}
	// Deleted objects are not found either.
	if got := e.geoQuery(59.3, 18.1, 100, ""); len(got) != 1 {
		t.Fatalf("after delete getGeoObject finds %+v, want only the plain object", got)
	}
}

// TestPutGeoObjectMoves: a put moves the object: clients receive the same
// uid at the new place (one marker moves), getGeoObject lists it once, at
// the new place.
func TestPutGeoObjectMoves(t *testing.T) {
	e := newEnv(t, nil)
	tcp, tls := e.clients(t)
	body := map[string]any{"geoObject": "Vehicle", "attitude": "hostile", "how": "gps", "latitude": 48.85, "longitude": 2.35,
		"timeout": 3600, "name": "V1", "repeat": true}
	uid := e.post("POST", "/ManageGeoObject/postGeoObject", body)
	next(t, tcp, uid, "")
	next(t, tls, uid, "")
	body["uid"], body["latitude"], body["longitude"], body["name"], body["attitude"] = uid, 48.86, 2.36, "V1 moved", "neutral"
	if got := e.post("PUT", "/ManageGeoObject/putGeoObject", body); got != uid {
		t.Fatalf("put answered %q, want %q", got, uid)
	}
	for _, c := range []interface {
		WaitFor(func(*cot.Event) bool, time.Duration) (*cot.Event, error)
	}{tcp, tls} {
		ev, err := c.WaitFor(func(ev *cot.Event) bool { return ev.UID == uid && ev.Point.Lat == 48.86 }, wait)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Point.Lon != 2.36 || ev.Type != "a-n-G-E-V-C" || ev.Detail.Contact.Callsign != "V1 moved" {
			t.Errorf("moved: %s", ev.AppendXML(nil))
		}
	}
	// Found once, at the new place, whether or not the history has caught up.
	got := e.geoQuery(48.86, 2.36, 50, "*")
	if len(got) != 1 || got[0].Latitude != 48.86 || got[0].Type != "Vehicle" || got[0].Attitude != "neutral" || got[0].Distance != 0 {
		t.Fatalf("at the new place: %+v", got)
	}
	if got := e.geoQuery(48.85, 2.35, 50, "*"); len(got) != 0 {
		t.Fatalf("still at the old place: %+v", got)
	}
	testkit.WaitFor(t, "the history to record the move", func() bool {
		return e.count("cot_latest", "uid = ? AND lat = 48.86", uid) == 1
	})
	if got := e.geoQuery(48.855, 2.355, 5000, ""); len(got) != 1 {
		t.Fatalf("over both places: %+v", got)
	}
	msgs := e.repeated()
	if !strings.Contains(msgs[uid], `lat="48.86"`) {
		t.Fatalf("the repeated message is not the moved object: %s", msgs[uid])
	}
	// A new client is replayed the moved object only.
	late := e.app.DialTCP(t)
	replay := joined(t, late)
	if n := uids(replay)[uid]; n != 1 || replay[0].Point.Lat != 48.86 {
		t.Fatalf("replay after the move: %d times, %+v", n, replay[0].Point)
	}
	r := e.do("PUT", "/ManageGeoObject/putGeoObject", e.admin, map[string]any{"uid": "no-such-object", "geoObject": "Vehicle",
		"attitude": "hostile", "how": "gps", "latitude": 1, "longitude": 1, "timeout": 1})
	want(t, "unknown uid", r, 404)
	if !strings.HasPrefix(r.Message(), `uid: no geo object made through this API with uid "no-such-object"`) {
		t.Fatalf("unknown uid: %q", r.Message())
	}
}
