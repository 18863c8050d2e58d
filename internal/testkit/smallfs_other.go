//go:build !linux

package testkit

import (
	"testing"
)

// SmallFS skips the test: full-disk tests mount a tmpfs, which needs Linux
// (see smallfs_linux.go).
func SmallFS(t testing.TB, size int64) string {
	t.Helper()
	MissingTool(t, "a small filesystem for the full-disk tests needs Linux")
	return ""
}

// FreeBytes fails the test: only SmallFS's filesystems are measured, and
// SmallFS needs Linux (a test reaches this only after SmallFS skipped it).
func FreeBytes(t testing.TB, dir string) int64 {
	t.Helper()
	t.Fatal("FreeBytes needs Linux (see smallfs_linux.go)")
	return 0
}

// Fill fails the test, as FreeBytes does.
func Fill(t testing.TB, dir, name string, leave int64) string {
	t.Helper()
	t.Fatal("Fill needs Linux (see smallfs_linux.go)")
	return ""
}
