//go:build windows

package mesh

import "syscall"

// reuseAddr lets the bridge share a multicast port with other programs on
// the same machine (WinTAK on the same laptop listens to the same groups).
func reuseAddr(network, address string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(syscall.Handle(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	})
	if err != nil {
		return err
	}
	return serr
}
