package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseCPUTicks(t *testing.T) {
	stat := "cpu  2311885 2637 536408 6093084 53895 0 122792 282819 7 3\ncpu0 1 2 3 4 5 6 7 8 0 0\n"
	got, err := parseCPUTicks([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	// The first eight fields; guest time is part of user already.
	want := cpuTicks{total: 2311885 + 2637 + 536408 + 6093084 + 53895 + 0 + 122792 + 282819, steal: 282819, ok: true}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for _, bad := range []string{
		"",
		"cpu  1 2 3 4 5 6 7\n",        // no steal field
		"cpu0 1 2 3 4 5 6 7 8 9 10\n", // not the total line
		"cpu  1 2 3 x 5 6 7 8\n",
		strings.Repeat("x", 10000),
	} {
		if _, err := parseCPUTicks([]byte(bad)); err == nil {
			t.Errorf("%.40q parsed", bad)
		} else if len(err.Error()) > 200 {
			t.Errorf("error not clipped: %d bytes", len(err.Error()))
		}
	}
}

func TestStealPercent(t *testing.T) {
	a := cpuTicks{total: 1000, steal: 10, ok: true}
	b := cpuTicks{total: 1400, steal: 30, ok: true}
	if p := stealPercent(a, b); p == nil || *p != 5 {
		t.Errorf("20 of 400 ticks: %v", p)
	}
	for _, c := range [][2]cpuTicks{
		{a, a},          // no time passed
		{b, a},          // went backwards
		{cpuTicks{}, b}, // a failed reading
		{a, cpuTicks{}}, // the other
		{a, cpuTicks{total: 1400, steal: 5, ok: true}}, // steal went backwards
	} {
		if p := stealPercent(c[0], c[1]); p != nil {
			t.Errorf("%+v → %+v: %v, want none", c[0], c[1], *p)
		}
	}
}

func TestReportPrintsSteal(t *testing.T) {
	for _, c := range []struct {
		steal *float64
		want  []string
		not   []string
	}{
		{nil, nil, []string{"machine:"}},
		{ptr(0.4), []string{"0.4 % of their time stolen"}, []string{"not the server's alone"}},
		{ptr(6.2), []string{"6.2 % of their time stolen", "not the server's alone"}, nil},
	} {
		rep := report{Config: map[string]any{}, Machine: machineInfo{CPUs: 2, StealPercent: c.steal}}
		var out bytes.Buffer
		rep.print(&out)
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("steal %v: no %q in\n%s", c.steal, w, out.String())
			}
		}
		for _, n := range c.not {
			if strings.Contains(out.String(), n) {
				t.Errorf("steal %v: %q in\n%s", c.steal, n, out.String())
			}
		}
	}
}

func ptr(v float64) *float64 { return &v }
