package sysinfo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// cpuTimes reads the machine's idle and busy time (in clock ticks) from
// the first line of /proc/stat.
func cpuTimes() (idle, busy uint64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("sysinfo: %w", err)
	}
	return parseStat(b)
}

// parseStat parses the "cpu" line: user nice system idle iowait irq
// softirq steal [guest guest_nice]. Guest time is already inside user and
// nice, so it is not added again; iowait counts as idle.
func parseStat(b []byte) (idle, busy uint64, err error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 5 || string(f[0]) != "cpu" {
		return 0, 0, errors.New("sysinfo: /proc/stat has no cpu line")
	}
	var v [8]uint64
	for i := 0; i < len(v) && i+1 < len(f); i++ {
		if v[i], err = strconv.ParseUint(string(f[i+1]), 10, 64); err != nil {
			return 0, 0, fmt.Errorf("sysinfo: /proc/stat field %d: %w", i+1, err)
		}
	}
	idle = v[3] + v[4]
	busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
	return idle, busy, nil
}

// memory reads MemTotal and MemAvailable (bytes) from /proc/meminfo.
func memory() (total, avail uint64, err error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, 0, fmt.Errorf("sysinfo: %w", err)
	}
	return parseMeminfo(b)
}

// parseMeminfo returns MemTotal and MemAvailable in bytes. Kernels older
// than 3.14 have no MemAvailable: MemFree + Buffers + Cached stands in.
func parseMeminfo(b []byte) (total, avail uint64, err error) {
	kv := map[string]uint64{}
	for line := range bytes.Lines(b) {
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseUint(string(f[0]), 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && string(f[1]) == "kB" {
			n *= 1024
		}
		kv[string(name)] = n
	}
	total, ok := kv["MemTotal"]
	if !ok || total == 0 {
		return 0, 0, errors.New("sysinfo: /proc/meminfo has no MemTotal")
	}
	avail, ok = kv["MemAvailable"]
	if !ok {
		avail = kv["MemFree"] + kv["Buffers"] + kv["Cached"]
	}
	return total, avail, nil
}

// disk returns the bytes used and available to unprivileged users on the
// filesystem holding path.
func disk(path string) (used, avail uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, 0, fmt.Errorf("sysinfo: statfs %s: %w", path, err)
	}
	bs := uint64(st.Frsize)
	if bs == 0 {
		bs = uint64(st.Bsize)
	}
	return (st.Blocks - st.Bfree) * bs, st.Bavail * bs, nil
}
