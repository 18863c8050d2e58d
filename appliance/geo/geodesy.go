package geo

import "math"

// Geodesics on the WGS-84 ellipsoid by Vincenty's method (T. Vincenty,
// "Direct and inverse solutions of geodesics on the ellipsoid with
// application of nested equations", Survey Review 23(176), 1975), with the
// distance series written in Helmert's expansion parameter as Vincenty gave
// it in Survey Review 23(180), 1976. The inverse iteration does not converge
// for some nearly antipodal points; those are solved by inverseAntipodal
// (antipodal.go), which never fails.

const (
	vincentyTol     = 1e-12 // radians on the auxiliary sphere: about 6 µm
	vincentyMaxIter = 60
)

// Distance returns the length in metres of the shortest path on the WGS-84
// ellipsoid between a and b (the geodesic distance). Latitudes outside
// [-90, 90] or non-finite input give NaN.
func Distance(a, b Point) float64 {
	s, _, _ := wgs84.inverse(a, b, false)
	return s
}

// InitialBearing returns the direction in degrees clockwise from true north,
// in [0, 360), in which the shortest path from a to b leaves a. It is 0 when
// a and b coincide; from a pole the direction is taken as the longitude of
// b relative to a's longitude, as if a were a hair's breadth off the pole.
func InitialBearing(a, b Point) float64 {
	_, az1, _ := wgs84.inverse(a, b, true)
	return norm360(az1 * rad)
}

// Inverse solves the inverse geodesic problem: the distance in metres from a
// to b and the bearings in degrees [0, 360) at a (initial) and at b (final,
// the direction of travel on arrival).
func Inverse(a, b Point) (metres, initialBearing, finalBearing float64) {
	s, az1, az2 := wgs84.inverse(a, b, true)
	return s, norm360(az1 * rad), norm360(az2 * rad)
}

// Destination returns the point reached by travelling the given distance in
// metres along the geodesic that leaves p in the direction bearingDeg
// (degrees clockwise from true north; 360 and 0 both mean north). A negative
// distance travels the other way. The longitude is in [-180, 180).
func Destination(p Point, bearingDeg, metres float64) Point {
	lat, lon, _ := wgs84.direct(p.Lat, p.Lon, bearingDeg*deg, metres)
	return Point{Lat: lat, Lon: lon}
}

// Origin is a point prepared as the first end of many geodesics, as in a
// radius search from one query point: its own terms are computed once.
// Its methods give the same results as Distance and Inverse.
type Origin struct {
	p          Point
	sinU, cosU float64
}

// NewOrigin prepares p.
func NewOrigin(p Point) Origin {
	o := Origin{p: p}
	o.sinU, o.cosU = wgs84.reduced(p.Lat)
	return o
}

// Distance is Distance(o's point, q).
func (o Origin) Distance(q Point) float64 {
	s, _, _ := wgs84.inverseFrom(o.p, o.sinU, o.cosU, q, false)
	return s
}

// Inverse is Inverse(o's point, q).
func (o Origin) Inverse(q Point) (metres, initialBearing, finalBearing float64) {
	s, az1, az2 := wgs84.inverseFrom(o.p, o.sinU, o.cosU, q, true)
	return s, norm360(az1 * rad), norm360(az2 * rad)
}

// reduced returns sine and cosine of the reduced (parametric) latitude β of
// a geodetic latitude in degrees: tan β = (1-f) tan φ.
func (e *ellipsoid) reduced(latDeg float64) (sinB, cosB float64) {
	s, c := math.Sincos(latDeg * deg)
	s *= 1 - e.f
	h := math.Sqrt(s*s + c*c)
	return s / h, c / h
}

// helmert returns Vincenty's A and B for u² = cos²α e'², via Helmert's
// expansion parameter k1 = (√(1+u²)-1)/(√(1+u²)+1).
func helmert(u2 float64) (A, B float64) {
	k1 := u2 / (2 + u2 + 2*math.Sqrt(1+u2))
	A = (1 + k1*k1/4) / (1 - k1)
	B = k1 * (1 - 3*k1*k1/8)
	return A, B
}

// deltaSigma is the difference between the arc length σ on the auxiliary
// sphere and s/(bA), Vincenty's equation (6).
func deltaSigma(B, sinS, cosS, cos2Sm float64) float64 {
	c2 := cos2Sm * cos2Sm
	return B * sinS * (cos2Sm + B/4*(cosS*(-1+2*c2)-B/6*cos2Sm*(-3+4*sinS*sinS)*(-3+4*c2)))
}

// lonCorrection is the longitude on the ellipsoid minus the longitude on
// the auxiliary sphere along a geodesic with arc σ (sin σ, cos σ) centred on
// 2σm, divided by -1: Vincenty's equation (11) rearranged.
func (e *ellipsoid) lonCorrection(sinA0, cos2A0, sigma, sinS, cosS, cos2Sm float64) float64 {
	C := e.f / 16 * cos2A0 * (4 + e.f*(4-3*cos2A0))
	return (1 - C) * e.f * sinA0 * (sigma + C*sinS*(cos2Sm+C*cosS*(-1+2*cos2Sm*cos2Sm)))
}

// inverse returns the geodesic distance in metres from p to q and, when
// wantAz, the azimuths in radians at both ends.
func (e *ellipsoid) inverse(p, q Point, wantAz bool) (s, az1, az2 float64) {
	sinU1, cosU1 := e.reduced(p.Lat)
	return e.inverseFrom(p, sinU1, cosU1, q, wantAz)
}

// inverseFrom is inverse with the reduced latitude of p given.
func (e *ellipsoid) inverseFrom(p Point, sinU1, cosU1 float64, q Point, wantAz bool) (s, az1, az2 float64) {
	if math.IsNaN(p.Lat+p.Lon+q.Lat+q.Lon) || math.IsInf(p.Lat+p.Lon+q.Lat+q.Lon, 0) ||
		math.Abs(p.Lat) > 90 || math.Abs(q.Lat) > 90 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	L := normLon(q.Lon-p.Lon) * deg
	sinU2, cosU2 := e.reduced(q.Lat)
	sU1sU2, cU1cU2 := sinU1*sinU2, cosU1*cosU2
	sU1cU2, cU1sU2 := sinU1*cosU2, cosU1*sinU2

	// λ, the longitude difference on the auxiliary sphere, is the root of
	// g(λ) = h(λ) - λ with h Vincenty's equation (11). Vincenty iterates
	// λ ← h(λ), which gains about -log10(f) ≈ 2.5 digits a step; after the
	// first step the secant method on g gains far more, which saves two or
	// three steps on lines of a few hundred kilometres.
	lambda := L
	var lamPrev, gPrev float64
	var sinL, cosL, sinS, cosS, sigma, sinA0, cos2A0, cos2Sm float64
	converged := false
	for i := 0; i < vincentyMaxIter; i++ {
		sinL, cosL = math.Sincos(lambda)
		t1, t2 := cosU2*sinL, cU1sU2-sU1cU2*cosL
		sinS = math.Sqrt(t1*t1 + t2*t2)
		cosS = sU1sU2 + cU1cU2*cosL
		if sinS == 0 {
			if cosS > 0 { // the same point
				return 0, 0, 0
			}
			break // exactly antipodal: the fallback decides the direction
		}
		sigma = math.Atan2(sinS, cosS)
		sinA0 = cU1cU2 * sinL / sinS
		cos2A0 = 1 - sinA0*sinA0
		if cos2A0 != 0 {
			cos2Sm = cosS - 2*sU1sU2/cos2A0
		} else {
			cos2Sm = 0 // along the equator
		}
		h := L + e.lonCorrection(sinA0, cos2A0, sigma, sinS, cosS, cos2Sm)
		g := h - lambda
		next := h
		if i > 0 && g != gPrev {
			next = lambda - g*(lambda-lamPrev)/(g-gPrev)
		}
		if math.Abs(next) > math.Pi {
			break // the iteration has left its domain: nearly antipodal
		}
		d := math.Abs(next - lambda)
		lamPrev, gPrev, lambda = lambda, g, next
		if d < vincentyTol {
			converged = true
			break
		}
	}
	if !converged {
		return e.inverseAntipodal(p, q)
	}
	A, B := helmert(cos2A0 * e.ep2)
	s = e.b * A * (sigma - deltaSigma(B, sinS, cosS, cos2Sm))
	if wantAz {
		sinL, cosL = math.Sincos(lambda)
		az1 = math.Atan2(cosU2*sinL, cU1sU2-sU1cU2*cosL)
		az2 = math.Atan2(cosU1*sinL, -sU1cU2+cU1sU2*cosL)
	}
	return s, az1, az2
}

// direct returns the end of the geodesic of length s metres that leaves
// (lat1, lon1) in degrees at azimuth az1 in radians, with the azimuth there
// in radians. The longitude is in [-180, 180).
func (e *ellipsoid) direct(lat1, lon1, az1, s float64) (lat2, lon2, az2 float64) {
	sinAz, cosAz := math.Sincos(az1)
	sinU1, cosU1 := e.reduced(lat1)
	sigma1 := math.Atan2(sinU1, cosU1*cosAz)
	sinA0 := cosU1 * sinAz
	cos2A0 := 1 - sinA0*sinA0
	A, B := helmert(cos2A0 * e.ep2)
	s0 := s / (e.b * A)
	sigma := s0
	var sinS, cosS, cos2Sm float64
	for i := 0; i < vincentyMaxIter; i++ {
		cos2Sm = math.Cos(2*sigma1 + sigma)
		sinS, cosS = math.Sincos(sigma)
		next := s0 + deltaSigma(B, sinS, cosS, cos2Sm)
		d := next - sigma
		sigma = next
		if math.Abs(d) < vincentyTol {
			break
		}
	}
	cos2Sm = math.Cos(2*sigma1 + sigma)
	sinS, cosS = math.Sincos(sigma)
	t := sinU1*sinS - cosU1*cosS*cosAz
	lat2 = math.Atan2(sinU1*cosS+cosU1*sinS*cosAz, (1-e.f)*math.Sqrt(sinA0*sinA0+t*t))
	lambda := math.Atan2(sinS*sinAz, cosU1*cosS-sinU1*sinS*cosAz)
	L := lambda - e.lonCorrection(sinA0, cos2A0, sigma, sinS, cosS, cos2Sm)
	az2 = math.Atan2(sinA0, -t)
	return lat2 * rad, normLon(lon1 + L*rad), az2
}
