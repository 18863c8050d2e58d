//go:build !linux && !windows

package sysinfo

func cpuTimes() (idle, busy uint64, err error)    { return 0, 0, ErrNotSupported }
func memory() (total, avail uint64, err error)    { return 0, 0, ErrNotSupported }
func disk(string) (used, avail uint64, err error) { return 0, 0, ErrNotSupported }
