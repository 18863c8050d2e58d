package logx

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

func newTapLogger(keep int, level slog.Level) (*slog.Logger, *Tap, *bytes.Buffer) {
	var buf bytes.Buffer
	tap := NewTap(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}), keep)
	return slog.New(tap), tap, &buf
}

func TestTapPassesThroughAndKeeps(t *testing.T) {
	log, tap, buf := newTapLogger(3, slog.LevelInfo)
	start := time.Now()
	for i := range 5 {
		log.Info("event relayed", "n", i)
	}
	log.Debug("below the level")
	if got := strings.Count(buf.String(), "event relayed"); got != 5 {
		t.Fatalf("next handler got %d lines:\n%s", got, buf)
	}
	if strings.Contains(buf.String(), "below the level") {
		t.Fatal("a disabled record was written")
	}
	got := tap.Recent(time.Time{})
	if len(got) != 3 {
		t.Fatalf("kept %d records, want 3", len(got))
	}
	for i, e := range got {
		if want := fmt.Sprintf("event relayed n=%d", i+2); e.Text != want {
			t.Errorf("record %d: %q, want %q (oldest first)", i, e.Text, want)
		}
		if e.Level != slog.LevelInfo || e.Time.Before(start) || e.Source != "tap_test.go" {
			t.Errorf("record %d: %+v", i, e)
		}
	}
	since := tap.Recent(got[1].Time)
	for _, e := range since {
		if !e.Time.After(got[1].Time) {
			t.Fatalf("Recent(since) returned %+v, not after %v", e, got[1].Time)
		}
	}
	if len(since) > 1 || (len(since) == 1 && since[0].Text != got[2].Text) {
		t.Fatalf("Recent(since) = %+v", since)
	}
	if none := tap.Recent(time.Now().Add(time.Hour)); len(none) != 0 {
		t.Fatalf("Recent(future) = %+v", none)
	}
}

func TestTapAttributes(t *testing.T) {
	log, tap, buf := newTapLogger(10, slog.LevelDebug)
	store := log.With("component", "store", "db", "outpost.db")
	store.WithGroup("tx").Warn("commit slow", "took", 3*time.Second, slog.Group("rows", "in", 2))
	log.Error("accept failed", "err", errors.New("too many open files"), "addr", "")
	log.Info("client connected", "component", "stream", "callsign", Clip("bad\nname"))
	got := tap.Recent(time.Time{})
	want := []Entry{
		{Level: slog.LevelWarn, Source: "store", Text: "commit slow db=outpost.db tx.took=3s tx.rows.in=2"},
		{Level: slog.LevelError, Source: "tap_test.go", Text: `accept failed err="too many open files" addr=""`},
		{Level: slog.LevelInfo, Source: "stream", Text: "client connected callsign=bad?name"},
	}
	if len(got) != len(want) {
		t.Fatalf("kept %+v", got)
	}
	for i := range want {
		if got[i].Level != want[i].Level || got[i].Source != want[i].Source || got[i].Text != want[i].Text {
			t.Errorf("record %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if !strings.Contains(buf.String(), "component=store") || !strings.Contains(buf.String(), "tx.took=3s") {
		t.Fatalf("the next handler lost attributes:\n%s", buf)
	}
	long := strings.Repeat("x", 3*MaxEntry)
	log.Info("big", "v", long)
	if e := tap.Recent(time.Time{}); len(e[len(e)-1].Text) > MaxEntry+32 {
		t.Fatalf("kept %d bytes of one record", len(e[len(e)-1].Text))
	}
}

func TestTapSubscribers(t *testing.T) {
	log, tap, _ := newTapLogger(5, slog.LevelInfo)
	log.Info("before")
	fast := tap.Subscribe(100)
	slow := tap.Subscribe(1) // never read
	for i := range 50 {
		log.Info("line", "i", i)
	}
	for i := range 50 {
		select {
		case e := <-fast.C:
			if want := fmt.Sprintf("line i=%d", i); e.Text != want {
				t.Fatalf("subscriber got %q, want %q", e.Text, want)
			}
		default:
			t.Fatalf("subscriber missed record %d", i)
		}
	}
	if fast.Dropped() != 0 || slow.Dropped() != 49 || tap.Dropped() != 49 {
		t.Fatalf("dropped: fast %d slow %d total %d, want 0 49 49", fast.Dropped(), slow.Dropped(), tap.Dropped())
	}
	slow.Close()
	slow.Close()
	log.Info("after close")
	if slow.Dropped() != 49 {
		t.Fatal("a closed subscription still counts records")
	}
	if e := <-fast.C; e.Text != "after close" {
		t.Fatalf("got %q", e.Text)
	}
	fast.Close()
	log.Info("nobody listens")
	select {
	case e := <-fast.C:
		t.Fatalf("closed subscription got %q", e.Text)
	default:
	}
}

// TestTapConcurrent logs from several goroutines while subscribers come
// and go (run with -race); logging never waits for a subscriber.
func TestTapConcurrent(t *testing.T) {
	log, tap, _ := newTapLogger(64, slog.LevelInfo)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			child := log.With("component", fmt.Sprint("g", g))
			for i := range 500 {
				child.Info("tick", "i", i)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 200 {
			s := tap.Subscribe(2)
			s.Close()
		}
	}()
	wg.Wait()
	if n := len(tap.Recent(time.Time{})); n != 64 {
		t.Fatalf("kept %d records, want 64", n)
	}
}
