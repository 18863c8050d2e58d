package geo

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// Stockholm, written every way; and other places.
var (
	sthlmDMS = Point{59 + 19/60.0 + 45.5/3600, 18 + 4/60.0 + 7/3600.0}
	sthlmDDM = Point{59 + 19.758/60, 18 + 4.117/60}
	sydney   = Point{-33.8688, 151.2093}
)

// mustMGRS is the corner FromMGRS gives, for the grid rows of parseCases.
func mustMGRS(s string) Point {
	p, err := FromMGRS(s)
	if err != nil {
		panic(err)
	}
	return p
}

var parseCases = []struct {
	in   string
	want Point
}{
	// Decimal degrees.
	{"59.3293, 18.0686", Point{59.3293, 18.0686}},
	{"59.3293,18.0686", Point{59.3293, 18.0686}},
	{"59.3293 18.0686", Point{59.3293, 18.0686}},
	{"59.3293;18.0686", Point{59.3293, 18.0686}},
	{"  +59.3293   +18.0686  ", Point{59.3293, 18.0686}},
	{"-33.8688 151.2093", sydney},
	{"-33.8688, 151.2093", sydney},
	{"−33.8688, 151.2093", sydney}, // U+2212 minus sign
	{"33.8688S 151.2093E", sydney},
	{"33.8688° S, 151.2093° E", sydney},
	{"S33.8688 E151.2093", sydney},
	{"151.2093E 33.8688S", sydney},
	{"E 151.2093, S 33.8688", sydney},
	{"33.8688 south 151.2093 east", sydney},
	{"-33.8688° 151.2093°", sydney},
	{"0 0", Point{0, 0}},
	{"(59.3293, 18.0686)", Point{59.3293, 18.0686}},
	{"[-33.8688, 151.2093]", sydney},
	{".5 -.25", Point{0.5, -0.25}},
	{"90, 180", Point{90, 180}},
	{"-90 -180", Point{-90, -180}},
	{"45N 7E", Point{45, 7}},
	{"33S 151E", Point{-33, 151}},
	{"59.3293 18.0686E", Point{59.3293, 18.0686}},
	{"N 59.3293 18.0686", Point{59.3293, 18.0686}},
	// Degrees, minutes and seconds.
	{`59°19'45.5"N 18°4'7"E`, sthlmDMS},
	{`59°19′45.5″N 18°4′7″E`, sthlmDMS},
	{`59°19’45.5”N, 18°04’07”E`, sthlmDMS},
	{`59°19'45.5''N 18°04'07''E`, sthlmDMS},
	{`59º19'45.5"N 18º4'7"E`, sthlmDMS},
	{"59 19 45.5 N 18 04 07 E", sthlmDMS},
	{"59 19 45.5 18 4 7", sthlmDMS},
	{"N 59 19 45.5 E 18 04 07", sthlmDMS},
	{`N59°19'45.5" E18°4'7"`, sthlmDMS},
	{`59°19'45.5" 18°4'7"`, sthlmDMS},
	{`59d19'45.5"N 18d4'7"E`, sthlmDMS},
	{`59°19'45.5" E18°4'7"`, sthlmDMS},
	{`E18°4'7" 59°19'45.5"`, sthlmDMS},
	{`33°52'7.68"S 151°12'33.48"E`, sydney},
	{`-33°52'7.68" 151°12'33.48"`, sydney},
	// Degrees and decimal minutes.
	{"N59 19.758 E018 04.117", sthlmDDM},
	{"N 59°19.758' E 18°04.117'", sthlmDDM},
	{"59°19.758'N 18°04.117'E", sthlmDDM},
	{"59 19.758 N, 18 4.117 E", sthlmDDM},
	{"59 19.758 18 4.117", sthlmDDM},
	{"59° 19.758 18° 4.117", sthlmDDM},
	{"S 33° 52.128' E 151° 12.558'", Point{-(33 + 52.128/60), 151 + 12.558/60}},
	{"W 77° 2.19', N 38° 53.862'", Point{38 + 53.862/60, -(77 + 2.19/60)}},
	// UTM (zone and latitude band), with the optional decorations.
	{"33V 674000 6580000", mustMGRS("33VXF7400080000")},
	{"33 V 674000 6580000", mustMGRS("33VXF7400080000")},
	{"33v 674000, 6580000", mustMGRS("33VXF7400080000")},
	{"33V 674000mE 6580000mN", mustMGRS("33VXF7400080000")},
	{"33V 674000 E 6580000 N", mustMGRS("33VXF7400080000")},
	{"UTM 33V 674000 6580000", mustMGRS("33VXF7400080000")},
	{"utm: 33V 674000 6580000", mustMGRS("33VXF7400080000")},
	{"56H 334873.199 6252266.092", Point{-33.857, 151.215}},
	{"33V 674000.000000001 6580000", mustMGRS("33VXF7400080000")},
	// UPS.
	{"Y 1530125.78 2426773.6", Point{dms(false, 84, 17, 14.042), dms(true, 132, 14, 52.761)}},
	{"UPS B 2222979.47 1797474.9", Point{dms(true, 87, 17, 14.4), dms(false, 132, 14, 52.303)}},
	{"Z 2000000 2000000", Point{90, 0}},
	// MGRS.
	{"33VXF7400080000", mustMGRS("33VXF7400080000")},
	{"33VXF 74000 80000", mustMGRS("33VXF7400080000")},
	{"33V XF 74000 80000", mustMGRS("33VXF7400080000")},
	{"33vxf7400080000", mustMGRS("33VXF7400080000")},
	{"MGRS 33VXF 7400 8000", mustMGRS("33VXF7400080000")},
	{"33VXF", mustMGRS("33VXF0000000000")},
	{"33VXF 7 8", mustMGRS("33VXF7000080000")},
	{"4QFJ12345678", mustMGRS("4QFJ1234056780")},
	{"ZAH", Point{90, 0}},
	{"zah0000000000", Point{90, 0}},
	{"BAN 00000 00000", Point{-90, 0}},
}

func TestParse(t *testing.T) {
	for _, c := range parseCases {
		got, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		// Grid positions published to the millimetre or centimetre.
		tol := map[string]float64{"56H 334873.199 6252266.092": 0.001,
			"Y 1530125.78 2426773.6": 0.06, "UPS B 2222979.47 1797474.9": 0.06}[c.in]
		if tol == 0 {
			tol = 1e-6
		}
		if d := Distance(got, c.want); d > tol || math.IsNaN(d) {
			t.Errorf("Parse(%q) = %v, want %v (%.3g m off)", c.in, got, c.want, d)
		}
	}
}

var parseErrorCases = []struct {
	in, notation, want string
}{
	{"", "", "empty"},
	{"   ", "", "empty"},
	{strings.Repeat("1", MaxInputLen+1), "", "longer than"},
	{"59.3\xff 18", "", "UTF-8"},
	{"Stockholm", "", "not a coordinate"},
	{"10 Downing Street", "", "not a coordinate"},
	{"Bay", "", "not a coordinate"},
	{"lat 59 lon 18", "", "not a coordinate"},
	{"()", "", "empty"},
	{"91, 18", NotationLatLon, "latitude 91 is outside -90 to 90"},
	{"-90.5 0", NotationLatLon, "latitude -90.5 is outside"},
	{"59, 181", NotationLatLon, "longitude 181 is outside -180 to 180"},
	{"59 75 N 18 4 E", NotationLatLon, "minutes 75 must be less than 60"},
	{"59 19 61 N 18 4 7 E", NotationLatLon, "seconds 61 must be less than 60"},
	{"59.5 30 N 18 E", NotationLatLon, "degrees 59.5 must be whole when minutes follow"},
	{"59 30.5 10 N 18 E", NotationLatLon, "minutes 30.5 must be whole"},
	{"-59 S 18 E", NotationLatLon, "both a sign and a hemisphere letter"},
	{"59 -30 N 18 E", NotationLatLon, "only the degrees may have a sign"},
	{"59 N 18 S", NotationLatLon, "both values are latitudes"},
	{"E59 W18", NotationLatLon, "both values are longitudes"},
	{"59.3 18.0 12.0", NotationLatLon, "cannot tell where the latitude ends"},
	{"59.3 18.0 12.0 1 2", NotationLatLon, "cannot tell where the latitude ends"},
	{"59.3,18.0,12", NotationLatLon, "more than one comma"},
	{"59,3293 18,0686", NotationLatLon, "more than one comma"},
	{"59.3.2 18", NotationLatLon, "more than one decimal point"},
	{"59° 18° 17°", NotationLatLon, "cannot tell where"},
	{"59 19 45 18 4", NotationLatLon, "cannot tell where"},
	{"°59 18", NotationLatLon, "does not follow a number"},
	{"59'' 18", NotationLatLon, "marked as seconds"},
	{"59 18 @", NotationLatLon, `unexpected "@"`},
	{"N", NotationLatLon, "a latitude and a longitude are needed"},
	{"59.3", NotationLatLon, "a latitude and a longitude are needed"},
	{"59.3 N", NotationLatLon, "a latitude and a longitude are needed"},
	{"- 59 18", NotationLatLon, "not a number"},
	{"N 59 N", NotationLatLon, "each with a number"},
	{"12345678901234567890123456789012345678901 5", NotationLatLon, "too long"},
	{"33VXF 74000 8000", NotationMGRS, "same number of digits"},
	{"33VXF7400080000x", NotationMGRS, "unexpected"},
	{"33VAF7400080000", NotationMGRS, "column letter A is not used in zone 33"},
	{"32XMH1111", NotationMGRS, "does not exist"},
	{"33UXF7400080000", NotationMGRS, "not in latitude band U"},
	{"MGRS 12345", NotationMGRS, "expected a grid zone"},
	{"MGRS 59N 18E", NotationMGRS, "expected a grid zone"},
	{"ZDA12", NotationMGRS, "not a 100 km square"},
	{"33N 674000 6580000", NotationUTM, "latitude band, not the hemisphere"},
	{"33V 950000 6580000", NotationUTM, "easting 950000 is outside"},
	{"61V 674000 6580000", NotationUTM, "zone 61"},
	{"UTM hello", NotationUTM, "expected a zone"},
	{"Z 1000000 1000000", NotationUPS, "not in zone Z"},
	{"Z 2000000 3000000", NotationUPS, "outside the polar area"},
	{"UPS 12", NotationUPS, "expected a zone letter"},
}

func TestParseErrors(t *testing.T) {
	for _, c := range parseErrorCases {
		p, err := Parse(c.in)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q) = %v, %v; want a *ParseError", c.in, p, err)
			continue
		}
		if pe.Notation != c.notation || !strings.Contains(pe.Reason, c.want) {
			t.Errorf("Parse(%q): notation %q, reason %q; want %q with %q", c.in, pe.Notation, pe.Reason, c.notation, c.want)
		}
		// Every message names what is wrong and the notations accepted.
		if msg := err.Error(); !strings.Contains(msg, c.want) || !strings.HasSuffix(msg, "accepted notations: "+Notations) {
			t.Errorf("Parse(%q) message %q", c.in, msg)
		}
	}
}

// The examples in Notations are themselves accepted.
func TestNotationsExamplesParse(t *testing.T) {
	n := 0
	for _, part := range strings.Split(Notations, "; ") {
		_, examples, _ := strings.Cut(part, ": ")
		for _, ex := range strings.Split(examples, " or ") {
			n++
			if _, err := Parse(ex); err != nil {
				t.Errorf("example %q: %v", ex, err)
			}
		}
	}
	if n != 9 {
		t.Errorf("%d examples in %q", n, Notations)
	}
}

// String and DMS read back through Parse to the same point.
func TestFormatsReadBack(t *testing.T) {
	// Tiny values are written to 15 decimals, not in full.
	if s := (Point{1e-300, -5e-324}).String(); s != "0, -0" {
		t.Errorf("String of tiny values = %q", s)
	}
	for _, p := range []Point{{59.3293, 18.0686}, sydney, {0, 0}, {-90, 180}, {89.99999999, -179.99999999}, {1e-9, -1e-9}} {
		if q, err := Parse(p.String()); err != nil || q != p {
			t.Errorf("Parse(%q) = %v, %v", p.String(), q, err)
		}
		s := FormatDMS(p)
		q, err := Parse(s)
		if err != nil || Distance(p, q) > 0.002 {
			t.Errorf("Parse(FormatDMS %q) = %v, %v; want %v", s, q, err, p)
		}
	}
	if got := FormatDMS(sthlmDMS); got != `59°19'45.500"N 18°04'07.000"E` {
		t.Errorf("FormatDMS = %q", got)
	}
	if got := FormatDMS(Point{-33.8688, -0.0000001}); got != `33°52'07.680"S 0°00'00.000"W` {
		t.Errorf("FormatDMS = %q", got)
	}
}

func TestParseHugeNumberMessage(t *testing.T) {
	_, err := Parse(strings.Repeat("9", 39) + " 5")
	if err == nil || !strings.Contains(err.Error(), "latitude 1e+39 is outside") {
		t.Errorf("huge latitude: %v", err)
	}
}
