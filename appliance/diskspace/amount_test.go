package diskspace

import "testing"

func TestParseAmount(t *testing.T) {
	good := []struct {
		in   string
		want Amount
		str  string
	}{
		{"", Amount{}, "auto"},
		{"auto", Amount{}, "auto"},
		{"0", Amount{Set: true}, "0"},
		{"1048576", Amount{Set: true, Bytes: 1 << 20}, "1048576"},
		{"512MiB", Amount{Set: true, Bytes: 512 << 20}, "536870912"},
		{"2 GiB", Amount{Set: true, Bytes: 2 << 30}, "2147483648"},
		{"5%", Amount{Set: true, Percent: 5}, "5%"},
		{"0.5%", Amount{Set: true, Percent: 0.5}, "0.5%"},
	}
	for _, tc := range good {
		got, err := ParseAmount(tc.in)
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("ParseAmount(%q) = %+v (%s), %v; want %+v (%s)", tc.in, got, got.String(), err, tc.want, tc.str)
		}
	}
	for _, in := range []string{"-1", "51%", "0%", "-3%", "x%", "lots", "5MB", "99999999999999GiB", "NaN%"} {
		if a, err := ParseAmount(in); err == nil {
			t.Errorf("ParseAmount(%q) = %+v, want an error", in, a)
		}
	}
}

func TestLimits(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	cases := []struct {
		name          string
		reserve, fl   Amount
		total         int64
		wantR, wantFl int64
	}{
		{"large disk: 5 %", Amount{}, Amount{}, 100 * gib, 5 * gib, 16 * mib},
		{"medium disk: 256 MiB", Amount{}, Amount{}, 4 * gib, 256 * mib, 16 * mib},
		{"small disk: 10 %", Amount{}, Amount{}, 1 * gib, gib / 100 * 10, 16 * mib},
		{"tiny disk: 10 %, floor half of it", Amount{}, Amount{}, 48 * mib, 48 * mib / 100 * 10, 48 * mib / 100 * 10 / 2},
		{"bytes", Amount{Set: true, Bytes: 8 * mib}, Amount{Set: true, Bytes: 2 * mib}, 48 * mib, 8 * mib, 2 * mib},
		{"percent", Amount{Set: true, Percent: 20}, Amount{Set: true, Percent: 1}, 100 * mib, 20 * mib, mib},
		{"floor above reserve is the reserve", Amount{Set: true, Bytes: mib}, Amount{Set: true, Bytes: 4 * mib}, gib, mib, mib},
		{"off", Amount{Set: true}, Amount{}, gib, 0, 0},
	}
	for _, tc := range cases {
		r, fl := Limits(tc.reserve, tc.fl, tc.total)
		if r != tc.wantR || fl != tc.wantFl {
			t.Errorf("%s: Limits = %d, %d; want %d, %d", tc.name, r, fl, tc.wantR, tc.wantFl)
		}
	}
}
