package config

import "time"

// Memory is the Go runtime's memory: the heap's soft limit, the garbage
// collector's target, and when a burst's free heap goes back to the system.
// (Each CoT client's queue is the Relay's.)
type Memory struct {
	MemoryLimit int // memoryLimit: soft limit of the Go heap in bytes (debug.SetMemoryLimit); 0: none
	GCPercent   int // gcPercent: the garbage collector's target (debug.SetGCPercent); 0: the Go runtime's (GOGC)
	// idleMemoryReturn: how long the server must be quiet before the free heap a burst left behind goes
	// back to the system; 0: only as the Go runtime returns it
	IdleMemoryReturn time.Duration
}

// MinMemoryLimit is the smallest memoryLimit accepted: below it the
// garbage collector would run nearly all the time.
const MinMemoryLimit = 32 << 20

func defaultMemory() Memory {
	return Memory{
		MemoryLimit:      256 << 20,
		GCPercent:        50,
		IdleMemoryReturn: 10 * time.Second,
	}
}

// Validate checks memoryLimit, gcPercent and idleMemoryReturn.
func (m Memory) Validate() error {
	if m.MemoryLimit != 0 && m.MemoryLimit < MinMemoryLimit {
		return keyErr("memoryLimit", "must be 0 (no limit) or at least 32 MiB")
	}
	if m.GCPercent != 0 && (m.GCPercent < 10 || m.GCPercent > 1000) {
		return keyErr("gcPercent", "must be 0 (the Go runtime's GOGC) or between 10 and 1000")
	}
	if m.IdleMemoryReturn != 0 && (m.IdleMemoryReturn < time.Second || m.IdleMemoryReturn > time.Hour) {
		return keyErr("idleMemoryReturn", "must be 0 (never) or between 1s and 1h")
	}
	return nil
}
