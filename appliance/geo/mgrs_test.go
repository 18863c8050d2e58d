package geo

import (
	"math"
	"math/rand"
	"strings"
	"testing"
)

// Published MGRS references, all truncated to the metre as the standard
// prescribes.
var mgrsPublished = []struct {
	lat, lon float64
	mgrs     string
}{
	// chrisveness/geodesy test/utm-mgrs-tests.js ("UTM -> MGRS" and the
	// "IBM coordconvert" cases).
	{0, 0, "31NAA6602100000"},
	{1, 1, "31NBB7743810597"},
	{-1, -1, "30MYD2256189402"},
	{48.8583, 2.2945, "31UDQ4825111943"},
	{-33.857, 151.215, "56HLH3487352266"},
	{38.8977, -77.0365, "18SUJ2339407395"},
	{-22.9519, -43.2106, "23KPQ8346660687"},
	{60.39135, 5.3249, "32VKN9750800645"},
	{0.1300, -0.2324, "30NZF0808414385"},
	{-45.6456, 23.3545, "34GFQ8347342631"},
	{-12.7650, -33.8765, "25LDF0485988691"},
	{23.4578, -135.4545, "8QML5358094272"},
	{77.3450, 156.9876, "57XVF5079386116"},
	// mrJean1/PyGeodesy test/testMgrs.py: southern Norway and Svalbard.
	{60, 1, "31VCG8845553097"},
	{60, 3, "32VJM6564066593"},
	{60, 9, "32VNM0000051411"},
	{76, 1, "31XDE4599936099"},
	{76, 13, "33XVE4599936099"},
	{76, 25, "35XME4599936099"},
	{76, 37, "37XDE4599936099"},
	// ngageoint/mgrs-java src/test/java/mil/nga/mgrs/MGRSTest.java
	// (testCoordinate, testPointBounds: 84°N is still band X, 80°S band C).
	{63.98863, 29.06757, "35VPL0115697387"},
	{12.40, 53.51, "39PYP7290672069"},
	{21.309444, -157.916861, "4QFJ1234056781"},
	{8.1258235, 17.3714337, "33PYJ6132198972"},
	{83.7, 50.920338, "39XVN9902494603"},
	{84, 50.920338, "39XVP9907028094"},
	{-80, 128.4525, "52CDS8938618364"},
	{-79.2, 128.4525, "52CDT8854707650"},
	// The poles (north pole ZAH, south pole BAN, with zero digits).
	{90, 123, "ZAH0000000000"},
	{-90, 0, "BAN0000000000"},
}

func TestMGRSPublished(t *testing.T) {
	for _, c := range mgrsPublished {
		p := Point{c.lat, c.lon}
		got, err := ToMGRS(p, 5)
		if err != nil || got != c.mgrs {
			t.Errorf("ToMGRS(%v) = %q, %v; want %q", p, got, err, c.mgrs)
		}
		q, err := FromMGRS(c.mgrs)
		if err != nil {
			t.Errorf("FromMGRS(%q): %v", c.mgrs, err)
		} else if d := Distance(p, q); d > 1.5 {
			t.Errorf("FromMGRS(%q) = %v, %.3f m from %v", c.mgrs, q, d, p)
		}
	}
}

// References read back to the south-west corner of their cell, compared
// with values other implementations publish.
func TestFromMGRSPublished(t *testing.T) {
	cases := []struct {
		mgrs     string
		lat, lon float64
		tol      float64 // degrees
	}{
		// ngageoint/mgrs-java MGRSTest.testParse: one reference at each
		// precision, read to the corner of its cell (to 1e-4°).
		{"33XVG", 77.4454720, 10.8756458, 1e-4},
		{"33XVG74", 77.8324735, 13.7248758, 1e-4},
		{"33XVG7443", 77.8600782, 13.8924385, 1e-4},
		{"33XVG745435", 77.8646415, 13.9133378, 1e-4},
		{"33XVG74594359", 77.8654628, 13.9171014, 1e-4},
		{"33XVG7459743593", 77.8654908, 13.9173973, 1e-4},
		// Palantir Foundry documentation, mgrsToGeoPointV1 examples
		// (including a UPS reference near the north pole).
		{"ZAF0193788990", 88.99999659707431, 0.9996456505181999, 1e-9},
		{"4Q FJ 12345 67890", 21.409796671597924, -157.91608117421092, 1e-9},
		{"4Q FJ 1 6", 21.338665624760598, -157.93921670599434, 1e-9},
		{"4Q FJ 123 678", 21.40898645576642, -157.91652127483704, 1e-9},
	}
	for _, c := range cases {
		p, err := FromMGRS(c.mgrs)
		if err != nil || math.Abs(p.Lat-c.lat) > c.tol || math.Abs(p.Lon-c.lon) > c.tol {
			t.Errorf("FromMGRS(%q) = %v, %v; want %v, %v", c.mgrs, p, err, c.lat, c.lon)
		}
	}
}

// Every precision truncates, and every reference reads back to a corner
// whose cell holds the point, everywhere on the earth.
func TestMGRSRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for i := 0; i < 6000; i++ {
		p := Point{rng.Float64()*180 - 90, rng.Float64()*360 - 180}
		switch i % 6 { // extra weight on the polar and exception areas
		case 1:
			p.Lat = 80 + rng.Float64()*10
		case 2:
			p.Lat = -90 + rng.Float64()*12
		case 3:
			p = Point{55 + rng.Float64()*30, rng.Float64() * 45}
		}
		full, err := ToMGRS(p, 5)
		if err != nil {
			t.Fatalf("ToMGRS(%v): %v", p, err)
		}
		for digits := 0; digits <= 5; digits++ {
			s, err := ToMGRS(p, digits)
			if err != nil {
				t.Fatalf("ToMGRS(%v, %d): %v", p, digits, err)
			}
			// A coarser reference is a prefix of the finer one, digit by digit.
			head := len(full) - 10
			if s != full[:head]+full[head:head+digits]+full[head+5:head+5+digits] {
				t.Fatalf("ToMGRS(%v, %d) = %s, but at 5 digits %s", p, digits, s, full)
			}
			q, err := FromMGRS(s)
			if err != nil {
				t.Fatalf("FromMGRS(%q) of %v: %v", s, p, err)
			}
			// The point is near the corner q of its cell.
			cell := math.Pow10(5 - digits)
			if d := Distance(p, q); d > cell*math.Sqrt2*1.01+1e-6 {
				t.Fatalf("%v → %s → %v: %.3f m apart, cell %v m", p, s, q, d, cell)
			}
			// The centre of the cell reads as the same reference, unless the
			// cell is clipped by its grid zone and the centre lies outside.
			r, _ := parseMGRS(s)
			e, n, _ := r.grid()
			var c Point
			if r.zone == 0 {
				c = upsReverse(r.band >= 'Y', e+cell/2, n+cell/2)
			} else {
				c = utmReverse(r.zone, r.band >= 'N', e+cell/2, n+cell/2)
			}
			again, err := ToMGRS(c, digits)
			gzd := func(m string) string { return m[:len(m)-2*digits-2] }
			if err != nil || gzd(again) == gzd(s) && again != s {
				t.Fatalf("%v → %s: its centre %v → %s (%v)", p, s, c, again, err)
			}
		}
	}
}

func TestFromMGRSForms(t *testing.T) {
	want, err := FromMGRS("33VXF7400080000")
	if err != nil {
		t.Fatal(err)
	}
	// A kilometre west of the centre of Stockholm, just past the eastern
	// edge of zone 33 (18°E), where the zone's grid still reaches.
	if d := Distance(want, Point{59.3293, 18.0686}); d > 2000 {
		t.Fatalf("33VXF7400080000 = %v, not in Stockholm", want)
	}
	for _, s := range []string{"33VXF 74000 80000", "33V XF 74000 80000", "33 V XF 74000 80000",
		" 33vxf7400080000 ", "33VXF\t74000\t80000", "33vXf 74000 80000"} {
		if p, err := FromMGRS(s); err != nil || p != want {
			t.Errorf("FromMGRS(%q) = %v, %v; want %v", s, p, err, want)
		}
	}
	// Lower precisions name corners.
	for s, corner := range map[string]string{"33VXF7480": "33VXF7400080000", "33VXF 7 8": "33VXF7000080000",
		"33VXF": "33VXF0000000000", "33VXF740800": "33VXF7400080000"} {
		a, err1 := FromMGRS(s)
		b, err2 := FromMGRS(corner)
		if err1 != nil || err2 != nil || a != b {
			t.Errorf("FromMGRS(%q) = %v, %v; want %v (%v)", s, a, err1, b, err2)
		}
	}
	// A 100 km square that straddles a band edge reads with either band
	// (1P/1Q at 16°N: 1768935 m north is a few metres south of 16°).
	a, err1 := FromMGRS("1PET0000068935")
	b, err2 := FromMGRS("01QET0000068935")
	if err1 != nil || err2 != nil || a != b || math.Abs(a.Lat-16) > 0.001 {
		t.Errorf("1P/1Q edge: %v %v, %v %v", a, err1, b, err2)
	}
}

func TestFromMGRSErrors(t *testing.T) {
	bad := []struct{ s, want string }{
		{"", "grid zone"},
		{"33V", "grid zone"},
		{"Stockholm", "not an MGRS"},
		{"333VXF", "expected a grid zone"},
		{"33VXF7400", ""}, // 4 digits: fine, checked below not to fail
		{"33VXF740008000", "even number"},
		{"33VXF 7400 80000", "same number of digits"},
		{"33VXF 740000 800000", "same number of digits"},
		{"33VXF74000800001", "even number"},
		{"33VXF 74000 80000 1", "one easting and one northing"},
		{"33VXF 74000 8000x", "unexpected"},
		{"33VXF 74.5 80", "unexpected"},
		{"0VXF", "zone 0"},
		{"00VXF", "zone 0"},
		{"61VXF", "zone 61"},
		{"33IXF", "band letter"},
		{"33OXF", "band letter"},
		{"32XMH1111", "does not exist"},
		{"34XDA1234512345", "does not exist"},
		{"36XVA", "does not exist"},
		{"33VAF", "column letter A is not used in zone 33"},
		{"34TIQ5808260869", "column letter I"},
		{"33VXW", "row letter"},
		{"33UXF7400080000", "not in latitude band U"},
		{"33PXF7400080000", "not in latitude band P"},
		{"CAA", "a UPS zone letter (A, B, Y, Z)"},
		{"ZDA", "not a 100 km square of UPS zone Z"},
		{"ZAQ", "not a 100 km square of UPS zone Z"},
		{"YQA0000000000", "outside the polar area"},
		{"ZJP9999999999", "outside the polar area"},
	}
	for _, b := range bad {
		p, err := FromMGRS(b.s)
		if b.want == "" {
			if err != nil {
				t.Errorf("FromMGRS(%q): %v", b.s, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("FromMGRS(%q) = %v, %v; want an error with %q", b.s, p, err, b.want)
		}
	}
	for _, d := range []int{-1, 6} {
		if s, err := ToMGRS(Point{0, 0}, d); err == nil {
			t.Errorf("ToMGRS precision %d = %q, want an error", d, s)
		}
	}
	if s, err := ToMGRS(Point{91, 0}, 5); err == nil {
		t.Errorf("ToMGRS(91°) = %q, want an error", s)
	}
}
