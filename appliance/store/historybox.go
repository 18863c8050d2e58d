package store

// The box of the map the CoT history queries select positions in
// (LatestInBox, LatestInWindow), and the same test for callers that hold
// events themselves.

import (
	"fmt"
	"math"
)

// Box is an area of the map in degrees; MinLon > MaxLon crosses the
// antimeridian.
type Box struct {
	MinLat, MinLon, MaxLat, MaxLon float64
}

// Check reports a box that is no area: bounds that are not finite numbers,
// out of range, or a south edge north of the north edge (ErrInvalid).
func (b Box) Check() error {
	for _, v := range []float64{b.MinLat, b.MinLon, b.MaxLat, b.MaxLon} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: bounds must be finite numbers", ErrInvalid)
		}
	}
	switch {
	case b.MinLat < -90 || b.MaxLat > 90 || b.MinLon < -180 || b.MaxLon > 180:
		return fmt.Errorf("%w: latitude must be within ±90, longitude within ±180", ErrInvalid)
	case b.MinLat > b.MaxLat:
		return fmt.Errorf("%w: minimum latitude %g is above maximum %g", ErrInvalid, b.MinLat, b.MaxLat)
	}
	return nil
}

// Contains reports whether the point lat, lon lies in the box (its edges
// included). Box.sql is the same test in SQL.
func (b Box) Contains(lat, lon float64) bool {
	if lat < b.MinLat || lat > b.MaxLat {
		return false
	}
	if b.MinLon > b.MaxLon {
		return lon >= b.MinLon || lon <= b.MaxLon
	}
	return lon >= b.MinLon && lon <= b.MaxLon
}

// sql is Contains of the lat and lon columns of the table t, and its
// arguments.
func (b Box) sql(t string) (string, []any) {
	lon := t + `.lon BETWEEN ? AND ?`
	if b.MinLon > b.MaxLon {
		lon = `(` + t + `.lon >= ? OR ` + t + `.lon <= ?)`
	}
	return t + `.lat BETWEEN ? AND ? AND ` + lon, []any{b.MinLat, b.MaxLat, b.MinLon, b.MaxLon}
}
