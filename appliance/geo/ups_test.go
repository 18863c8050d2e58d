package geo

import (
	"math"
	"strings"
	"testing"
)

// NGA.SIG.0012 (2014) §10.2, "Examples of computing {x, y, σ, γ}, given
// {λ, φ, Z}", north polar stereographic, as quoted in mrJean1/PyGeodesy
// test/testUps.py. Examples 1 to 7 are in the UPS area; 8 to 20 are the
// same projection carried far outside it (down to 4°S), which exercises the
// conformal latitude over its whole range.
func TestUPSNGAForward(t *testing.T) {
	cases := []struct {
		lon, lat, e, n float64
	}{
		{-0.0, 90, 2000000.0, 2000000.0},
		{-179, 89, 1998062.320046, 2111009.610243},
		{-90, 88, 1777930.731071, 2000000.0},
		{-1, 87, 1994185.827038, 1666906.254073},
		{0, 86, 2000000.0, 1555731.570643},
		{1, 85, 2009694.068153, 1444627.207468},
		{89, 84, 2666626.157825, 1988363.997132},
		{90, 83, 2778095.750322, 2000000.0},
		{91, 82, 2889442.490749, 2015525.276426},
		{179, 81, 2017473.190606, 3001038.419357},
		{180, 80, 2000000.0, 3112951.136955},
		{0, 40, 2000000.0, -3918313.984953},
		{-179, 3, 1790630.987261, 13994742.706481},
		{-90, 2, -10206568.118587, 2000000.0},
		{-1, 1, 1783239.204558, -10418217.653909},
		{0, 0, 2000000.0, -10637318.498257},
		{1, -1, 2224408.737826, -10856367.979638},
		{90, -2, 15083269.373905, 2000000.0},
		{179, -3, 2232331.498720, 15310262.647286},
		{180, -4, 2000000.0, 15545537.944524},
	}
	for i, c := range cases {
		e, n := upsForward(true, c.lat, c.lon)
		if math.Abs(e-c.e) > 1e-5 || math.Abs(n-c.n) > 1e-5 {
			t.Errorf("example %d (%v, %v): %.6f %.6f, want %.6f %.6f", i+1, c.lat, c.lon, e, n, c.e, c.n)
		}
		// The grid values are given to the micrometre.
		p := upsReverse(true, c.e, c.n)
		if d := Distance(p, Point{c.lat, c.lon}); d > 1e-5 {
			t.Errorf("example %d reversed: %v, %.3g m from %v, %v", i+1, p, d, c.lat, c.lon)
		}
		if i < 7 { // in the UPS area: the public API too
			u, err := ToUPS(Point{c.lat, c.lon})
			if err != nil || math.Abs(u.Easting-c.e) > 1e-5 || math.Abs(u.Northing-c.n) > 1e-5 || !u.North() {
				t.Errorf("ToUPS(%v, %v) = %v, %v", c.lat, c.lon, u, err)
			}
		}
	}
}

// NGA.SIG.0012 (2014) §10.3, "Examples of computing {λ, φ}, given
// {Z, x, y}", south polar stereographic, as quoted in mrJean1/PyGeodesy
// test/testUps.py (latitude and longitude to 1e-10°).
func TestUPSNGAReverse(t *testing.T) {
	cases := []struct {
		e, n, lon, lat float64
	}{
		{0, 0, -135.0, -64.9164123332},
		{1000000, 0, -153.4349488229, -70.0552944014},
		{2000000, 0, -180.0, -72.1263610163},
		{3000000, 0, 153.4349488229, -70.0552944014},
		{4000000, 0, 135.0, -64.9164123332},
		{0, 1000000, -116.5650511771, -70.0552944014},
		{1000000, 1000000, -135.0, -77.3120791908},
		{2000000, 1000000, 180.0, -81.0106632645},
		{3000000, 1000000, 135.0, -77.3120791908},
		{4000000, 1000000, 116.5650511771, -70.0552944014},
		{0, 2000000, -90.0, -72.1263610163},
		{1000000, 2000000, -90.0, -81.0106632645},
		{2000000, 2000000, 0.0, -90.0},
		{3000000, 2000000, 90.0, -81.0106632645},
		{4000000, 2000000, 90.0, -72.1263610163},
		{0, 3000000, -63.4349488229, -70.0552944014},
		{1000000, 3000000, -45.0, -77.3120791908},
		{2000000, 3000000, 0.0, -81.0106632645},
		{3000000, 3000000, 45.0, -77.3120791908},
		{4000000, 3000000, 63.4349488229, -70.0552944014},
		{0, 4000000, -45.0, -64.9164123332},
		{1000000, 4000000, -26.5650511771, -70.0552944014},
		{2000000, 4000000, 0.0, -72.1263610163},
		{3000000, 4000000, 26.5650511771, -70.0552944014},
		{4000000, 4000000, 45.0, -64.9164123332},
	}
	for i, c := range cases {
		p := upsReverse(false, c.e, c.n)
		if math.Abs(p.Lat-c.lat) > 1e-10 || c.lat != -90 && math.Abs(angleDiff(p.Lon, c.lon)) > 1e-10 {
			t.Errorf("example %d (%v %v): %.10f, %.10f, want %v, %v", i+1, c.e, c.n, p.Lat, p.Lon, c.lat, c.lon)
		}
		e, n := upsForward(false, c.lat, c.lon)
		if math.Abs(e-c.e) > 1e-3 || math.Abs(n-c.n) > 1e-3 {
			t.Errorf("example %d forward: %.4f %.4f", i+1, e, n)
		}
	}
}

// DMA TM8358.2 (1989) p. 3-7, UPS examples ID 1 to 6 (as quoted in
// mrJean1/PyGeodesy test/testUps.py), and GeographicLib's GeoConvert for
// 84°N 84°E (n 2663075.299562 1930307.977716).
func TestUPSPublished(t *testing.T) {
	id1 := Point{dms(false, 84, 17, 14.042), dms(true, 132, 14, 52.761)}
	id3 := Point{dms(true, 87, 17, 14.4), dms(false, 132, 14, 52.303)}
	cases := []struct {
		p    Point
		zone byte
		e, n float64
		tol  float64 // metres
	}{
		{id1, 'Y', 1530125.78, 2426773.6, 0.06},
		{id3, 'B', 2222979.47, 1797474.9, 0.06},
		{Point{84, 84}, 'Z', 2663075.299562, 1930307.977716, 1e-5},
	}
	for _, c := range cases {
		u, err := ToUPS(c.p)
		if err != nil || u.Zone != c.zone || math.Abs(u.Easting-c.e) > c.tol || math.Abs(u.Northing-c.n) > c.tol {
			t.Errorf("ToUPS(%v) = %v (%.4f %.4f), %v; want %c %v %v", c.p, u, u.Easting, u.Northing, err, c.zone, c.e, c.n)
		}
		q, err := FromUPS(UPS{Zone: c.zone, Easting: c.e, Northing: c.n})
		if err != nil || Distance(c.p, q) > c.tol*1.5 {
			t.Errorf("FromUPS(%c %v %v) = %v, %v; want %v", c.zone, c.e, c.n, q, err, c.p)
		}
	}
	// ID 2 and 5: 73°N 44°E, far outside the UPS area, on the north grid.
	if e, n := upsForward(true, 73, 44); math.Abs(e-3320416.75) > 0.006 || math.Abs(n-632668.43) > 0.006 {
		t.Errorf("TM8358.2 ID 2: %.3f %.3f", e, n)
	}
	if p := upsReverse(true, 3320416.75, 632668.43); math.Abs(p.Lat-73) > 1e-7 || math.Abs(p.Lon-44) > 1e-7 {
		t.Errorf("TM8358.2 ID 5: %v", p)
	}
}

func TestUPSErrors(t *testing.T) {
	for _, p := range []Point{{83.4, 0}, {0, 0}, {-79.4, 10}, {math.NaN(), 0}} {
		if u, err := ToUPS(p); err == nil {
			t.Errorf("ToUPS(%v) = %v, want an error", p, u)
		}
	}
	// The half-degree overlap with UTM is allowed.
	for _, p := range []Point{{83.6, 45}, {-79.6, 0}, {90, 0}, {-90, 0}} {
		if _, err := ToUPS(p); err != nil {
			t.Errorf("ToUPS(%v): %v", p, err)
		}
	}
	bad := []struct {
		u    UPS
		want string
	}{
		{UPS{'N', 2000000, 2000000}, "not a UPS zone letter"},
		{UPS{'Z', -1, 2000000}, "0 to 4000000"},
		{UPS{'Z', 2000000, 4000001}, "0 to 4000000"},
		{UPS{'Y', 2100000, 2000000}, "not in zone Y"},
		{UPS{'B', 1900000, 2000000}, "not in zone B"},
		{UPS{'Z', 2000000, 3000000}, "outside the polar area"}, // about 81°N
		{UPS{'A', 1000000, 1000000}, "outside the polar area"}, // about 77°S
	}
	for _, b := range bad {
		if p, err := FromUPS(b.u); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("FromUPS(%+v) = %v, %v; want an error with %q", b.u, p, err, b.want)
		}
	}
	if p, err := FromUPS(UPS{'Z', 2000000, 2000000}); err != nil || p.Lat != 90 {
		t.Errorf("north pole: %v, %v", p, err)
	}
	if got := (UPS{'Z', 2426773, 1530125.5}).String(); got != "Z 2426773 1530125.5" {
		t.Errorf("String = %q", got)
	}
}
