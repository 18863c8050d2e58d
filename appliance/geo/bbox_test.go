package geo

import (
	"math"
	"math/rand"
	"testing"
)

// Every point of the circle, and of its inside, is in the box: checked on
// random circles everywhere, including around the poles and across the
// antimeridian, with points at the exact geodesic radius.
func TestBoundingBoxContainsCircle(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	centers := []Point{{0, 0}, {59.3293, 18.0686}, {-33.86, 151.21}, {89.9, 0}, {-89.5, 45},
		{10, 179.99}, {-10, -179.99}, {0, 180}, {0, -180}, {84, -120}, {-80, 60}}
	for i := 0; i < 400; i++ {
		centers = append(centers, Point{rng.Float64()*180 - 90, rng.Float64()*360 - 180})
	}
	radii := []float64{0, 1, 100, 5000, 100e3, 1000e3, 5000e3}
	for _, c := range centers {
		for _, r := range radii {
			b := BoundingBox(c, r)
			if b.MinLat > c.Lat || b.MaxLat < c.Lat || !b.Contains(c) {
				t.Fatalf("box %+v of %v r=%v misses its centre", b, c, r)
			}
			for k := 0; k < 72; k++ {
				brg := float64(k) * 5
				for _, f := range []float64{1, 0.5} {
					p := Destination(c, brg, r*f)
					if !b.Contains(p) {
						t.Fatalf("box %+v of %v r=%v misses %v (bearing %v, %v m)", b, c, r, p, brg, r*f)
					}
					// The same meridian written as 180 or -180.
					if p.Lon == -180 && !b.Contains(Point{p.Lat, 180}) {
						t.Fatalf("box %+v misses %v written with +180", b, p)
					}
				}
			}
		}
	}
}

func TestBoundingBoxShape(t *testing.T) {
	// Mid-latitudes: a few per cent larger than the circle, never smaller.
	c := Point{59.3293, 18.0686}
	r := 10000.0
	b := BoundingBox(c, r)
	north := Destination(c, 0, r).Lat - c.Lat
	east := Destination(c, 90, r).Lon - c.Lon
	if h := b.MaxLat - c.Lat; h < north || h > north*1.02 {
		t.Errorf("half height %v for a circle reaching %v north", h, north)
	}
	if w := b.MaxLon - c.Lon; w < east || w > east*1.05 {
		t.Errorf("half width %v for a circle reaching %v east", w, east)
	}
	if b.CrossesAntimeridian() {
		t.Errorf("%+v crosses the antimeridian", b)
	}

	// Across the antimeridian.
	b = BoundingBox(Point{10, 179.9}, 50e3)
	if !b.CrossesAntimeridian() || b.MinLon > 179.9 || b.MaxLon < -180 || b.MaxLon > -179 {
		t.Errorf("antimeridian box %+v", b)
	}
	for _, p := range []Point{{10, 180}, {10, -180}, {10, -179.7}, {10, 179.6}} {
		if !b.Contains(p) {
			t.Errorf("antimeridian box %+v misses %v", b, p)
		}
	}
	if b.Contains(Point{10, 0}) || b.Contains(Point{10, 179}) || b.Contains(Point{10, -179}) {
		t.Errorf("antimeridian box %+v holds far longitudes", b)
	}

	// A circle around the pole holds every longitude.
	b = BoundingBox(Point{89.9, 0}, 50e3)
	if b != (Box{MinLat: b.MinLat, MaxLat: 90, MinLon: -180, MaxLon: 180}) || b.MinLat > 89.45 {
		t.Errorf("polar box %+v", b)
	}
	b = BoundingBox(Point{-90, 0}, 1)
	if b.MinLat != -90 || b.MinLon != -180 || b.MaxLon != 180 {
		t.Errorf("south pole box %+v", b)
	}

	// Bad radii shrink to the point itself.
	for _, r := range []float64{-5, math.NaN()} {
		b := BoundingBox(c, r)
		if b.MaxLat-b.MinLat > 1e-8 || !b.Contains(c) {
			t.Errorf("radius %v: box %+v", r, b)
		}
	}
	// A radius larger than the earth covers it.
	if b := BoundingBox(c, 3e7); b != (Box{-90, 90, -180, 180}) {
		t.Errorf("huge radius: %+v", b)
	}
}
