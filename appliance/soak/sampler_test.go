//go:build soak

package soak

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// series is one measured quantity of the server, with the growth allowed
// between the first and the last third of the judged window: a share of
// the first third's highest value plus a constant.
type series struct {
	name  string
	unit  string
	share float64
	slack float64
	read  func(s *sampler) (float64, error)
}

var allSeries = []series{
	{"resident memory", "MiB", 0.15, 8, func(s *sampler) (float64, error) { return s.rssMiB() }},
	{"goroutines", "", 0.10, 50, func(s *sampler) (float64, error) { return s.metric("go_goroutines") }},
	{"open files", "", 0.10, 20, func(s *sampler) (float64, error) { return s.openFiles() }},
	{"database and WAL", "MiB", 0.10, 8, func(s *sampler) (float64, error) { return s.dbMiB() }},
}

type sample struct {
	at     time.Duration
	values []float64
}

// sampler reads the server's process and database files, and its
// Prometheus metrics on the management port (loopback is on the
// allow-list).
type sampler struct {
	t       *testing.T
	pid     int
	dataDir string
	metrics string
	start   time.Time
	samples []sample
}

func (s *sampler) sampleUntil(until time.Time, every time.Duration) {
	s.start = time.Now()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		s.sample()
		if time.Until(until) < every/2 {
			return
		}
		<-tick.C
	}
}

func (s *sampler) sample() {
	smp := sample{at: time.Since(s.start).Round(time.Second)}
	line := []string{fmt.Sprintf("at %v:", smp.at)}
	for _, se := range allSeries {
		v, err := se.read(s)
		if err != nil {
			s.t.Fatalf("sampling %s: %v", se.name, err)
		}
		smp.values = append(smp.values, v)
		line = append(line, fmt.Sprintf("%s %.1f%s", se.name, v, se.unit))
	}
	s.samples = append(s.samples, smp)
	s.t.Log(strings.Join(line, " "))
}

// judge compares, after warm-up, the highest value of each series in the
// last third of the samples with its highest in the first third.
func (s *sampler) judge(warmup time.Duration) {
	var judged []sample
	for _, smp := range s.samples {
		if smp.at >= warmup {
			judged = append(judged, smp)
		}
	}
	if len(judged) < 6 {
		s.t.Fatalf("%d samples after the %v warm-up: too few to judge growth", len(judged), warmup)
	}
	third := len(judged) / 3
	first, last := judged[:third], judged[len(judged)-third:]
	for i, se := range allSeries {
		a, b := highest(first, i), highest(last, i)
		limit := a*(1+se.share) + se.slack
		s.t.Logf("%s: highest %.1f%s from %v to %v, %.1f%s from %v to %v (limit %.1f%s)", se.name,
			a, se.unit, first[0].at, first[len(first)-1].at, b, se.unit, last[0].at, last[len(last)-1].at, limit, se.unit)
		if b > limit {
			s.t.Errorf("%s kept growing: %.1f%s at the end against %.1f%s after warm-up (allowed %.1f%s)",
				se.name, b, se.unit, a, se.unit, limit, se.unit)
		}
	}
}

func highest(ss []sample, i int) float64 {
	h := ss[0].values[i]
	for _, smp := range ss[1:] {
		h = max(h, smp.values[i])
	}
	return h
}

func (s *sampler) rssMiB() (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid))
	if err != nil {
		return 0, err
	}
	for l := range strings.Lines(string(b)) {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", s.pid)
}

func (s *sampler) openFiles() (float64, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", s.pid))
	return float64(len(ents)), err
}

func (s *sampler) dbMiB() (float64, error) {
	var n int64
	for _, f := range []string{"outpost.db", "outpost.db-wal"} {
		fi, err := os.Stat(filepath.Join(s.dataDir, f))
		if err == nil {
			n += fi.Size()
		} else if !os.IsNotExist(err) {
			return 0, err
		}
	}
	return float64(n) / (1 << 20), nil
}

// metric reads one unlabelled gauge from the metrics page.
func (s *sampler) metric(name string) (float64, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(s.metrics)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s on /metrics", name)
}
