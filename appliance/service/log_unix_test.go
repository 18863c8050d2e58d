//go:build !windows

package service

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestLogHandlerUnderJournald: systemd announces the journal stream in
// JOURNAL_STREAM as the device and inode of stderr; only a matching stderr
// switches the format.
func TestLogHandlerUnderJournald(t *testing.T) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(os.Stderr.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	t.Setenv("JOURNAL_STREAM", fmt.Sprintf("%d:%d", st.Dev, st.Ino))
	var buf bytes.Buffer
	slog.New(LogHandler(&buf, false, nil)).Info("hello")
	if got := buf.String(); got != "<6>level=INFO msg=hello\n" {
		t.Fatalf("got %q", got)
	}

	t.Setenv("JOURNAL_STREAM", fmt.Sprintf("%d:%d", st.Dev, st.Ino+1))
	buf.Reset()
	slog.New(LogHandler(&buf, false, nil)).Info("hello")
	if !strings.HasPrefix(buf.String(), "time=") {
		t.Fatalf("stderr is not the journal stream (it was redirected): %q", buf.String())
	}
}
