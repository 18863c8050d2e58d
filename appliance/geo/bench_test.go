package geo

import (
	"math/rand"
	"testing"
)

// benchPoints are objects scattered within about 100 km of a query point,
// the shape of a getGeoObject radius search.
func benchPoints(n int) (Point, []Point) {
	rng := rand.New(rand.NewSource(7))
	c := Point{59.3293, 18.0686}
	ps := make([]Point, n)
	for i := range ps {
		ps[i] = Point{c.Lat + rng.Float64()*2 - 1, c.Lon + rng.Float64()*4 - 2}
	}
	return c, ps
}

var sink float64

func BenchmarkDistance(b *testing.B) {
	c, ps := benchPoints(1024)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink += Distance(c, ps[i&1023])
	}
}

func BenchmarkInverse(b *testing.B) {
	c, ps := benchPoints(1024)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, az, _ := Inverse(c, ps[i&1023])
		sink += s + az
	}
}

func BenchmarkDistanceWorldwide(b *testing.B) {
	rng := rand.New(rand.NewSource(8))
	ps := make([]Point, 2048)
	for i := range ps {
		ps[i] = Point{rng.Float64()*180 - 90, rng.Float64()*360 - 180}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink += Distance(ps[i&2047], ps[(i+1)&2047])
	}
}

func BenchmarkDestination(b *testing.B) {
	c := Point{59.3293, 18.0686}
	for i := 0; i < b.N; i++ {
		p := Destination(c, float64(i%360), 5000)
		sink += p.Lat
	}
}
