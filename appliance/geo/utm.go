package geo

import (
	"fmt"
	"math"
	"strconv"
)

// Universal Transverse Mercator: 60 zones of 6° of longitude, scale 0.9996
// on the central meridian, false easting 500 000 m, false northing 0 north
// of the equator and 10 000 000 m south of it (NGA.SIG.0012, "The Universal
// Grids and the Transverse Mercator and Polar Stereographic Map
// Projections"). UTM covers 80°S to 84°N; the caps are UPS (ups.go).

const (
	utmK0           = 0.9996
	utmFalseEasting = 500000.0
	utmFalseSouth   = 10000000.0
	utmMinLat       = -80.0
	utmMaxLat       = 84.0
)

// bandLetters are the MGRS latitude bands from 80°S, 8° each but X (72°N
// to 84°N, 12°). I and O are not used.
const bandLetters = "CDEFGHJKLMNPQRSTUVWX"

// UTM is a position on the UTM grid.
type UTM struct {
	Zone int  // 1 to 60
	Band byte // MGRS latitude band letter, 'C' to 'X'; 'N' and above are north of the equator
	// Easting and Northing in metres; the northing of a point south of the
	// equator includes the false northing of 10 000 000 m.
	Easting, Northing float64
}

// North reports whether the band is north of the equator.
func (u UTM) North() bool { return u.Band >= 'N' }

// String formats u as "33V 674000 6580000", to the millimetre.
func (u UTM) String() string {
	return strconv.Itoa(u.Zone) + string(u.Band) + " " + metres(u.Easting) + " " + metres(u.Northing)
}

// metres formats a grid coordinate rounded to the millimetre, without
// trailing zeros.
func metres(v float64) string {
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

// ToUTM converts p to UTM in its standard zone (with the Norway and
// Svalbard exceptions). It fails outside 80°S to 84°N, where UPS applies.
func ToUTM(p Point) (UTM, error) {
	if err := p.Check(); err != nil {
		return UTM{}, err
	}
	if p.Lat < utmMinLat || p.Lat > utmMaxLat {
		return UTM{}, fmt.Errorf("latitude %v is outside the UTM area (80°S to 84°N); use UPS there", p.Lat)
	}
	lon := normLon(p.Lon)
	zone := utmZone(p.Lat, lon)
	e, n := utmForward(p.Lat, lon, zone)
	return UTM{Zone: zone, Band: bandOf(p.Lat), Easting: e, Northing: n}, nil
}

// FromUTM converts a UTM position to latitude and longitude. The band
// letter must agree with the position (within about 11 km), which catches
// a mistyped band or a hemisphere letter given in its place.
func FromUTM(u UTM) (Point, error) {
	if err := checkZoneBand(u.Zone, u.Band); err != nil {
		return Point{}, err
	}
	if !(u.Easting >= 100000 && u.Easting <= 900000) {
		return Point{}, fmt.Errorf("UTM easting %s is outside 100000 to 900000 m", metres(u.Easting))
	}
	if !(u.Northing >= 0 && u.Northing <= 10000000) {
		return Point{}, fmt.Errorf("UTM northing %s is outside 0 to 10000000 m", metres(u.Northing))
	}
	p := utmReverse(u.Zone, u.North(), u.Easting, u.Northing)
	if err := checkBand(p.Lat, u.Band, 0.1); err != nil {
		return Point{}, err
	}
	return p, nil
}

// utmZone is the standard zone of a position (lon in [-180, 180)).
func utmZone(lat, lon float64) int {
	zone := int(math.Floor((lon+180)/6)) + 1
	if zone > 60 {
		zone = 60
	}
	switch {
	case lat >= 56 && lat < 64 && lon >= 3 && lon < 12:
		return 32 // 32V is widened west over the Norwegian coast
	case lat >= 72 && lon >= 0 && lon < 42: // band X, Svalbard
		switch {
		case lon < 9:
			return 31
		case lon < 21:
			return 33
		case lon < 33:
			return 35
		default:
			return 37
		}
	}
	return zone
}

// bandOf is the latitude band letter of a latitude in [-80, 84].
func bandOf(lat float64) byte {
	i := int(math.Floor((lat + 80) / 8))
	if i < 0 {
		i = 0
	}
	if i > len(bandLetters)-1 {
		i = len(bandLetters) - 1
	}
	return bandLetters[i]
}

// bandRange is the latitude range [south, north) of a band letter.
func bandRange(band byte) (south, north float64) {
	for i := 0; i < len(bandLetters); i++ {
		if bandLetters[i] == band {
			south = -80 + 8*float64(i)
			if band == 'X' {
				return south, 84
			}
			return south, south + 8
		}
	}
	return math.NaN(), math.NaN()
}

func checkZoneBand(zone int, band byte) error {
	if zone < 1 || zone > 60 {
		return fmt.Errorf("UTM zone %d is outside 1 to 60", zone)
	}
	if s, _ := bandRange(band); math.IsNaN(s) {
		return fmt.Errorf("%q is not a latitude band letter (C to X, without I and O)", band)
	}
	if band == 'X' && (zone == 32 || zone == 34 || zone == 36) {
		return fmt.Errorf("grid zone %d%c does not exist (Svalbard is in 31X, 33X, 35X and 37X)", zone, band)
	}
	return nil
}

// checkBand fails when lat is farther than tol degrees outside the band.
func checkBand(lat float64, band byte, tol float64) error {
	s, n := bandRange(band)
	if lat < s-tol || lat > n+tol {
		return fmt.Errorf("the position (latitude %.4f) is not in latitude band %c (%s to %s)",
			lat, band, latName(s), latName(n))
	}
	return nil
}

func latName(lat float64) string {
	if lat < 0 {
		return strconv.FormatFloat(-lat, 'f', -1, 64) + "°S"
	}
	return strconv.FormatFloat(lat, 'f', -1, 64) + "°N"
}

func centralMeridian(zone int) float64 { return float64(6*zone - 183) }

// utmForward projects to easting and northing in the given zone.
func utmForward(lat, lon float64, zone int) (e, n float64) {
	x, y := wgs84TM.forward(lat, normLon(lon-centralMeridian(zone)))
	e, n = utmFalseEasting+utmK0*x, utmK0*y
	if lat < 0 {
		n += utmFalseSouth
	}
	return e, n
}

// utmReverse is the inverse of utmForward.
func utmReverse(zone int, north bool, e, n float64) Point {
	if !north {
		n -= utmFalseSouth
	}
	lat, dlon := wgs84TM.reverse((e-utmFalseEasting)/utmK0, n/utmK0)
	return Point{Lat: lat, Lon: normLon(centralMeridian(zone) + dlon)}
}
