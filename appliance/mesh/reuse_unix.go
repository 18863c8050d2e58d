//go:build unix

package mesh

import "syscall"

// reuseAddr lets the bridge share a multicast port with other programs on
// the same machine (another TAK client, a second bridge): each socket that
// joined a group gets every datagram sent to it.
func reuseAddr(network, address string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	})
	if err != nil {
		return err
	}
	return serr
}
