//go:build !linux

package netx

import (
	"errors"
	"net"
)

// nonblocking is Linux-only (nonblock_linux.go): elsewhere reads block and
// a connection's reader waits inside Read.
type nonblocking struct{}

func newNonblocking(net.Conn) *nonblocking { return nil }

func (*nonblocking) read(c net.Conn, p []byte) (int, error) { return c.Read(p) }

func (*nonblocking) notify(net.Conn, *Waiter, func()) error { return errors.ErrUnsupported }

func (*nonblocking) stopNotify() {}

func (*nonblocking) writev(net.Conn, *net.Buffers) (int, error) { return 0, errors.ErrUnsupported }
