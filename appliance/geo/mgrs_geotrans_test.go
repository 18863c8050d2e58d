package geo

import (
	"math"
	"testing"
)

// geoTransMGRS are 90 conversions from NGA's GEOTRANS 3.9 test output
// (geoToMgrs_WE.txt, WGS-84, as published in spatialillusions/
// geographiclib-mgrs test/geotrans3.9-output/), chosen to cover every
// latitude band with three zones each, the Norway and Svalbard zones
// (31V, 32V, 31X, 33X, 35X, 37X), the four UPS zones, zone edges and the
// antimeridian. GEOTRANS rounds the grid coordinates to the metre where the
// MGRS standard (and ToMGRS) truncates; rows whose digits sit on a 100 km
// line, where the two conventions name different squares, are left out.
var geoTransMGRS = []struct {
	lat, lon float64
	mgrs     string
}{
	{58.628774, 4.722198, "32VKL5169606637"},
	{67.547526, 7.696372, "32WMV4444393003"},
	{-81.016473, -2.745523, "AZX5213198204"},
	{-76.551525, 6.854426, "32CMA4430902258"},
	{18.051745, 12.777358, "33QTV6472697325"},
	{72.099220, 9.000000, "33XTA9446510252"},
	{76.463946, 1.324809, "31XDE5623787577"},
	{76.463946, 16.675191, "33XWE4376387577"},
	{81.016475, 3.254466, "31XEK0443695053"},
	{-36.062362, 13.440274, "33HUA5953108009"},
	{58.594234, 11.558297, "32VPK4868397705"},
	{63.073995, 11.039649, "32VPQ0303995469"},
	{76.463939, 22.675228, "35XLE8710091099"},
	{-81.016477, 9.254461, "BBX6071586343"},
	{63.073995, 17.039649, "33VXK0303995469"},
	{81.016475, 15.254466, "33XWK0443695053"},
	{81.060878, 21.000015, "35XLL9609805379"},
	{67.547526, 31.696372, "36WVV4444393003"},
	{76.463939, 34.675228, "37XCE8710091099"},
	{72.012652, 38.810717, "37XDV9347690354"},
	{76.463946, 25.324809, "35XME5623787577"},
	{81.016475, 38.745534, "37XDK9556495053"},
	{-27.064593, 37.031984, "37JCL0483204885"},
	{-27.064593, 43.031984, "38JLR0483204885"},
	{13.541117, 47.305498, "38PQV4951998153"},
	{84.644103, 50.999979, "ZGD6243925524"},
	{-13.541117, 54.694502, "40LBL5048101847"},
	{-4.514598, 66.603452, "42MTA3406900553"},
	{-9.028528, 65.362847, "41LQL5976001153"},
	{36.098352, 77.667819, "43SGV4017298153"},
	{4.514598, 96.603452, "47NKE3406999447"},
	{84.644099, 92.999958, "ZHH9423331142"},
	{4.514598, 95.396548, "46NGK6593199447"},
	{-81.016477, 93.254480, "BPM9773943266"},
	{76.463946, 97.324809, "47XME5623787577"},
	{84.644101, 116.999973, "ZHK3019270146"},
	{58.594234, 126.441703, "52VCK5131797705"},
	{-81.060878, 128.999983, "BKF7278874209"},
	{-36.098352, 132.332181, "53HKA5982801847"},
	{84.644096, 135.000000, "ZGM2076320763"},
	{-81.016473, 140.745543, "BJE3235526159"},
	{9.028528, 168.637153, "59PKK4024098847"},
	{-58.594234, 161.558297, "57EXR4868302295"},
	{-54.060679, 169.584889, "59FMA0737808801"},
	{-4.514598, 168.603452, "59MKR3406900553"},
	{-18.051745, -179.222642, "01KBA6472602675"},
	{27.089885, -173.974685, "02RKQ0502399880"},
	{67.547526, 178.303628, "60WWV5555793003"},
	{76.551525, -173.145574, "02XMK4430997742"},
	{-53.992920, 176.895196, "60FVF9312917261"},
	{-81.060883, -171.000007, "AYC4444317851"},
	{54.109204, -168.059596, "02UPE9221199669"},
	{18.051745, -155.222642, "05QKV6472697325"},
	{31.596039, -155.838412, "05RKQ3067899158"},
	{84.644105, -159.000006, "YXN8675455525"},
	{84.644101, -153.000027, "YXN2985430192"},
	{-36.062362, -157.440274, "04HFF4046908009"},
	{27.089885, -144.025315, "06RYQ9497799880"},
	{84.644103, -140.999979, "YUM2552462439"},
	{-67.547526, -130.303628, "09DVF4444306997"},
	{-53.992920, -141.104804, "07FDA9312917261"},
	{9.028528, -119.362847, "11PKK4024098847"},
	{-22.559760, -107.111480, "13KBR8288203678"},
	{-67.547526, -109.696372, "12DWL5555706997"},
	{36.098352, -102.332181, "13SGV4017298153"},
	{-40.596412, -96.545229, "14GQA0771403147"},
	{54.109204, -83.940404, "17ULV0778999669"},
	{-81.016475, -81.254505, "ALP1226851947"},
	{58.594234, -66.441703, "19VFE4868397705"},
	{84.644101, -63.000027, "YSE6980829854"},
	{-4.514598, -66.603452, "19MGR6593100553"},
	{-76.551525, -53.145574, "22CDA4430902258"},
	{-81.016470, -56.745521, "APT6429948003"},
	{-76.551525, -54.854426, "21CWR5569102258"},
	{-40.596412, -54.545229, "21GYR0771403147"},
	{81.016475, -50.745534, "22XEQ0443695053"},
	{-27.064593, -49.031984, "22JFR9516804885"},
	{54.109204, -35.940404, "25UCV0778999669"},
	{-62.908856, -25.112982, "26ENR9587023160"},
	{-9.028528, -36.637153, "24LYR5976001153"},
	{-18.051745, -30.777358, "25KGA3527402675"},
	{36.098352, -24.332181, "26SQE4017298153"},
	{-63.005025, -15.070038, "28EDR9645313849"},
	{-45.089798, -24.812333, "26GPR7215204746"},
	{-67.547526, -10.303628, "29DMF4444306997"},
	{4.514598, 0.603452, "31NBE3406999447"},
	{18.051745, -6.777358, "29QQV3527497325"},
	{58.594234, 0.441703, "31VCE5131797705"},
	{63.073995, 0.960351, "31VCK9696195469"},
	{76.463946, 4.675191, "31XEE4376387577"},
}

func TestMGRSGeoTrans(t *testing.T) {
	for _, c := range geoTransMGRS {
		p := Point{c.lat, c.lon}
		r, err := parseMGRS(c.mgrs)
		if err != nil {
			t.Fatalf("%s: %v", c.mgrs, err)
		}
		gtE, gtN, err := r.grid()
		if err != nil {
			t.Fatalf("%s: %v", c.mgrs, err)
		}
		// Our grid position of the point, in GEOTRANS's zone, rounds to
		// GEOTRANS's metre.
		var e, n float64
		if r.zone == 0 {
			e, n = upsForward(c.lat > 0, c.lat, c.lon)
		} else {
			e, n = utmForward(c.lat, c.lon, r.zone)
		}
		if math.Abs(e-gtE) > 0.5+1e-6 || math.Abs(n-gtN) > 0.5+1e-6 {
			t.Errorf("%v: grid %.3f %.3f, GEOTRANS %s = %.0f %.0f", p, e, n, c.mgrs, gtE, gtN)
		}
		// ToMGRS truncates: the same square and digits, or one metre less
		// where GEOTRANS rounded up.
		got, err := ToMGRS(p, 5)
		if err != nil {
			t.Errorf("ToMGRS(%v): %v", p, err)
			continue
		}
		want := trimZoneZero(c.mgrs)
		if len(got) != len(want) || got[:len(got)-10] != want[:len(want)-10] ||
			!digitsWithinOne(got[len(got)-10:len(got)-5], want[len(want)-10:len(want)-5]) ||
			!digitsWithinOne(got[len(got)-5:], want[len(want)-5:]) {
			t.Errorf("ToMGRS(%v) = %s, GEOTRANS %s", p, got, c.mgrs)
		}
		// And back: the corner of the 1 m cell is within a metre.
		q, err := FromMGRS(c.mgrs)
		if err != nil {
			t.Errorf("FromMGRS(%s): %v", c.mgrs, err)
		} else if d := Distance(p, q); d > 1 {
			t.Errorf("FromMGRS(%s) = %v, %.3f m from %v", c.mgrs, q, d, p)
		}
	}
}

// trimZoneZero drops the leading zero GEOTRANS writes in zones 1 to 9.
func trimZoneZero(s string) string {
	if len(s) > 1 && s[0] == '0' {
		return s[1:]
	}
	return s
}

// digitsWithinOne reports whether truncated digits a equal rounded digits
// b or b-1.
func digitsWithinOne(a, b string) bool {
	var x, y int
	for i := 0; i < len(a); i++ {
		x = x*10 + int(a[i]-'0')
		y = y*10 + int(b[i]-'0')
	}
	return x == y || x == y-1
}
