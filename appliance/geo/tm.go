package geo

import "math"

// Conformal latitude and the transverse Mercator projection, the machinery
// under UTM (utm.go) and UPS (ups.go).

// tauPrime returns tan χ, χ the conformal latitude, for τ = tan φ:
// τ' = τ√(1+σ²) - σ√(1+τ²) with σ = sinh(e·atanh(e·τ/√(1+τ²))).
func (e *ellipsoid) tauPrime(tau float64) float64 {
	tau1 := math.Hypot(1, tau)
	sig := math.Sinh(e.e * math.Atanh(e.e*tau/tau1))
	return math.Hypot(1, sig)*tau - sig*tau1
}

// tauFromPrime inverts tauPrime by Newton's method, with
// dτ'/dτ = (1-e²)√(1+τ'²)√(1+τ²) / (1+(1-e²)τ²). It converges in two to
// four steps from the first guess τ'/(1-e²).
func (e *ellipsoid) tauFromPrime(taup float64) float64 {
	if math.IsInf(taup, 0) || math.IsNaN(taup) {
		return taup
	}
	tau := taup / (1 - e.e2)
	for i := 0; i < 10; i++ {
		tp := e.tauPrime(tau)
		d := (taup - tp) * (1 + (1-e.e2)*tau*tau) /
			((1 - e.e2) * math.Hypot(1, tau) * math.Hypot(1, tp))
		tau += d
		if math.Abs(d) <= 1e-15*math.Max(1, math.Abs(tau)) {
			break
		}
	}
	return tau
}

// tmSeries is Krüger's series for the transverse Mercator projection
// (L. Krüger, "Konforme Abbildung des Erdellipsoids in der Ebene", 1912),
// to fourth order in the third flattening n, as given in C. F. F. Karney,
// "Transverse Mercator with an accuracy of a few nanometers", J. Geodesy
// 85, 2011, eqs. (35) and (36). Truncated there the projection is good to
// well under a micrometre inside a UTM zone.
type tmSeries struct {
	e     *ellipsoid
	A     float64    // rectifying radius (m)
	alpha [5]float64 // forward coefficients α1..α4 (index 0 unused)
	beta  [5]float64 // reverse coefficients β1..β4
}

func newTM(e *ellipsoid) *tmSeries {
	n := e.n
	n2, n3 := n*n, n*n*n
	n4 := n2 * n2
	t := &tmSeries{e: e, A: e.a / (1 + n) * (1 + n2/4 + n4/64)}
	t.alpha[1] = n/2 - 2*n2/3 + 5*n3/16 + 41*n4/180
	t.alpha[2] = 13*n2/48 - 3*n3/5 + 557*n4/1440
	t.alpha[3] = 61*n3/240 - 103*n4/140
	t.alpha[4] = 49561 * n4 / 161280
	t.beta[1] = n/2 - 2*n2/3 + 37*n3/96 - n4/360
	t.beta[2] = n2/48 + n3/15 - 437*n4/1440
	t.beta[3] = 17*n3/480 - 37*n4/840
	t.beta[4] = 4397 * n4 / 161280
	return t
}

var wgs84TM = newTM(wgs84)

// forward projects latitude lat and longitude dlon from the central
// meridian (degrees) to x (east) and y (north) in metres, at scale 1 on the
// central meridian.
func (t *tmSeries) forward(lat, dlon float64) (x, y float64) {
	taup := t.e.tauPrime(math.Tan(lat * deg))
	sinL, cosL := math.Sincos(dlon * deg)
	xip := math.Atan2(taup, cosL)
	etap := math.Asinh(sinL / math.Hypot(taup, cosL))
	xi, eta := xip, etap
	for j := 1; j <= 4; j++ {
		k := 2 * float64(j)
		s, c := math.Sincos(k * xip)
		xi += t.alpha[j] * s * math.Cosh(k*etap)
		eta += t.alpha[j] * c * math.Sinh(k*etap)
	}
	return t.A * eta, t.A * xi
}

// reverse is the inverse of forward: latitude and longitude from the
// central meridian, in degrees.
func (t *tmSeries) reverse(x, y float64) (lat, dlon float64) {
	xi, eta := y/t.A, x/t.A
	xip, etap := xi, eta
	for j := 1; j <= 4; j++ {
		k := 2 * float64(j)
		s, c := math.Sincos(k * xi)
		xip -= t.beta[j] * s * math.Cosh(k*eta)
		etap -= t.beta[j] * c * math.Sinh(k*eta)
	}
	sinXi, cosXi := math.Sincos(xip)
	sh := math.Sinh(etap)
	taup := sinXi / math.Hypot(sh, cosXi)
	return math.Atan(t.e.tauFromPrime(taup)) * rad, math.Atan2(sh, cosXi) * rad
}
