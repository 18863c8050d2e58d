package mgmt_test

import (
	"testing"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/geo"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// TestGetGeoObjectFindsClientMarkers: getGeoObject finds the markers CoT
// clients placed as well as the API's objects, within a geodesic circle
// (not its bounding box), by attitude, nearest first, and leaves out
// clients' own positions, other families of types, stale and deleted
// markers.
func TestGetGeoObjectFindsClientMarkers(t *testing.T) {
	e := newEnv(t, nil)
	c := e.app.DialTCP(t)
	joined(t, c)
	center := geo.Point{Lat: 38.8566, Lon: -77.0636}
	at := func(bearing, metres float64) geo.Point { return geo.Destination(center, bearing, metres) }
	send := func(ev *cot.Event) {
		t.Helper()
		if err := c.Send(ev); err != nil {
			t.Fatal(err)
		}
	}
	// The client's own position, right at the centre.
	send(takclient.SA("ANDROID-hope", "HOPE", center.Lat, center.Lon))
	p := at(45, 50)
	send(marker("m-sniper", "a-h-G-U-C-I-d", "S.1", p.Lat, p.Lon, time.Hour))
	p = at(200, 80)
	send(marker("m-friend", "a-f-G", "F.1", p.Lat, p.Lon, time.Hour))
	p = at(45, 130) // inside the 100 m circle's bounding box, outside the circle
	send(marker("m-corner", "a-u-G-U-C", "U.1", p.Lat, p.Lon, time.Hour))
	p = at(0, 10)
	send(marker("m-spot", "b-m-p-s-m", "R 1", p.Lat, p.Lon, time.Hour)) // a spot, not an a- object
	p = at(90, 20)
	send(marker("m-stale", "a-h-G", "H.old", p.Lat, p.Lon, -time.Minute))
	p = at(90, 60)
	e.post("POST", "/ManageGeoObject/postGeoObject", map[string]any{"geoObject": "Mortar", "attitude": "hostile",
		"how": "gps", "latitude": p.Lat, "longitude": p.Lon, "timeout": 600})
	testkit.WaitFor(t, "the history to hold the client's events", func() bool {
		return e.count("cot_latest", "uid IN ('ANDROID-hope', 'm-sniper', 'm-friend', 'm-corner', 'm-spot', 'm-stale')") == 6
	})

	got := e.geoQuery(center.Lat, center.Lon, 100, "")
	want := []struct {
		typ, attitude     string
		bearing, distance float64
	}{{"Sniper", "hostile", 45, 50}, {"Mortar", "hostile", 90, 60}, {"Ground", "friendly", 200, 80}}
	if len(got) != len(want) {
		t.Fatalf("radius 100: %+v, want %v", got, want)
	}
	for i, w := range want {
		g := got[i]
		if g.Type != w.typ || g.Attitude != w.attitude || !near(g.Distance, w.distance, 1e-3) || !near(g.Direction, w.bearing, 1e-5) {
			t.Errorf("item %d: %+v, want %+v", i, g, w)
		}
		d, dir, _ := geo.Inverse(center, geo.Point{Lat: g.Latitude, Lon: g.Longitude})
		if !near(g.Distance, d, 1e-3) || !near(g.Direction, dir, 1e-5) {
			t.Errorf("item %d: distance %v direction %v, geodesic %v %v", i, g.Distance, g.Direction, d, dir)
		}
	}
	for _, c := range []struct {
		attitude string
		n        int
	}{{"hostile", 2}, {"friendly", 1}, {"friend", 1}, {"neutral", 0}, {"unknown", 0}, {"*", 3}, {"HOSTILE", 2}} {
		if got := e.geoQuery(center.Lat, center.Lon, 100, c.attitude); len(got) != c.n {
			t.Errorf("attitude %s: %d items, want %d: %+v", c.attitude, len(got), c.n, got)
		}
	}
	if got := e.geoQuery(center.Lat, center.Lon, 150, ""); len(got) != 4 || got[3].Type != "a-u-G-U-C" || got[3].Attitude != "unknown" {
		t.Errorf("radius 150: %+v, want the corner marker too (a type without a name shows as its CoT type)", got)
	}
	// The default radius is 100 m.
	r := e.do("GET", "/ManageGeoObject/getGeoObject?latitude=38.8566&longitude=-77.0636", e.admin, nil)
	var def geoItems
	r.JSON(t, &def)
	if len(def) != 3 {
		t.Errorf("default radius: %+v", def)
	}

	// The client deletes its marker: no longer found.
	send(cot.NewDeparture("m-sniper", "a-h-G-U-C-I-d", time.Now()))
	testkit.WaitFor(t, "the deleted marker to leave the query", func() bool {
		return len(e.geoQuery(center.Lat, center.Lon, 100, "hostile")) == 1
	})
}
