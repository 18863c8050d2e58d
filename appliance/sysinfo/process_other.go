//go:build !linux

package sysinfo

import "time"

// ProcessCPU is a process's CPU time so far; only Linux reports it.
func ProcessCPU(int) (time.Duration, error) { return 0, ErrNotSupported }
