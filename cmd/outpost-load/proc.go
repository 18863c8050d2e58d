package main

import (
	"bytes"
	"fmt"
	"os"
	"outpost/appliance/sysinfo"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Linux /proc readings: the server's CPU time and resident memory (given
// its pid), the machine's load average, the tool's own memory.

// procCPU returns a process's user+system CPU time in seconds (every
// thread, including exited ones).
func procCPU(pid int) (float64, error) {
	d, err := sysinfo.ProcessCPU(pid)
	return d.Seconds(), err
}

// procRSS returns a process's resident set size in bytes (VmRSS).
func procRSS(pid int) (int64, error) {
	return statusField(fmt.Sprintf("/proc/%d/status", pid), "VmRSS:")
}

func selfRSS() int64 {
	v, _ := statusField("/proc/self/status", "VmRSS:")
	return v
}

// statusField reads a "Name:   N kB" line of a /proc status file.
func statusField(path, name string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s %s: %w", path, name, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("%s: no %s line", path, name)
}

// loadAvg returns the 1, 5 and 15 minute load averages (nil when unknown).
func loadAvg() []float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return nil
	}
	out := make([]float64, 3)
	for i := range out {
		out[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return out
}

// serverWatch samples the server's RSS every interval (peak and last) and
// reads its CPU time on demand. With pid 0 every reading is zero.
type serverWatch struct {
	pid  int
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	peak int64
	last int64
	err  error // the first failed reading
}

func watchServer(pid int, interval time.Duration) *serverWatch {
	w := &serverWatch{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	if pid <= 0 {
		close(w.done)
		return w
	}
	w.sample()
	go func() {
		defer close(w.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				w.sample()
			}
		}
	}()
	return w
}

func (w *serverWatch) sample() int64 {
	if w.pid <= 0 {
		return 0
	}
	v, err := procRSS(w.pid)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if w.err == nil {
			w.err = err
		}
		return w.last
	}
	w.last, w.peak = v, max(w.peak, v)
	return v
}

// cpu is the server's CPU seconds so far (0 without a pid).
func (w *serverWatch) cpu() float64 {
	if w.pid <= 0 {
		return 0
	}
	v, err := procCPU(w.pid)
	if err != nil {
		w.mu.Lock()
		if w.err == nil {
			w.err = err
		}
		w.mu.Unlock()
	}
	return v
}

func (w *serverWatch) peakRSS() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peak
}

func (w *serverWatch) close() error {
	if w.pid > 0 {
		close(w.stop)
	}
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// cpuTicks is the machine's CPU time from the "cpu" line of /proc/stat, in
// USER_HZ ticks over all CPUs: all of it, and the part stolen (time a
// virtual CPU was ready to run but the hypervisor ran another machine).
type cpuTicks struct {
	total, steal uint64
	ok           bool
}

func machineTicks() cpuTicks {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTicks{}
	}
	t, _ := parseCPUTicks(b)
	return t
}

// parseCPUTicks reads the first line of /proc/stat: "cpu" then user, nice,
// system, idle, iowait, irq, softirq, steal, guest, guest_nice. The total
// is the first eight (guest time is already part of user). A kernel too
// old to report steal has fewer fields: an error.
func parseCPUTicks(stat []byte) (cpuTicks, error) {
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTicks{}, fmt.Errorf("/proc/stat: no cpu line with steal: %.80q", line)
	}
	var t cpuTicks
	for i := 1; i <= 8; i++ {
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return cpuTicks{}, fmt.Errorf("/proc/stat: field %d: %w", i, err)
		}
		t.total += v
		if i == 8 {
			t.steal = v
		}
	}
	t.ok = true
	return t, nil
}

// stealPercent is the share of the machine's CPU time stolen between a and
// b, or nil when either reading failed or no time passed.
func stealPercent(a, b cpuTicks) *float64 {
	if !a.ok || !b.ok || b.total <= a.total || b.steal < a.steal {
		return nil
	}
	v := 100 * float64(b.steal-a.steal) / float64(b.total-a.total)
	return &v
}

// window measures the server's and the tool's CPU time and the machine's
// steal over a stretch of a run (the measured window).
type window struct {
	watch   *serverWatch
	t0      time.Time
	srv0    float64
	tool0   time.Duration
	ticks0  cpuTicks
	sec     float64
	srvCPU  float64
	toolCPU float64
	steal   *float64
}

func startWindow(watch *serverWatch) *window {
	return &window{watch: watch, t0: time.Now(), srv0: watch.cpu(), tool0: selfCPU(), ticks0: machineTicks()}
}

// end closes the window and fills its figures.
func (w *window) end() *window {
	w.srvCPU, w.toolCPU = w.watch.cpu()-w.srv0, (selfCPU() - w.tool0).Seconds()
	w.steal = stealPercent(w.ticks0, machineTicks())
	w.sec = time.Since(w.t0).Seconds()
	return w
}
