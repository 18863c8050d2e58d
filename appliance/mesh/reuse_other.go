//go:build !unix && !windows

package mesh

import "syscall"

func reuseAddr(network, address string, c syscall.RawConn) error { return nil }
