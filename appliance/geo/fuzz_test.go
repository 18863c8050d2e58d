package geo

import (
	"errors"
	"math"
	"testing"
)

// FuzzParse: Parse never panics and fails only with a *ParseError; what it
// accepts is a point on the earth, which its decimal, DMS and MGRS forms
// give back.
func FuzzParse(f *testing.F) {
	for _, c := range parseCases {
		f.Add(c.in)
	}
	for _, c := range parseErrorCases {
		f.Add(c.in)
	}
	for _, c := range mgrsPublished {
		f.Add(c.mgrs)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Reason == "" {
				t.Fatalf("Parse(%q): %v is not a *ParseError with a reason", s, err)
			}
			return
		}
		if math.IsNaN(p.Lat) || math.IsNaN(p.Lon) || math.IsInf(p.Lat, 0) || math.IsInf(p.Lon, 0) ||
			p.Lat < -90 || p.Lat > 90 || p.Lon < -180 || p.Lon > 180 {
			t.Fatalf("Parse(%q) = %v, off the earth", s, p)
		}
		if q, err := Parse(p.String()); err != nil || math.Abs(q.Lat-p.Lat) > 1e-15 || math.Abs(q.Lon-p.Lon) > 1e-15 {
			t.Fatalf("Parse(%q) = %v; its decimal form %q reads %v, %v", s, p, p.String(), q, err)
		}
		if q, err := Parse(FormatDMS(p)); err != nil || Distance(p, q) > 0.03 {
			t.Fatalf("Parse(%q) = %v; its DMS form %q reads %v, %v", s, p, FormatDMS(p), q, err)
		}
		m, err := ToMGRS(p, 5)
		if err != nil {
			t.Fatalf("ToMGRS(%v): %v", p, err)
		}
		if q, err := Parse(m); err != nil || Distance(p, q) > 1.5 {
			t.Fatalf("Parse(%q) = %v; its MGRS %q reads %v, %v", s, p, m, q, err)
		}
	})
}
