package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// DecodeQR reads the one QR code of a PNG image with a decoder that is not
// ours: zbarimg of Debian's zbar-tools (LookTool: missing, it skips the
// test or fails it where tools are required).
func DecodeQR(t testing.TB, png []byte) string {
	t.Helper()
	zbar := LookTool(t, "zbar-tools", "zbarimg")
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
