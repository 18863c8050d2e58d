//go:build !unix

package testkit

import (
	"os"
	"testing"
)

// lockFile: the tests run on Linux; elsewhere the file alone is the claim.
func lockFile(f *os.File) bool { return f != nil }

// ClosedPort: the tests run on Linux; elsewhere a port free a moment ago.
func ClosedPort(t testing.TB) int { return FreePort(t) }
