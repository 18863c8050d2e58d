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

// The getGeoObject workload: distance from one query point to 100,000
// stored objects spread over about 200 × 230 km. One op is the whole scan.
func BenchmarkDistance100k(b *testing.B) {
	c, ps := benchPoints(100000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range ps {
			sink += Distance(c, p)
		}
	}
}

// The same from a prepared Origin.
func BenchmarkOriginDistance100k(b *testing.B) {
	c, ps := benchPoints(100000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o := NewOrigin(c)
		for _, p := range ps {
			sink += o.Distance(p)
		}
	}
}

// The same with the bounding-box prefilter of a 10 km radius search, then
// distance and direction for the rows in the box. One op is the whole scan.
func BenchmarkRadiusQuery100k(b *testing.B) {
	c, ps := benchPoints(100000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		box := BoundingBox(c, 10000)
		o := NewOrigin(c)
		for _, p := range ps {
			if !box.Contains(p) {
				continue
			}
			if s, az, _ := o.Inverse(p); s <= 10000 {
				sink += az
			}
		}
	}
}

func BenchmarkParse(b *testing.B) {
	for _, c := range []struct{ name, in string }{
		{"decimal", "59.3293, 18.0686"},
		{"DMS", `59°19'45.5"N 18°4'7"E`},
		{"DDM", "N59 19.758 E018 04.117"},
		{"UTM", "33V 674000 6580000"},
		{"MGRS", "33VXF7400080000"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				p, err := Parse(c.in)
				if err != nil {
					b.Fatal(err)
				}
				sink += p.Lat
			}
		})
	}
}

func BenchmarkToMGRS(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s, _ := ToMGRS(Point{59.3293, 18.0686}, 5)
		sink += float64(len(s))
	}
}
