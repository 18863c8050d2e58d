package store

import (
	"context"
	"errors"
	"math"
	"sort"
	"testing"
	"time"

	"outpost/appliance/cot"
)

func serverObject(uid, kind string, lat, lon float64, stale time.Time) ServerObject {
	return ServerObject{UID: uid, Kind: kind, Origin: OriginAPI, Type: "a-h-G", Name: "n-" + uid, Lat: lat, Lon: lon,
		Stale: stale, Replay: true, UpdatedAt: timeNow(), XML: []byte(`<event uid="` + uid + `"/>`)}
}

func TestServerObjects(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	now := timeNow()
	a := serverObject("A", KindGeo, 10, 20, now.Add(time.Hour))
	if err := s.Objects().PutServerObject(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := s.Objects().ServerObject(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != KindGeo || got.Origin != OriginAPI || got.Name != "n-A" || got.Lat != 10 || !got.Stale.Equal(a.Stale) ||
		!got.Replay || got.Repeat || !got.CreatedAt.Equal(a.UpdatedAt) || string(got.XML) != string(a.XML) {
		t.Fatalf("read back %+v", got)
	}
	// An update keeps the creation time and replaces the rest.
	b := a
	b.Lat, b.Repeat, b.UpdatedAt = 11, true, now.Add(time.Minute)
	if err := s.Objects().PutServerObject(ctx, b); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Objects().ServerObject(ctx, "A")
	if got.Lat != 11 || !got.Repeat || !got.CreatedAt.Equal(a.UpdatedAt) || !got.UpdatedAt.Equal(b.UpdatedAt) {
		t.Fatalf("after update %+v", got)
	}
	if _, err := s.Objects().ServerObject(ctx, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown uid: %v", err)
	}
	e := serverObject("E-9-1-1", KindEmergency, 1, 2, now.Add(time.Hour))
	e.Origin = OriginClient
	if err := s.Objects().PutServerObject(ctx, e); err != nil {
		t.Fatal(err)
	}
	if all, _ := s.Objects().ServerObjects(ctx, ""); len(all) != 2 {
		t.Fatalf("all: %d", len(all))
	}
	if geo, _ := s.Objects().ServerObjects(ctx, KindGeo); len(geo) != 1 || geo[0].UID != "A" {
		t.Fatalf("geo: %+v", geo)
	}
	if n, _ := s.Objects().CountServerObjects(ctx, KindEmergency, OriginClient); n != 1 {
		t.Fatalf("client emergencies: %d", n)
	}

	// Refused rows change nothing.
	for name, bad := range map[string]ServerObject{
		"no uid":      func() ServerObject { o := a; o.UID = ""; return o }(),
		"bad kind":    func() ServerObject { o := a; o.Kind = "shape"; return o }(),
		"bad origin":  func() ServerObject { o := a; o.Origin = "elsewhere"; return o }(),
		"off earth":   func() ServerObject { o := a; o.Lat = 91; return o }(),
		"no xml":      func() ServerObject { o := a; o.XML = nil; return o }(),
		"huge xml":    func() ServerObject { o := a; o.XML = make([]byte, MaxObjectXML+1); return o }(),
		"no stale":    func() ServerObject { o := a; o.Stale = time.Time{}; return o }(),
		"long name":   func() ServerObject { o := a; o.Name = string(make([]byte, MaxObjectText+1)); return o }(),
		"empty type":  func() ServerObject { o := a; o.Type = ""; return o }(),
		"no updated":  func() ServerObject { o := a; o.UpdatedAt = time.Time{}; return o }(),
		"lon is NaN?": func() ServerObject { o := a; o.Lon = 200; return o }(),
	} {
		if err := s.Objects().PutServerObject(ctx, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if got, _ := s.Objects().ServerObject(ctx, "A"); got.Lat != 11 {
		t.Fatal("a refused put changed the row")
	}

	// Expire takes what is stale at the given time, nothing else.
	old := serverObject("OLD", KindGeo, 0, 0, now.Add(-time.Second))
	if err := s.Objects().PutServerObject(ctx, old); err != nil {
		t.Fatal(err)
	}
	gone, err := s.Objects().ExpireServerObjects(ctx, now)
	if err != nil || len(gone) != 1 || gone[0].UID != "OLD" || gone[0].Kind != KindGeo {
		t.Fatalf("expire: %+v %v", gone, err)
	}
	if all, _ := s.Objects().ServerObjects(ctx, ""); len(all) != 2 {
		t.Fatalf("after expire: %d", len(all))
	}
	n, err := s.Objects().DeleteServerObjects(ctx, []string{"A", "missing", "E-9-1-1"}, now)
	if err != nil || n != 2 {
		t.Fatalf("delete: %d %v", n, err)
	}
	if all, _ := s.Objects().ServerObjects(ctx, ""); len(all) != 0 {
		t.Fatalf("after delete: %+v", all)
	}
}

// marker builds a marker as ATAK places one: a callsign, nothing of a
// client's own position report.
func markerEvent(uid, typ string, lat, lon float64, at time.Time, stale time.Duration) *cot.Event {
	ev := testEvent(uid, "M-"+uid, lat, lon, at)
	ev.Type = typ
	ev.Stale = at.Add(stale)
	return ev
}

// ownPosition builds a client's own position report (endpoint, takv, group).
func ownPosition(uid string, lat, lon float64, at time.Time) *cot.Event {
	ev := testEvent(uid, "C-"+uid, lat, lon, at)
	ev.Detail.XML = []byte(`<takv platform="ATAK-CIV"/><contact callsign="C-` + uid + `" endpoint="*:-1:stcp"/><__group name="Cyan" role="Team Member"/>`)
	ev.Detail.Contact.Endpoint = "*:-1:stcp"
	ev.Detail.Takv = &cot.Takv{Platform: "ATAK-CIV"}
	ev.Detail.Group = &cot.Group{Name: "Cyan", Role: "Team Member"}
	return ev
}

func boxUIDs(t *testing.T, s *Store, minLat, minLon, maxLat, maxLon float64, now time.Time) []string {
	t.Helper()
	got, err := s.Objects().GeoObjectsInBox(context.Background(), minLat, minLon, maxLat, maxLon, now, AllGroups)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range got {
		u := o.UID
		if o.Server {
			u += "(server)"
		}
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

func TestGeoObjectsInBox(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{FlushInterval: time.Hour})
	now := timeNow()
	for _, ev := range []*cot.Event{
		markerEvent("hostile", "a-h-G-U-C-I-d", 10, 10, now, time.Hour),
		markerEvent("friend", "a-f-G", 10.1, 10.1, now, time.Hour),
		markerEvent("stale", "a-h-G", 10, 10, now, -time.Second),
		markerEvent("spot", "b-m-p-s-m", 10, 10, now, time.Hour),
		markerEvent("upper", "A-h-G", 10, 10, now, time.Hour), // not an a- type
		markerEvent("far", "a-h-G", 20, 20, now, time.Hour),
		markerEvent("east", "a-n-G", 0, 179.9, now, time.Hour),
		markerEvent("west", "a-n-G", 0, -180, now, time.Hour),
		ownPosition("ANDROID-1", 10, 10, now),
		// The server object's own history row, at its old place.
		markerEvent("api", "a-h-G", 10.2, 10.2, now, time.Hour),
		markerEvent("doomed", "a-u-G", 10, 10, now, time.Hour),
	} {
		h.Add(ev, nil, now, "cot-tcp", 1, AnonGroup)
	}
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	moved := serverObject("api", KindGeo, 10.05, 10.05, now.Add(time.Hour))
	if err := s.Objects().PutServerObject(ctx, moved); err != nil {
		t.Fatal(err)
	}
	emerg := serverObject("alert", KindEmergency, 10, 10, now.Add(time.Hour))
	if err := s.Objects().PutServerObject(ctx, emerg); err != nil {
		t.Fatal(err)
	}
	got := boxUIDs(t, s, 9, 9, 11, 11, now)
	want := []string{"api(server)", "doomed", "friend", "hostile"}
	if !equal(got, want) {
		t.Fatalf("box: %v, want %v", got, want)
	}
	// The server object's old history row outside the box does not count.
	if got := boxUIDs(t, s, 10.15, 10.15, 10.25, 10.25, now); len(got) != 0 {
		t.Fatalf("old place: %v", got)
	}
	// Across the antimeridian, both 179.9 and -180 match.
	if got := boxUIDs(t, s, -1, 179, 1, -179, now); !equal(got, []string{"east", "west"}) {
		t.Fatalf("antimeridian: %v", got)
	}
	// A client's delete ends its marker; a new event brings it back.
	h.Add(cot.NewDeparture("doomed", "a-u-G", now), nil, now.Add(time.Second), "cot-tcp", 1, AnonGroup)
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := boxUIDs(t, s, 9, 9, 11, 11, now.Add(2*time.Second)); !equal(got, []string{"api(server)", "friend", "hostile"}) {
		t.Fatalf("after a delete: %v", got)
	}
	h.Add(markerEvent("doomed", "a-u-G", 10, 10, now.Add(3*time.Second), time.Hour), nil, now.Add(3*time.Second), "cot-tcp", 1, AnonGroup)
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := boxUIDs(t, s, 9, 9, 11, 11, now.Add(4*time.Second)); len(got) != 4 {
		t.Fatalf("re-placed: %v", got)
	}
	// Deleting a server object ends its history row too.
	if _, err := s.Objects().DeleteServerObjects(ctx, []string{"api"}, now.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := boxUIDs(t, s, 9, 9, 11, 11, now.Add(6*time.Second)); !equal(got, []string{"doomed", "friend", "hostile"}) {
		t.Fatalf("after deleting the server object: %v", got)
	}
	// The own-position flag follows the uid's latest event.
	var pos int
	if err := s.r.QueryRow(`SELECT position FROM cot_latest WHERE uid = 'ANDROID-1'`).Scan(&pos); err != nil || pos != 1 {
		t.Fatalf("position flag %d %v", pos, err)
	}
	if _, err := s.Objects().GeoObjectsInBox(ctx, 0, 0, 1, math.Inf(1), now, AllGroups); err == nil {
		t.Fatal("an infinite bound was accepted")
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
