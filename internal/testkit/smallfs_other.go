//go:build !linux

package testkit

import (
	"os"
	"testing"
)

// SmallFS skips the test: full-disk tests mount a tmpfs, which needs Linux
// (see smallfs_linux.go).
func SmallFS(t testing.TB, size int64) string {
	t.Helper()
	if os.Getenv("OUTPOST_REQUIRE_TOOLS") == "1" {
		t.Fatal("a small filesystem for the full-disk tests needs Linux")
	}
	t.Skip("a small filesystem for the full-disk tests needs Linux")
	return ""
}
