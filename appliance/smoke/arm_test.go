//go:build smoke

package smoke

import (
	"os"
	"strings"
	"testing"
	"time"

	"outpost/internal/testkit"
)

// TestARM runs the Raspberry Pi builds under qemu-user-static: GOARM=6
// (armhf package; ARMv6 and later) and arm64.
func TestARM(t *testing.T) {
	for _, tc := range []struct {
		name, goarch, goarm, qemu, platform string
	}{
		{"armv6", "arm", "6", "qemu-arm-static", "linux/arm"},
		{"arm64", "arm64", "", "qemu-aarch64-static", "linux/arm64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			qemu := testkit.LookTool(t, "qemu-user-static", tc.qemu)
			bin := crossBuild(t, "linux", tc.goarch, tc.goarm, "outpost-"+tc.name)
			code, out := run(t, os.Environ(), qemu, bin, "version")
			wantVersion(t, code, out, tc.platform)

			dataDir := t.TempDir()
			start := time.Now()
			p := testkit.StartWith(t, []string{qemu, bin}, dataDir, "--key-type", "ecdsa-p256")
			t.Logf("ready under %s in %v", tc.qemu, time.Since(start).Round(time.Millisecond))
			if err := alive(p.Addr(t, "rest")); err != nil {
				t.Fatal(err)
			}
			relayOne(t, p.Addr(t, "cot-tcp"), "SMOKE-"+strings.ToUpper(tc.name))
			err, took := p.Stop(t, 60*time.Second)
			if err != nil {
				t.Fatalf("exit after SIGTERM: %v\n%s", err, p.LogText())
			}
			if !p.Logged("shut down") {
				t.Fatalf("no orderly shutdown logged:\n%s", p.LogText())
			}
			t.Logf("stopped in %v", took.Round(time.Millisecond))
			checkDatabase(t, dataDir)
		})
	}
}
