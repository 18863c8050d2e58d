package diskspace

import "golang.org/x/sys/unix"

// blockSize is the unit of the block counts: f_frsize, else f_bsize.
func blockSize(st *unix.Statfs_t) uint64 {
	if st.Frsize > 0 {
		return uint64(st.Frsize)
	}
	return uint64(st.Bsize)
}
