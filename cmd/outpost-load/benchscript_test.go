package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"outpost/internal/testkit"
)

// TestABScript runs scripts/bench/ab.sh, the A/B comparison of two builds,
// for real: one pair of short S1 runs against the real binary and against
// a stand-in for an older build that does not know the per-source limits
// (lib.sh must leave those flags out for it), then its summaries. Bad
// usage is refused before anything runs.
func TestABScript(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the bench scripts read /proc")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "scripts", "bench", "ab.sh")
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "outpost-load"), ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building outpost-load: %v\n%s", err, b)
	}
	outpost := filepath.Join(bin, "outpost")
	if err := os.Symlink(testkit.Binary(t), outpost); err != nil {
		t.Fatal(err)
	}
	// The older build: its help lacks the per-source flags, and it refuses
	// them as an older flag set would.
	old := filepath.Join(bin, "outpost-old")
	wrapper := "#!/usr/bin/env bash\n" +
		"if [ \"$1 $2\" = 'run --help' ]; then \"" + outpost + "\" run --help 2>&1 | grep -vE '^  -max-(connections-per-source|pending-handshakes)' >&2; exit 2; fi\n" +
		"for a in \"$@\"; do case $a in --max-connections-per-source|--max-pending-handshakes*) echo \"flag provided but not defined: $a\" >&2; exit 2;; esac; done\n" +
		"exec \"" + outpost + "\" \"$@\"\n"
	if err := os.WriteFile(old, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}

	ab := func(args ...string) (string, error) {
		cmd := exec.Command(script, args...)
		cmd.Env = append(os.Environ(), "BENCH_BUILT=1", "BENCH_BIN="+bin, "BENCH_OUT="+filepath.Join(t.TempDir(), "out"),
			"PAIRS=1", "CLIENTS=4", "RATE=2", "DURATION=1s", "WARMUP=300ms", "RAMP=200ms")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}

	for _, bad := range [][]string{
		{old, outpost},                          // no scenario
		{old, outpost, "nope.sh"},               // not a scenario
		{old, outpost, "lib.sh"},                // not one either
		{old, outpost, "../bench/s1-fanout.sh"}, // a path
		{filepath.Join(bin, "missing"), outpost, "s1-fanout.sh"},
	} {
		out, err := ab(bad...)
		if code := exitCode(err); code != 2 || !strings.Contains(out, "ab.sh") {
			t.Errorf("ab.sh %q: exit %d, want 2 with a message:\n%s", bad, code, out)
		}
	}

	out, err := ab(old, outpost, "s1-fanout.sh", "tcp")
	if err != nil {
		t.Fatalf("ab.sh: %v\n%s", err, out)
	}
	if !strings.Contains(out, "does not know --max-connections-per-source --max-pending-handshakes-per-source --max-pending-handshakes: left out") {
		t.Errorf("the older build's unknown flags were not named:\n%s", out)
	}
	if n := strings.Count(out, "does not know"); n != 1 {
		t.Errorf("%d notes of unknown flags, want 1 (the real build knows them all):\n%s", n, out)
	}
	// Both builds' medians, each from a run that delivered everything, with
	// the machine's steal.
	sums := regexp.MustCompile(`== build (a|b) \(([^)]*)\): medians of 1 runs`).FindAllStringSubmatch(out, -1)
	real, err := filepath.EvalSymlinks(outpost) // ab.sh names builds by their real path
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 2 || sums[0][2] != old || sums[1][2] != real {
		t.Fatalf("summaries %q in:\n%s", sums, out)
	}
	if n := len(regexp.MustCompile(`(?m)^delivered % +100\.0 `).FindAllString(out, -1)); n != 2 {
		t.Errorf("%d summaries with everything delivered, want 2:\n%s", n, out)
	}
	if n := strings.Count(out, "CPU steal % (window)"); n != 2 {
		t.Errorf("%d summaries with steal, want 2:\n%s", n, out)
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
