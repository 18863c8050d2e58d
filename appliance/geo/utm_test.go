package geo

import (
	"math"
	"math/rand"
	"strings"
	"testing"
)

// utmCase is a published UTM conversion; tol is the precision the source
// gives (metres).
type utmCase struct {
	lat, lon float64
	zone     int
	band     byte
	e, n     float64
	tol      float64
}

var utmPublished = []utmCase{
	// NGA.SIG.0012 (2014) §10.2, examples 8 to 20, with the UTM values to the
	// micrometre computed by GeographicLib's GeoConvert, as quoted in
	// mrJean1/PyGeodesy test/testUps.py.
	{83, 90, 46, 'X', 459200.256323, 9217519.441609, 1e-5},
	{82, 91, 46, 'X', 468930.934996, 9105366.008486, 1e-5},
	{81, 179, 60, 'X', 534921.971582, 8993806.415149, 1e-5},
	{80, 180, 1, 'X', 441867.784867, 8883084.955948, 1e-5},
	{40, 0, 31, 'T', 243900.352030, 4432069.056899, 1e-5},
	{3, -179, 1, 'N', 277707.830749, 331796.291679, 1e-5},
	{2, -90, 16, 'N', 166223.907623, 221366.166030, 1e-5},
	{1, -1, 30, 'N', 722561.736479, 110597.972524, 1e-5},
	{0, 0, 31, 'N', 166021.443081, 0, 1e-5},
	{-1, 1, 31, 'M', 277438.263521, 9889402.027476, 1e-5},
	{-2, 90, 46, 'M', 166223.907623, 9778633.833970, 1e-5},
	{-3, 179, 60, 'M', 722292.169251, 9668203.708321, 1e-5},
	{-4, 180, 1, 'M', 166831.065275, 9557263.747314, 1e-5},
	// chrisveness/geodesy test/utm-mgrs-tests.js ("latitude/longitude -> UTM").
	{1, 1, 31, 'N', 277438.26352, 110597.97252, 1e-5},
	{-1, -1, 30, 'M', 722561.73648, 9889402.02748, 1e-5},
	{48.8583, 2.2945, 31, 'U', 448251.898, 5411943.794, 1e-3},
	{-33.857, 151.215, 56, 'H', 334873.199, 6252266.092, 1e-3},
	{38.8977, -77.0365, 18, 'S', 323394.296, 4307395.634, 1e-3},
	{-22.9519, -43.2106, 23, 'K', 683466.254, 7460687.433, 1e-3},
	{60.39135, 5.3249, 32, 'V', 297508.41, 6700645.30, 1e-2},
	// The same file, "IBM coordconvert" cases (UTM rounded to the metre).
	{0.1300, -0.2324, 30, 'N', 808084, 14386, 0.5},
	{-45.6456, 23.3545, 34, 'G', 683474, 4942631, 0.5},
	{-12.7650, -33.8765, 25, 'L', 404859, 8588691, 0.5},
	{23.4578, -135.4545, 8, 'Q', 453580, 2594273, 0.5},
	{77.3450, 156.9876, 57, 'X', 450794, 8586116, 0.5},
}

func TestUTMPublished(t *testing.T) {
	for _, c := range utmPublished {
		p := Point{c.lat, c.lon}
		u, err := ToUTM(p)
		if err != nil {
			t.Errorf("ToUTM(%v): %v", p, err)
			continue
		}
		if u.Zone != c.zone || u.Band != c.band ||
			math.Abs(u.Easting-c.e) > c.tol || math.Abs(u.Northing-c.n) > c.tol {
			t.Errorf("ToUTM(%v) = %v (%.6f %.6f), want %d%c %.6f %.6f", p, u, u.Easting, u.Northing, c.zone, c.band, c.e, c.n)
		}
		// Back: the published grid position gives the point, to within
		// the source's precision on the ground.
		q, err := FromUTM(UTM{Zone: c.zone, Band: c.band, Easting: c.e, Northing: c.n})
		if err != nil {
			t.Errorf("FromUTM(%d%c %v %v): %v", c.zone, c.band, c.e, c.n, err)
			continue
		}
		if d := Distance(p, q); d > c.tol*1.5+1e-6 {
			t.Errorf("FromUTM(%d%c %v %v) = %v, %.6f m from %v", c.zone, c.band, c.e, c.n, q, d, p)
		}
	}
}

// UTM round trips everywhere in the UTM area, with the zone rules applied.
func TestUTMRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for i := 0; i < 20000; i++ {
		p := Point{rng.Float64()*164 - 80, rng.Float64()*360 - 180}
		u, err := ToUTM(p)
		if err != nil {
			t.Fatalf("ToUTM(%v): %v", p, err)
		}
		q, err := FromUTM(u)
		if err != nil {
			t.Fatalf("FromUTM(%v) of %v: %v", u, p, err)
		}
		if d := Distance(p, q); d > 1e-6 {
			t.Fatalf("%v → %v → %v: %.3g m apart", p, u, q, d)
		}
	}
}

// The standard zone of a position, with the exceptions for south-west
// Norway (32V widened to 3°E) and Svalbard (31X, 33X, 35X, 37X), as
// tested in chrisveness/geodesy test/utm-mgrs-tests.js ("Norway/Svalbard
// adjustment"), plus the edges of the exceptions.
func TestUTMZoneRules(t *testing.T) {
	cases := []struct {
		lat, lon float64
		zone     int
		band     byte
	}{
		{60, 4, 32, 'V'}, {75, 8, 31, 'X'}, {75, 10, 33, 'X'}, {75, 20, 33, 'X'},
		{75, 22, 35, 'X'}, {75, 32, 35, 'X'}, {75, 34, 37, 'X'},
		{56, 3, 32, 'V'}, {56, 2.9999, 31, 'V'}, {55.9999, 3, 31, 'U'}, {63.9999, 11.9999, 32, 'V'},
		{64, 4, 31, 'W'}, {60, 12, 33, 'V'}, {72, 0, 31, 'X'}, {71.9999, 8, 32, 'W'},
		{84, 8.9999, 31, 'X'}, {84, 9, 33, 'X'}, {80, 21, 35, 'X'}, {80, 33, 37, 'X'}, {84, 42, 38, 'X'},
		{0, -180, 1, 'N'}, {0, 180, 1, 'N'}, {0, 179.9999, 60, 'N'}, {-80, 0, 31, 'C'},
		{-0.0000001, 0, 31, 'M'}, {0, 0, 31, 'N'}, {-72, 0, 31, 'D'}, {-72.0000001, 0, 31, 'C'},
	}
	for _, c := range cases {
		u, err := ToUTM(Point{c.lat, c.lon})
		if err != nil || u.Zone != c.zone || u.Band != c.band {
			t.Errorf("ToUTM(%v, %v) = %v, %v; want zone %d%c", c.lat, c.lon, u, err, c.zone, c.band)
		}
	}
}

func TestUTMErrors(t *testing.T) {
	for _, p := range []Point{{84.0000001, 0}, {-80.0000001, 0}, {90, 0}, {91, 0}, {0, math.NaN()}} {
		if u, err := ToUTM(p); err == nil {
			t.Errorf("ToUTM(%v) = %v, want an error", p, u)
		}
	}
	bad := []struct {
		u    UTM
		want string
	}{
		{UTM{0, 'N', 500000, 0}, "zone 0"},
		{UTM{61, 'N', 500000, 0}, "zone 61"},
		{UTM{33, 'I', 500000, 0}, "band letter"},
		{UTM{33, 'Y', 500000, 0}, "band letter"},
		{UTM{32, 'X', 500000, 8000000}, "does not exist"},
		{UTM{33, 'N', 50000, 0}, "easting"},
		{UTM{33, 'N', 950000, 0}, "easting"},
		{UTM{33, 'N', 500000, -1}, "northing"},
		{UTM{33, 'N', math.NaN(), 0}, "easting"},
		// 6580000 m north is 59°N, band V, not N (a hemisphere letter in
		// place of the band) nor U.
		{UTM{33, 'N', 674000, 6580000}, "not in latitude band N"},
		{UTM{33, 'U', 674000, 6580000}, "not in latitude band U (48°N to 56°N)"},
		{UTM{33, 'S', 674000, 6580000}, "not in latitude band S"},
	}
	for _, b := range bad {
		if p, err := FromUTM(b.u); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("FromUTM(%+v) = %v, %v; want an error with %q", b.u, p, err, b.want)
		}
	}
	if got := (UTM{33, 'V', 674000.25, 6580000}).String(); got != "33V 674000.25 6580000" {
		t.Errorf("String = %q", got)
	}
}

// tauFromPrime inverts tauPrime from the equator to the poles.
func TestConformalLatitude(t *testing.T) {
	for lat := -89.999; lat <= 89.999; lat += 0.0731 {
		tau := math.Tan(lat * deg)
		back := wgs84.tauFromPrime(wgs84.tauPrime(tau))
		if math.Abs(back-tau) > 1e-14*math.Max(1, math.Abs(tau)) {
			t.Fatalf("lat %v: τ %v, back %v", lat, tau, back)
		}
	}
}
