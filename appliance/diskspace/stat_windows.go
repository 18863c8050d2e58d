package diskspace

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// stat is the usage of the volume holding dir: what this process may still
// write (its quota included), and its size.
func stat(dir string) (Usage, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return Usage{}, fmt.Errorf("diskspace: %w", err)
	}
	var freeToCaller, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &freeToCaller, &total, &free); err != nil {
		return Usage{}, fmt.Errorf("diskspace: GetDiskFreeSpaceEx %s: %w", dir, err)
	}
	return Usage{Free: int64(freeToCaller), Total: int64(total)}, nil
}
