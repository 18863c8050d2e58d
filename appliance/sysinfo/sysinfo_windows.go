package sysinfo

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	kernel32                 = windows.NewLazySystemDLL("kernel32.dll")
	procGetSystemTimes       = kernel32.NewProc("GetSystemTimes")
	procGlobalMemoryStatusEx = kernel32.NewProc("GlobalMemoryStatusEx")
)

// cpuTimes returns the idle and busy time (100 ns units) of all
// processors. Kernel time includes idle time, so idle is taken out.
func cpuTimes() (idle, busy uint64, err error) {
	var idleT, kernelT, userT windows.Filetime
	r, _, e := procGetSystemTimes.Call(uintptr(unsafe.Pointer(&idleT)), uintptr(unsafe.Pointer(&kernelT)), uintptr(unsafe.Pointer(&userT)))
	if r == 0 {
		return 0, 0, fmt.Errorf("sysinfo: GetSystemTimes: %w", e)
	}
	ft := func(f windows.Filetime) uint64 { return uint64(f.HighDateTime)<<32 | uint64(f.LowDateTime) }
	idle = ft(idleT)
	kernel := ft(kernelT)
	if kernel < idle {
		kernel = idle
	}
	return idle, kernel - idle + ft(userT), nil
}

// memoryStatusEx is MEMORYSTATUSEX.
type memoryStatusEx struct {
	Length               uint32
	MemoryLoad           uint32
	TotalPhys            uint64
	AvailPhys            uint64
	TotalPageFile        uint64
	AvailPageFile        uint64
	TotalVirtual         uint64
	AvailVirtual         uint64
	AvailExtendedVirtual uint64
}

func memory() (total, avail uint64, err error) {
	m := memoryStatusEx{Length: uint32(unsafe.Sizeof(memoryStatusEx{}))}
	r, _, e := procGlobalMemoryStatusEx.Call(uintptr(unsafe.Pointer(&m)))
	if r == 0 {
		return 0, 0, fmt.Errorf("sysinfo: GlobalMemoryStatusEx: %w", e)
	}
	return m.TotalPhys, m.AvailPhys, nil
}

func disk(path string) (used, avail uint64, err error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, 0, fmt.Errorf("sysinfo: %w", err)
	}
	var freeToCaller, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &freeToCaller, &total, &free); err != nil {
		return 0, 0, fmt.Errorf("sysinfo: GetDiskFreeSpaceEx %s: %w", path, err)
	}
	if free > total {
		free = total
	}
	return total - free, freeToCaller, nil
}
