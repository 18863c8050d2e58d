package testkit

import (
	"os"
	"os/exec"
	"testing"
)

// ToolsRequired reports whether a test whose tool (a Debian package, the
// npm clients, Chromium, root for namespaces or mounts) is missing must
// fail rather than skip: under `make test` (OUTPOST_REQUIRE_TOOLS=1, after
// scripts/test-deps.sh installed everything) and in CI. It is the one
// switch tests read from the environment (architecture.md "The root
// composes"); long campaigns are build tags instead.
func ToolsRequired() bool {
	return os.Getenv("OUTPOST_REQUIRE_TOOLS") == "1" || os.Getenv("CI") != ""
}

// MissingTool ends t for a missing tool: skipped with why, or failed where
// tools are required.
func MissingTool(t testing.TB, why string) {
	t.Helper()
	if ToolsRequired() {
		t.Fatalf("%s (scripts/test-deps.sh installs what `make test` needs)", why)
	}
	t.Skipf("%s; `make test` installs it (scripts/test-deps.sh); skipping", why)
}

// LookTool returns the path of the first of names found on PATH (or given
// as a path), or ends t through MissingTool naming the Debian package pkg.
func LookTool(t testing.TB, pkg string, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	MissingTool(t, names[0]+" is not installed (Debian package "+pkg+")")
	return ""
}

// Chromium is Debian's Chromium, which the browser tests drive with
// playwright-core (its own browser downloads are not used).
const Chromium = "/usr/bin/chromium"
