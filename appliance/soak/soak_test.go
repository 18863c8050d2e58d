//go:build soak

// Package soak runs the real binary under mixed traffic for a long time and
// fails if its memory, goroutines, open files or database keep growing
// (RELIABILITY.md "Budgets"; `make soak DURATION=10m`). It is built only
// with -tags soak: -soak.duration says how long it runs, -soak.every how
// often it samples.
package soak

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outpost/internal/testkit"
)

// TestSoak: the load tool's mixed scenario (S2: half the clients on
// protobuf, a tenth reading slowly) over CoT, operators reading the
// management API, clients that connect, report and leave, and missions,
// uploads, downloads and deletions over the client API, all at once for
// -soak.duration, with the server sampled every -soak.every (10 s). After the first fifth (at most two minutes) the server has
// settled; from then on the highest value of each series in the last third
// may exceed its highest in the first third only by the series' allowance.
func TestSoak(t *testing.T) {
	d, every := soakDurations(t)
	dataDir := t.TempDir()
	// The missions' change histories reach their cap within the warm-up,
	// so the soak sees them pruned; three missions written several times
	// a second from one address need more than the default 60 log
	// entries a minute.
	t.Setenv("OUTPOST_MISSION_MAX_CHANGES", "300")
	t.Setenv("OUTPOST_MISSION_LOG_ENTRIES_PER_MINUTE", "6000")
	t.Setenv("OUTPOST_MISSION_LOG_BYTES_PER_MINUTE", "64MiB")
	p := testkit.Start(t, dataDir, "--log-level", "info", "--history-max-bytes", "4MiB",
		"--https-port", "-1", "--ssl-cot-port", "-1", "--enroll-port", "-1")
	token, err := os.ReadFile(filepath.Join(dataDir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	tr := &traffic{t: t, p: p, token: strings.TrimSpace(string(token)), until: time.Now().Add(d)}
	tr.run(d)
	s := &sampler{t: t, pid: p.PID(), dataDir: dataDir, metrics: "http://" + p.Addr(t, "rest") + "/metrics"}
	s.sampleUntil(tr.until, every)
	tr.wait()
	if err := p.Cmd.Process.Signal(os.Interrupt); err == nil {
		if err, _ := p.Stop(t, 30*time.Second); err != nil {
			t.Errorf("the server did not stop cleanly after the soak: %v", err)
		}
	}
	tr.report()
	s.judge(warmup(d))
}

// The soak's length and sampling period (-soak.duration, -soak.every).
var (
	soakDuration = flag.Duration("soak.duration", 10*time.Minute, "how long the soak runs (at least 1m)")
	soakEvery    = flag.Duration("soak.every", 10*time.Second, "how often the soak samples (at least 1s)")
)

// soakDurations checks -soak.duration and -soak.every.
func soakDurations(t *testing.T) (time.Duration, time.Duration) {
	d, every := *soakDuration, *soakEvery
	if d < time.Minute {
		t.Fatalf("-soak.duration %v: want at least 1m", d)
	}
	if every < time.Second {
		t.Fatalf("-soak.every %v: want at least 1s", every)
	}
	if d/every < 12 {
		t.Fatalf("a soak of %v sampled every %v has too few samples to judge growth (want 12 or more)", d, every)
	}
	return d, every
}

// warmup is the part of a soak of d that is not judged: the history filling
// up to its cap, pools and caches reaching their working size.
func warmup(d time.Duration) time.Duration {
	return min(d/5, 2*time.Minute)
}
