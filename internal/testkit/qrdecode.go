package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// DecodeQR reads the one QR code of a PNG image with a decoder that is not
// ours: zbarimg of Debian's zbar-tools. A missing zbarimg skips the test,
// except under CI or OUTPOST_REQUIRE_TOOLS=1 (scripts/test-deps.sh installs
// it), where it fails.
func DecodeQR(t testing.TB, png []byte) string {
	t.Helper()
	zbar, err := exec.LookPath("zbarimg")
	if err != nil {
		if os.Getenv("CI") != "" || os.Getenv("OUTPOST_REQUIRE_TOOLS") == "1" {
			t.Fatal("zbarimg is missing: install the Debian package zbar-tools (scripts/test-deps.sh does)")
		}
		t.Skip("zbarimg is not installed (Debian package zbar-tools; scripts/test-deps.sh installs it); skipping")
	}
	f := filepath.Join(t.TempDir(), "qr.png")
	if err := os.WriteFile(f, png, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(zbar, "--raw", "-q", f).Output()
	if err != nil {
		t.Fatalf("zbarimg found no QR code in the image: %v", err)
	}
	return strings.TrimSuffix(string(out), "\n")
}
