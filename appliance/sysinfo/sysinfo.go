package sysinfo

import (
	"errors"
	"sync"
	"time"
)

// ErrNotSupported is returned on systems this package cannot measure.
var ErrNotSupported = errors.New("sysinfo: not supported on this operating system")

// SampleInterval is how long CPU.Percent measures when it has no recent
// earlier sample to compare with.
const SampleInterval = 100 * time.Millisecond

// CPU measures the whole machine's CPU use between calls. The zero value
// is ready; it is safe for concurrent use.
type CPU struct {
	mu         sync.Mutex
	have       bool
	idle, busy uint64
	at         time.Time
}

// Percent returns the share of CPU time (all cores, 0–100) spent not idle
// since the previous call. On the first call, or when the previous one was
// less than SampleInterval ago (too short to be meaningful), it measures
// over SampleInterval instead.
func (c *CPU) Percent() (float64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	idle, busy, err := cpuTimes()
	if err != nil {
		return 0, err
	}
	now := time.Now()
	if !c.have || now.Sub(c.at) < SampleInterval {
		time.Sleep(SampleInterval)
		c.idle, c.busy = idle, busy
		if idle, busy, err = cpuTimes(); err != nil {
			return 0, err
		}
		now = time.Now()
	}
	p := share(busy-c.busy, idle-c.idle)
	if idle < c.idle || busy < c.busy { // counters went back (should not happen)
		p = 0
	}
	c.have, c.idle, c.busy, c.at = true, idle, busy, now
	return p, nil
}

// share is used/(used+free) as a percentage, 0 when both are 0.
func share(used, free uint64) float64 {
	if used+free == 0 {
		return 0
	}
	p := float64(used) / float64(used+free) * 100
	return min(max(p, 0), 100)
}

// Memory returns the share of physical memory in use (0–100): what is not
// available to new programs without swapping.
func Memory() (float64, error) {
	total, avail, err := memory()
	if err != nil {
		return 0, err
	}
	if avail > total {
		avail = total
	}
	return share(total-avail, avail), nil
}

// Disk returns the share of the filesystem holding path that is in use
// (0–100), counted as df does: used / (used + available to unprivileged
// users).
func Disk(path string) (float64, error) {
	used, avail, err := disk(path)
	if err != nil {
		return 0, err
	}
	return share(used, avail), nil
}
