package logx

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	cases := []struct {
		in, want string
	}{
		{"ANDROID-1234", "ANDROID-1234"},
		{"", ""},
		{"bad\nline", "bad?line"},
		{"nul\x00", "nul?"},
		{"\xff\xfe", "??"},
		{long, strings.Repeat("x", MaxField) + "…(1048576 bytes)"},
	}
	for _, tc := range cases {
		if got := Clip(tc.in); got != tc.want {
			t.Errorf("Clip(%.20q) = %.40q, want %.40q", tc.in, got, tc.want)
		}
	}
	// Never cuts inside a rune, whatever the limit.
	s := strings.Repeat("å", 100)
	for n := 0; n < 20; n++ {
		got := ClipN(s, n)
		if !utf8.ValidString(got) {
			t.Fatalf("ClipN(%d) is not valid UTF-8: %q", n, got)
		}
		if head, _, _ := strings.Cut(got, "…"); len(head) > n {
			t.Fatalf("ClipN(%d) kept %d bytes", n, len(head))
		}
	}
}

func TestLimiter(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	l := NewLimiter(log, 3, time.Minute)
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	written := 0
	for range 100 {
		if l.Warn("connection refused", "addr", "x") {
			written++
		}
	}
	if written != 3 {
		t.Fatalf("%d lines written in one window, want 3", written)
	}
	now = now.Add(time.Minute)
	if !l.Warn("connection refused") {
		t.Fatal("no line in the next window")
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[3], "suppressed=97") {
		t.Fatalf("want the 4th line to report 97 suppressed:\n%s", buf.String())
	}
	if strings.Contains(lines[2], "suppressed") {
		t.Fatalf("a line within the burst reports suppressions: %s", lines[2])
	}
}

func TestLimiterDisabledLevel(t *testing.T) {
	var buf bytes.Buffer
	l := NewLimiter(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})), 1, time.Minute)
	if l.Debug("x") || buf.Len() != 0 {
		t.Fatal("a disabled level was written")
	}
}
