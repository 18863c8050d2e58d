package geo

import "math"

// inverseAntipodal solves the inverse problem by searching the azimuth
// instead of the longitude on the auxiliary sphere, which works for every
// pair of points, including the nearly antipodal ones where Vincenty's
// iteration fails (the approach of C. F. F. Karney, "Algorithms for
// geodesics", J. Geodesy 87, 2013, §4, with Vincenty's series).
//
// The problem is first put in a canonical form by symmetries of the
// ellipsoid: point 1 is the one farther from the equator and lies in the
// southern hemisphere, and point 2 is east of it (0 ≤ λ12 ≤ π). Then every
// geodesic leaving point 1 with azimuth α1 in [0, π] first reaches point 2's
// latitude while heading north, at a longitude λ12(α1) that grows
// monotonically from 0 (due north) to π (due south, over the pole), so the
// azimuth whose λ12 matches is found by bisection. Returns metres and the
// azimuths in radians.
func (e *ellipsoid) inverseAntipodal(p, q Point) (s, az1, az2 float64) {
	// Canonical form: swap so |lat1| >= |lat2|; reflect so lat1 <= 0 and
	// the longitude difference is in [0, π].
	swap := math.Abs(p.Lat) < math.Abs(q.Lat)
	if swap {
		p, q = q, p
	}
	// Both on the equator (lat1 = 0 forces lat2 = 0) with two mirror-image
	// shortest paths: flip too, so that the northern one is returned, as
	// GeographicLib does.
	latFlip := p.Lat >= 0
	if latFlip {
		p.Lat, q.Lat = -p.Lat, -q.Lat
	}
	L := normLon(q.Lon-p.Lon) * deg
	lonFlip := L < 0
	if lonFlip {
		L = -L
	}
	sinB1, cosB1 := e.reduced(p.Lat)
	sinB2, cosB2 := e.reduced(q.Lat)
	if sinB1 == 0 {
		// On the equator, count point 1 as just south of it, so that a
		// geodesic leaving it southwards meets the equator again after half
		// a turn and not at once.
		sinB1 = math.Copysign(0, -1)
	}

	lo, hi := 0.0, math.Pi
	var g canonGeodesic
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if mid <= lo || mid >= hi {
			break
		}
		g = e.canonical(mid, sinB1, cosB1, sinB2, cosB2)
		if g.lambda12 < L {
			lo = mid
		} else {
			hi = mid
		}
	}
	g = e.canonical((lo+hi)/2, sinB1, cosB1, sinB2, cosB2)
	A, B := helmert(g.cos2A0 * e.ep2)
	sinS, cosS := math.Sincos(g.sigma12)
	s = e.b * A * (g.sigma12 - deltaSigma(B, sinS, cosS, g.cos2Sm))

	// Undo the reflections (an east-west mirror negates azimuths, a
	// north-south mirror maps α to π-α), then the swap (the reversed
	// geodesic leaves point 2 at α2+π and arrives at point 1 at α1+π).
	a1, a2 := g.alpha1, g.alpha2
	if lonFlip {
		a1, a2 = -a1, -a2
	}
	if latFlip {
		a1, a2 = math.Pi-a1, math.Pi-a2
	}
	if swap {
		a1, a2 = a2+math.Pi, a1+math.Pi
	}
	return s, a1, a2
}

// canonGeodesic is the geodesic of the canonical problem leaving point 1 at
// azimuth alpha1, followed to the first northward crossing of point 2's
// latitude.
type canonGeodesic struct {
	alpha1, alpha2 float64 // azimuths at the two ends (radians)
	lambda12       float64 // longitude gained on the ellipsoid (radians)
	sigma12        float64 // arc length on the auxiliary sphere (radians)
	cos2A0, cos2Sm float64 // cos² of the equatorial azimuth; cos 2σm
}

func (e *ellipsoid) canonical(alpha1, sinB1, cosB1, sinB2, cosB2 float64) canonGeodesic {
	sinA1, cosA1 := math.Sincos(alpha1)
	sinA0 := sinA1 * cosB1 // Clairaut's constant
	// Point 1 on the great circle of the auxiliary sphere, σ measured from
	// the northward equator crossing: tan σ1 = tan β1 / cos α1.
	c1 := cosA1 * cosB1
	sigma1 := math.Atan2(sinB1, c1)
	// Point 2 is met heading north: cos α2 cos β2 = +√(cos²α1 cos²β1 + cos²β2 - cos²β1).
	c2sq := c1*c1 + (cosB2-cosB1)*(cosB2+cosB1)
	c2 := 0.0
	if c2sq > 0 {
		c2 = math.Sqrt(c2sq)
	}
	sigma2 := math.Atan2(sinB2, c2)
	// Longitude on the auxiliary sphere: tan ω = sin α0 tan σ.
	sinS1, cosS1 := math.Sincos(sigma1)
	sinS2, cosS2 := math.Sincos(sigma2)
	omega1 := math.Atan2(sinA0*sinS1, cosS1)
	omega2 := math.Atan2(sinA0*sinS2, cosS2)
	g := canonGeodesic{
		alpha1:  alpha1,
		alpha2:  math.Atan2(sinA0, c2),
		sigma12: sigma2 - sigma1,
		cos2A0:  1 - sinA0*sinA0,
		cos2Sm:  math.Cos(sigma1 + sigma2),
	}
	sinS, cosS := math.Sincos(g.sigma12)
	g.lambda12 = omega2 - omega1 - e.lonCorrection(sinA0, g.cos2A0, g.sigma12, sinS, cosS, g.cos2Sm)
	return g
}
