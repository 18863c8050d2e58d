package service

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestJournaldHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(JournaldHandler(&buf, false, &slog.HandlerOptions{Level: slog.LevelDebug}))
	log.Debug("probe sent", "n", 1)
	log.Info("Outpost is ready", "version", "1.0")
	log.With("component", "store").Warn("slow checkpoint")
	log.WithGroup("conn").Error("write failed", "addr", "10.0.0.2:4242")
	want := []string{
		`<7>level=DEBUG msg="probe sent" n=1`,
		`<6>level=INFO msg="Outpost is ready" version=1.0`,
		`<4>level=WARN msg="slow checkpoint" component=store`,
		`<3>level=ERROR msg="write failed" conn.addr=10.0.0.2:4242`,
	}
	got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("got %d lines:\n%s", len(got), buf.String())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

func TestJournaldHandlerJSON(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(JournaldHandler(&buf, true, nil))
	log.Debug("not shown at the default level")
	log.Warn("queue full", "session", 7)
	line := buf.String()
	if !strings.HasPrefix(line, "<4>{") || strings.Count(line, "\n") != 1 {
		t.Fatalf("want one JSON line with the warning priority: %q", line)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line[3:]), &m); err != nil {
		t.Fatalf("journald strips the prefix; the rest must be JSON: %v", err)
	}
	if _, ok := m["time"]; ok || m["msg"] != "queue full" || m["session"] != float64(7) {
		t.Fatalf("got %v", m)
	}
}

func TestLogHandlerOutsideJournald(t *testing.T) {
	t.Setenv("JOURNAL_STREAM", "")
	var buf bytes.Buffer
	slog.New(LogHandler(&buf, false, nil)).Info("hello")
	if !strings.HasPrefix(buf.String(), "time=") {
		t.Fatalf("a terminal or file keeps the timestamp: %q", buf.String())
	}
	buf.Reset()
	slog.New(LogHandler(&buf, true, nil)).Info("hello")
	if !strings.HasPrefix(buf.String(), `{"time":`) {
		t.Fatalf("JSON keeps the timestamp: %q", buf.String())
	}
}
