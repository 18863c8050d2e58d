package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"text/tabwriter"
)

// metric is one figure summarize prints; ok is false when a report does
// not have it (an idle run has no latency).
type metric[R any] struct {
	name string
	get  func(*R) (float64, bool)
}

func loadMetric(f func(*loadInfo) float64) func(*report) (float64, bool) {
	return func(r *report) (float64, bool) {
		if r.Load == nil {
			return 0, false
		}
		return f(r.Load), true
	}
}

func serverMetric(f func(*serverInfo) float64) func(*report) (float64, bool) {
	return func(r *report) (float64, bool) {
		if r.Server == nil {
			return 0, false
		}
		return f(r.Server), true
	}
}

func always(f func(*report) float64) func(*report) (float64, bool) {
	return func(r *report) (float64, bool) { return f(r), true }
}

const miB = 1 << 20

var metrics = []metric[report]{
	{"clients connected", always(func(r *report) float64 { return float64(r.Clients.Connected) })},
	{"connect s", always(func(r *report) float64 { return r.Clients.ConnectSec })},
	{"replay, all clients s", always(func(r *report) float64 { return r.Clients.ReplaySec })},
	{"replay per client p99 s", always(func(r *report) float64 { return r.Clients.ReplayP99Sec })},
	{"disconnects", always(func(r *report) float64 { return float64(r.Clients.Disconnected) })},
	{"delivered %", loadMetric(func(l *loadInfo) float64 { return l.Percent })},
	{"deliveries/s", loadMetric(func(l *loadInfo) float64 { return l.PerSecond })},
	{"coalesced", loadMetric(func(l *loadInfo) float64 { return float64(l.Coalesced) })},
	{"missing", loadMetric(func(l *loadInfo) float64 { return float64(l.Missing) })},
	{"p50 ms", loadMetric(func(l *loadInfo) float64 { return l.Normal.Latency.P50 })},
	{"p90 ms", loadMetric(func(l *loadInfo) float64 { return l.Normal.Latency.P90 })},
	{"p99 ms", loadMetric(func(l *loadInfo) float64 { return l.Normal.Latency.P99 })},
	{"max ms", loadMetric(func(l *loadInfo) float64 { return l.Normal.Latency.Max })},
	{"slow: delivered %", func(r *report) (float64, bool) {
		if r.Load == nil || r.Load.SlowConsumers.Clients == 0 {
			return 0, false
		}
		return r.Load.SlowConsumers.Percent, true
	}},
	{"server CPU connecting s", serverMetric(func(s *serverInfo) float64 { return s.CPUConnect })},
	{"server CPU/replayed SA µs", serverMetric(func(s *serverInfo) float64 { return s.CPUConnectPerSA })},
	{"server CPU % of a core", serverMetric(func(s *serverInfo) float64 { return s.CPUShare })},
	{"server CPU/delivery µs", serverMetric(func(s *serverInfo) float64 { return s.CPUPerDelivery })},
	{"server RSS idle MiB", serverMetric(func(s *serverInfo) float64 { return float64(s.RSSIdle) / miB })},
	{"server RSS connected MiB", serverMetric(func(s *serverInfo) float64 { return float64(s.RSSConnected) / miB })},
	{"server RSS per client KiB", serverMetric(func(s *serverInfo) float64 { return s.RSSPerClient / 1024 })},
	{"server RSS peak MiB", serverMetric(func(s *serverInfo) float64 { return float64(s.RSSPeak) / miB })},
	{"tool CPU % of a core", always(func(r *report) float64 { return r.Tool.CPUShare })},
	{"tool CPU/delivery µs", func(r *report) (float64, bool) { return r.Tool.CPUPerDelivery, r.Load != nil }},
	{"CPU steal % (window)", func(r *report) (float64, bool) {
		if r.Machine.StealPercent == nil {
			return 0, false
		}
		return *r.Machine.StealPercent, true
	}},
	{"load average (1 min, start)", always(func(r *report) float64 {
		if len(r.Machine.LoadAvgStart) == 0 {
			return 0
		}
		return r.Machine.LoadAvgStart[0]
	})},
}

// summarize prints, for each figure, the median and range over the JSON
// reports given.
func summarize(paths []string, w io.Writer) error {
	if len(paths) == 0 {
		return errors.New("no report given (files written by --json)")
	}
	reps, err := readReports[report](paths)
	if err != nil {
		return err
	}
	return printMedians(w, reps, metrics)
}

// readReports reads the JSON reports at paths.
func readReports[R any](paths []string) ([]*R, error) {
	reps := make([]*R, 0, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		r := new(R)
		if err := json.Unmarshal(b, r); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		reps = append(reps, r)
	}
	return reps, nil
}

// printMedians prints, for each metric the reports have, its median, min
// and max, then the number of runs.
func printMedians[R any](w io.Writer, reps []*R, ms []metric[R]) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "figure\tmedian\tmin\tmax\t\n")
	for _, m := range ms {
		var vs []float64
		for _, r := range reps {
			if v, ok := m.get(r); ok {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			continue
		}
		slices.Sort(vs)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", m.name, num(median(vs)), num(vs[0]), num(vs[len(vs)-1]))
	}
	fmt.Fprintf(tw, "runs\t%d\t\t\t\n", len(reps))
	return tw.Flush()
}

// median of sorted values.
func median(vs []float64) float64 {
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

func num(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 1000 || v <= -1000:
		return fmt.Sprintf("%.0f", v)
	case v >= 10 || v <= -10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}
