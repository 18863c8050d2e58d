package geo

import (
	"fmt"
	"math"
)

// Universal Polar Stereographic: the polar stereographic projection with
// scale 0.994 at the pole and false easting and northing 2 000 000 m, for
// the caps north of 84°N and south of 80°S (NGA.SIG.0012). The grid zones
// are named by letter: A (south, west longitudes), B (south, east), Y
// (north, west) and Z (north, east); longitude 0 belongs to B and Z.

const (
	upsK0    = 0.994
	upsFalse = 2000000.0
	// upsOverlap is how far (degrees) UPS may be used beyond its standard
	// area, as the standard allows: to 83.5°N and 79.5°S.
	upsOverlap = 0.5
)

// UPS is a position on the UPS grid.
type UPS struct {
	Zone              byte    // 'A', 'B' (south) or 'Y', 'Z' (north)
	Easting, Northing float64 // metres
}

// North reports whether the zone is the north polar one.
func (u UPS) North() bool { return u.Zone == 'Y' || u.Zone == 'Z' }

// String formats u as "Z 2426773 1530125", to the millimetre.
func (u UPS) String() string {
	return string(u.Zone) + " " + metres(u.Easting) + " " + metres(u.Northing)
}

// upsScale is 2·k0·a / √((1+e)^(1+e) (1-e)^(1-e)), the factor from
// tan(π/4 - χ/2) (χ the conformal latitude) to the distance from the pole
// on the grid.
var upsScale = 2 * upsK0 * wgs84.a /
	math.Sqrt(math.Pow(1+wgs84.e, 1+wgs84.e)*math.Pow(1-wgs84.e, 1-wgs84.e))

// ToUPS converts p to UPS. It fails between 79.5°S and 83.5°N (UTM's area
// less the half-degree overlap).
func ToUPS(p Point) (UPS, error) {
	if err := p.Check(); err != nil {
		return UPS{}, err
	}
	if p.Lat < utmMaxLat-upsOverlap && p.Lat > utmMinLat+upsOverlap {
		return UPS{}, fmt.Errorf("latitude %v is outside the UPS areas (north of 83.5°N, south of 79.5°S); use UTM there", p.Lat)
	}
	north := p.Lat > 0
	e, n := upsForward(north, p.Lat, p.Lon)
	return UPS{Zone: upsZone(north, e), Easting: e, Northing: n}, nil
}

// FromUPS converts a UPS position to latitude and longitude. The position
// must lie in the polar area of its zone letter (to 83.5°N or 79.5°S), on
// the zone's side of the 0°/180° meridian.
func FromUPS(u UPS) (Point, error) {
	return fromUPS(u, 0)
}

// fromUPS is FromUPS with tol more degrees of latitude allowed.
func fromUPS(u UPS, tol float64) (Point, error) {
	if u.Zone != 'A' && u.Zone != 'B' && u.Zone != 'Y' && u.Zone != 'Z' {
		return Point{}, fmt.Errorf("%q is not a UPS zone letter (A, B south; Y, Z north)", u.Zone)
	}
	if !(u.Easting >= 0 && u.Easting <= 4000000) || !(u.Northing >= 0 && u.Northing <= 4000000) {
		return Point{}, fmt.Errorf("UPS easting and northing must be 0 to 4000000 m, not %s %s",
			metres(u.Easting), metres(u.Northing))
	}
	west := u.Zone == 'A' || u.Zone == 'Y'
	if west && u.Easting > upsFalse || !west && u.Easting < upsFalse {
		return Point{}, fmt.Errorf("UPS easting %s is not in zone %c (A and Y are west of 2000000 m, B and Z east)",
			metres(u.Easting), u.Zone)
	}
	p := upsReverse(u.North(), u.Easting, u.Northing)
	if u.North() && p.Lat < utmMaxLat-upsOverlap-tol || !u.North() && p.Lat > utmMinLat+upsOverlap+tol {
		return Point{}, fmt.Errorf("the UPS position (latitude %.4f) is outside the polar area of zone %c", p.Lat, u.Zone)
	}
	return p, nil
}

func upsZone(north bool, easting float64) byte {
	switch {
	case north && easting < upsFalse:
		return 'Y'
	case north:
		return 'Z'
	case easting < upsFalse:
		return 'A'
	}
	return 'B'
}

// upsForward projects onto the polar stereographic grid of one pole.
func upsForward(north bool, lat, lon float64) (e, n float64) {
	if !north {
		lat = -lat
	}
	taup := wgs84.tauPrime(math.Tan(lat * deg))
	rho := upsScale / (math.Hypot(1, taup) + taup) // upsScale·tan(π/4 - χ/2)
	if lat == 90 {
		rho = 0
	}
	sinL, cosL := math.Sincos(lon * deg)
	if north {
		cosL = -cosL
	}
	return upsFalse + rho*sinL, upsFalse + rho*cosL
}

// upsReverse is the inverse of upsForward.
func upsReverse(north bool, e, n float64) Point {
	x, y := e-upsFalse, n-upsFalse
	if north {
		y = -y
	}
	rho := math.Hypot(x, y)
	if rho == 0 {
		if north {
			return Point{Lat: 90}
		}
		return Point{Lat: -90}
	}
	t := rho / upsScale
	lat := math.Atan(wgs84.tauFromPrime((1-t*t)/(2*t))) * rad
	if !north {
		lat = -lat
	}
	return Point{Lat: lat, Lon: normLon(math.Atan2(x, y) * rad)}
}
