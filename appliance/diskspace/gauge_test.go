package diskspace

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"outpost/appliance/fault"
)

// fakeDisk is a filesystem whose free space the test sets.
type fakeDisk struct {
	mu    sync.Mutex
	u     Usage
	err   error
	stats int
}

func (d *fakeDisk) set(free int64) { d.mu.Lock(); d.u.Free = free; d.mu.Unlock() }

// Write takes what is written from the free space.
func (d *fakeDisk) Write(p []byte) (int, error) {
	d.mu.Lock()
	d.u.Free -= int64(len(p))
	d.mu.Unlock()
	return len(p), nil
}

func (d *fakeDisk) stat(string) (Usage, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stats++
	return d.u, d.err
}

const mib = 1 << 20

func newGauge(t *testing.T, d *fakeDisk, log *bytes.Buffer) *Gauge {
	t.Helper()
	var l *slog.Logger
	if log != nil {
		l = slog.New(slog.NewTextHandler(log, nil))
	} else {
		l = slog.New(slog.DiscardHandler)
	}
	return New("/data", Options{Reserve: Amount{Set: true, Bytes: 10 * mib}, Floor: Amount{Set: true, Bytes: 2 * mib},
		MaxAge: time.Hour, RestatBytes: mib, Logger: l, Stat: d.stat})
}

func TestGaugeRefusals(t *testing.T) {
	d := &fakeDisk{u: Usage{Free: 50 * mib, Total: 100 * mib}}
	g := newGauge(t, d, nil)
	if err := g.CheckUpload(30 * mib); err != nil {
		t.Fatalf("30 MiB of 50 free with a 10 MiB reserve: %v", err)
	}
	err := g.CheckUpload(45 * mib)
	if !errors.Is(err, ErrWouldCross) || fault.KindOf(err) != fault.TooLarge || !strings.Contains(fault.Detail(err), "reserve") {
		t.Fatalf("45 MiB of 50 free: %v (kind %v)", err, fault.KindOf(err))
	}
	if err := g.CheckWrite(); err != nil {
		t.Fatalf("write at 50 MiB free: %v", err)
	}
	// Noted bytes lower the estimate, and force a new stat after RestatBytes.
	d.set(9 * mib)
	if g.BelowReserve() {
		t.Fatal("the stat of an hour ago still holds: 50 MiB free")
	}
	g.Note(mib)
	err = g.CheckUpload(-1)
	if !errors.Is(err, ErrNoSpace) || fault.KindOf(err) != fault.NoSpace || !strings.Contains(err.Error(), "9437184 bytes free, 10485760 kept in reserve") {
		t.Fatalf("below the reserve: %v", err)
	}
	if err := g.CheckWrite(); err != nil {
		t.Fatalf("small write above the floor: %v", err)
	}
	d.set(mib)
	g.Note(mib)
	if err := g.CheckWrite(); !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "hard floor") {
		t.Fatalf("below the floor: %v", err)
	}
	st := g.Status()
	if !st.Known || st.Free != mib || st.Total != 100*mib || st.Reserve != 10*mib || st.Floor != 2*mib || !st.BelowReserve || !st.BelowFloor {
		t.Fatalf("status %+v", st)
	}
}

func TestGaugeRestatsAfterMaxAge(t *testing.T) {
	d := &fakeDisk{u: Usage{Free: 50 * mib, Total: 100 * mib}}
	g := New("/data", Options{Reserve: Amount{Set: true, Bytes: 10 * mib}, MaxAge: 20 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler), Stat: d.stat})
	for range 100 {
		g.Status()
	}
	if d.stats > 2 {
		t.Fatalf("%d stats for 100 questions within MaxAge", d.stats)
	}
	d.set(mib)
	deadline := time.Now().Add(5 * time.Second)
	for !g.BelowReserve() {
		if time.Now().After(deadline) {
			t.Fatal("the gauge never looked again")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestUnknownRefusesNothing(t *testing.T) {
	d := &fakeDisk{err: os.ErrPermission}
	var log bytes.Buffer
	g := newGauge(t, d, &log)
	if err := g.CheckUpload(1 << 40); err != nil {
		t.Fatal(err)
	}
	if err := g.CheckWrite(); err != nil || g.BelowReserve() || g.Status().Known {
		t.Fatalf("%v %+v", err, g.Status())
	}
	if !strings.Contains(log.String(), "could not measure free disk space") {
		t.Fatalf("log: %s", log.String())
	}
	var nilGauge *Gauge
	if nilGauge.CheckUpload(1) != nil || nilGauge.CheckWrite() != nil || nilGauge.BelowReserve() || nilGauge.Body(io.NopCloser(nil)) == nil {
		t.Fatal("a nil gauge refuses")
	}
}

func TestBodyCutsWhenTheReserveIsCrossed(t *testing.T) {
	d := &fakeDisk{u: Usage{Free: 13 * mib, Total: 100 * mib}}
	g := newGauge(t, d, nil)
	src := io.NopCloser(bytes.NewReader(make([]byte, 8*mib)))
	n, err := io.Copy(d, g.Body(src))
	if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "the upload was cut") {
		t.Fatalf("copy: %d bytes, %v", n, err)
	}
	// 13 MiB free, 10 in reserve: cut after about 3 MiB, long before 8.
	if n < 3*mib-64<<10 || n > 4*mib {
		t.Fatalf("cut after %d bytes", n)
	}
	d.set(50 * mib)
	g2 := newGauge(t, d, nil)
	if n, err := io.Copy(io.Discard, g2.Body(io.NopCloser(bytes.NewReader(make([]byte, 8*mib))))); err != nil || n != 8*mib {
		t.Fatalf("above the reserve: %d, %v", n, err)
	}
}

func TestReserveLogLines(t *testing.T) {
	d := &fakeDisk{u: Usage{Free: 50 * mib, Total: 100 * mib}}
	var log bytes.Buffer
	g := newGauge(t, d, &log)
	d.set(5 * mib)
	g.Note(2 * mib) // forces a stat
	g.Status()
	g.Note(2 * mib)
	g.Status() // still below: no second line
	d.set(40 * mib)
	g.Note(2 * mib)
	g.Status()
	out := log.String()
	if strings.Count(out, "reached the reserve") != 1 || strings.Count(out, "above the reserve again") != 1 {
		t.Fatalf("log:\n%s", out)
	}
}
