//go:build linux || darwin || freebsd

package diskspace

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// stat is the usage of the filesystem holding dir: what an unprivileged
// process may still write (f_bavail), and its size.
func stat(dir string) (Usage, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return Usage{}, fmt.Errorf("diskspace: statfs %s: %w", dir, err)
	}
	bs := blockSize(&st)
	return Usage{Free: int64(uint64(st.Bavail) * bs), Total: int64(uint64(st.Blocks) * bs)}, nil
}
