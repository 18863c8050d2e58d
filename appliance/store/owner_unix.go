//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"fmt"
	"os"
	"syscall"
)

// matchOwner gives files the owner of dir when this process runs as root:
// `sudo outpost restore` must leave files the service user can open.
func matchOwner(dir string, files ...string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	for _, f := range files {
		if err := os.Lchown(f, int(sys.Uid), int(sys.Gid)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("give %s to the data directory's owner: %w", f, err)
		}
	}
	return nil
}
