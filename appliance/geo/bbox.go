package geo

import "math"

// Box is a latitude/longitude rectangle in degrees, the coarse filter of a
// radius search: select the rows inside the box (cheap, indexable), then
// keep those whose Distance is within the radius.
//
// MinLon > MaxLon means the box crosses the antimeridian: it holds the
// longitudes from MinLon up to 180 and from -180 up to MaxLon. In SQL:
//
//	lat BETWEEN :minLat AND :maxLat AND
//	(lon BETWEEN :minLon AND :maxLon)          -- MinLon <= MaxLon
//	(lon >= :minLon OR lon <= :maxLon)         -- MinLon >  MaxLon
type Box struct {
	MinLat, MaxLat, MinLon, MaxLon float64
}

// CrossesAntimeridian reports whether the box wraps from 180 to -180
// (MinLon > MaxLon).
func (b Box) CrossesAntimeridian() bool { return b.MinLon > b.MaxLon }

// Contains reports whether p is inside the box (edges included).
func (b Box) Contains(p Point) bool {
	if p.Lat < b.MinLat || p.Lat > b.MaxLat {
		return false
	}
	if b.CrossesAntimeridian() {
		return p.Lon >= b.MinLon || p.Lon <= b.MaxLon
	}
	return p.Lon >= b.MinLon && p.Lon <= b.MaxLon
}

// bboxMargin (degrees) absorbs rounding in the caller's comparisons.
const bboxMargin = 1e-9

// BoundingBox returns a box that contains every point within radius metres
// (geodesic distance) of center. It is never too small, and too large by
// only a few per cent, from two bounds that hold along any path on the
// ellipsoid: a path of length s changes latitude by at most s divided by
// the smallest meridian radius of curvature, a(1-e²), and longitude by at
// most s divided by the smallest radius of a parallel it can reach,
// a·cos(φ) at its latitude farthest from the equator (the radius of the
// parallel is N·cos φ with N ≥ a).
//
// When the circle may reach a pole, the box spans all longitudes and extends
// to that pole. The centre must be a valid point (Point.Check); a negative
// or NaN radius counts as 0.
func BoundingBox(center Point, radius float64) Box {
	if !(radius > 0) {
		radius = 0
	}
	e := wgs84
	dLat := radius/(e.a*(1-e.e2))*rad + bboxMargin
	b := Box{MinLat: center.Lat - dLat, MaxLat: center.Lat + dLat, MinLon: -180, MaxLon: 180}
	if b.MinLat <= -90 || b.MaxLat >= 90 {
		b.MinLat = math.Max(b.MinLat, -90)
		b.MaxLat = math.Min(b.MaxLat, 90)
		return b
	}
	far := math.Max(math.Abs(b.MinLat), math.Abs(b.MaxLat))
	dLon := radius/(e.a*math.Cos(far*deg))*rad + bboxMargin
	if dLon >= 180 {
		return b
	}
	lon := normLon(center.Lon)
	b.MinLon, b.MaxLon = lon-dLon, lon+dLon
	if b.MinLon <= -180 {
		b.MinLon += 360
	}
	if b.MaxLon >= 180 {
		// 180 and -180 are the same meridian and rows may store either:
		// wrap, so that both match.
		b.MaxLon -= 360
	}
	return b
}
