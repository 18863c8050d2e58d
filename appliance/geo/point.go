package geo

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Point is a WGS-84 position in decimal degrees: Lat positive north, Lon
// positive east.
type Point struct {
	Lat, Lon float64
}

// Check reports whether p is a position on the earth: finite, latitude in
// [-90, 90] and longitude in [-180, 180]. The error names the bad value.
func (p Point) Check() error {
	switch {
	case math.IsNaN(p.Lat) || math.IsInf(p.Lat, 0):
		return fmt.Errorf("latitude %v is not a number", p.Lat)
	case math.IsNaN(p.Lon) || math.IsInf(p.Lon, 0):
		return fmt.Errorf("longitude %v is not a number", p.Lon)
	case p.Lat < -90 || p.Lat > 90:
		return fmt.Errorf("latitude %v is outside -90 to 90", p.Lat)
	case p.Lon < -180 || p.Lon > 180:
		return fmt.Errorf("longitude %v is outside -180 to 180", p.Lon)
	}
	return nil
}

// Valid reports whether Check finds nothing wrong.
func (p Point) Valid() bool { return p.Check() == nil }

// String formats p as "lat, lon" in decimal degrees with the fewest digits
// that read back (through Parse) to exactly p, but at most 15 decimals
// (1e-15° is a ten-millionth of a millimetre).
func (p Point) String() string {
	return decimal(p.Lat) + ", " + decimal(p.Lon)
}

func decimal(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if i := strings.IndexByte(s, '.'); i >= 0 && len(s)-i-1 > 15 {
		s = strings.TrimRight(strings.TrimRight(strconv.FormatFloat(v, 'f', 15, 64), "0"), ".")
	}
	return s
}

const (
	deg = math.Pi / 180 // radians per degree
	rad = 180 / math.Pi // degrees per radian
)

// normLon maps a longitude in degrees to [-180, 180).
func normLon(lon float64) float64 {
	if lon >= -180 && lon < 180 {
		return lon
	}
	lon = math.Mod(lon+180, 360)
	if lon < 0 {
		lon += 360
	}
	return lon - 180
}

// norm360 maps an angle in degrees to [0, 360).
func norm360(a float64) float64 {
	if a >= 0 && a < 360 {
		return a
	}
	a = math.Mod(a, 360)
	if a < 0 {
		a += 360
	}
	if a >= 360 { // -tiny + 360 rounds to 360
		a = 0
	}
	return a
}

// ellipsoid holds the constants of an ellipsoid of revolution. The package
// works on WGS-84; other ellipsoids exist for the tests that check the
// methods against values published on them.
type ellipsoid struct {
	a, f, b float64 // semi-major axis (m), flattening, semi-minor axis (m)
	e2, e   float64 // first eccentricity squared, and itself
	ep2     float64 // second eccentricity squared
	n       float64 // third flattening (a-b)/(a+b)
}

func newEllipsoid(a, invF float64) *ellipsoid {
	f := 1 / invF
	e2 := f * (2 - f)
	return &ellipsoid{
		a: a, f: f, b: a * (1 - f),
		e2: e2, e: math.Sqrt(e2), ep2: e2 / (1 - e2),
		n: f / (2 - f),
	}
}

// wgs84 is the World Geodetic System 1984 ellipsoid (a = 6378137 m,
// 1/f = 298.257223563), the datum of CoT, GPS, UTM/UPS and MGRS here.
var wgs84 = newEllipsoid(6378137, 298.257223563)
