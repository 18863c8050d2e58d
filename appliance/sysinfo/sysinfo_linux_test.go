package sysinfo

import (
	"bufio"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestParseStat(t *testing.T) {
	cases := []struct {
		name       string
		in         string
		idle, busy uint64
		bad        bool
	}{
		{"full", "cpu  100 20 30 400 50 6 7 8 90 10\ncpu0 1 2 3 4\n", 450, 171, false},
		{"old kernel", "cpu 1 2 3 4\n", 4, 6, false},
		{"no cpu line", "intr 1 2 3\n", 0, 0, true},
		{"too short", "cpu 1 2 3\n", 0, 0, true},
		{"not a number", "cpu 1 x 3 4 5\n", 0, 0, true},
		{"empty", "", 0, 0, true},
	}
	for _, tc := range cases {
		idle, busy, err := parseStat([]byte(tc.in))
		if (err != nil) != tc.bad || idle != tc.idle || busy != tc.busy {
			t.Errorf("%s: %d %d %v, want %d %d bad=%v", tc.name, idle, busy, err, tc.idle, tc.busy, tc.bad)
		}
	}
}

func TestParseMeminfo(t *testing.T) {
	total, avail, err := parseMeminfo([]byte("MemTotal:  1000 kB\nMemFree: 100 kB\nMemAvailable:   600 kB\nBuffers: 10 kB\n"))
	if err != nil || total != 1000*1024 || avail != 600*1024 {
		t.Fatalf("%d %d %v", total, avail, err)
	}
	total, avail, err = parseMeminfo([]byte("MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 10 kB\nCached: 200 kB\n"))
	if err != nil || total != 1000*1024 || avail != 310*1024 {
		t.Fatalf("without MemAvailable: %d %d %v", total, avail, err)
	}
	if _, _, err := parseMeminfo([]byte("MemFree: 1 kB\n")); err == nil {
		t.Fatal("no MemTotal accepted")
	}
}

func TestCPUPercent(t *testing.T) {
	var c CPU
	for i := range 3 {
		p, err := c.Percent()
		if err != nil {
			t.Fatal(err)
		}
		if p < 0 || p > 100 || math.IsNaN(p) {
			t.Fatalf("call %d: %v%% out of range", i, p)
		}
	}
	// Burn one core between two samples: the machine cannot be idle.
	var c2 CPU
	c2.Percent()
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	defer close(stop)
	p, err := c2.Percent()
	if err != nil {
		t.Fatal(err)
	}
	if p <= 0 {
		t.Fatalf("CPU %v%% while a core spins", p)
	}
}

// readMeminfo parses /proc/meminfo independently of the package.
func readMeminfo(t *testing.T) (total, avail float64) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Fields(sc.Text())
		if len(parts) < 2 {
			continue
		}
		v, _ := strconv.ParseFloat(parts[1], 64)
		switch parts[0] {
		case "MemTotal:":
			total = v
		case "MemAvailable:":
			avail = v
		}
	}
	return total, avail
}

func TestMemoryAgreesWithProc(t *testing.T) {
	total, avail := readMeminfo(t)
	want := (total - avail) / total * 100
	got, err := Memory()
	if err != nil {
		t.Fatal(err)
	}
	if got < 0 || got > 100 || math.Abs(got-want) > 3 {
		t.Fatalf("Memory() = %.2f%%, /proc/meminfo says %.2f%%", got, want)
	}
}

func TestDiskAgreesWithStatfsAndDf(t *testing.T) {
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	used := float64(st.Blocks - st.Bfree)
	want := used / (used + float64(st.Bavail)) * 100
	got, err := Disk(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got < 0 || got > 100 || math.Abs(got-want) > 1 {
		t.Fatalf("Disk() = %.2f%%, statfs says %.2f%%", got, want)
	}
	// df rounds its Use% up to a whole percent.
	if out, err := exec.Command("df", "-P", dir).Output(); err == nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		f := strings.Fields(lines[len(lines)-1])
		if len(f) >= 5 {
			df, err := strconv.ParseFloat(strings.TrimSuffix(f[4], "%"), 64)
			if err != nil {
				t.Fatalf("df output %q", out)
			}
			if math.Abs(got-df) > 2 {
				t.Fatalf("Disk() = %.2f%%, df says %v%%", got, df)
			}
		}
	} else {
		t.Logf("df not run: %v", err)
	}
	if _, err := Disk(dir + "/does-not-exist"); err == nil {
		t.Fatal("a missing path gave no error")
	}
}
