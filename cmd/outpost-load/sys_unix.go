//go:build unix

package main

import (
	"fmt"
	"syscall"
	"time"
)

// raiseFileLimit lifts the soft RLIMIT_NOFILE to the hard limit (every
// connection is a file descriptor) and fails when need descriptors do not
// fit under it.
func raiseFileLimit(need int) (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("reading the file descriptor limit: %w", err)
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			return 0, fmt.Errorf("raising the file descriptor limit to %d: %w", rl.Max, err)
		}
	}
	if uint64(need) > rl.Cur {
		return rl.Cur, fmt.Errorf("%d connections need %d file descriptors; the limit is %d (raise the hard limit, e.g. ulimit -Hn)", need-fdMargin, need, rl.Cur)
	}
	return rl.Cur, nil
}

// selfCPU is the tool's own user+system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// selfMaxRSS is the tool's peak resident memory in bytes.
func selfMaxRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Maxrss) << 10 // kilobytes on Linux
}
