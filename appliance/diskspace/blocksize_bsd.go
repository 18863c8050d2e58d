//go:build darwin || freebsd

package diskspace

import "golang.org/x/sys/unix"

// blockSize is the unit of the block counts (f_bsize).
func blockSize(st *unix.Statfs_t) uint64 { return uint64(st.Bsize) }
