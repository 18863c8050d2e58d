//go:build linux

package netx

import (
	"io"
	"net"
	"os"
	"syscall"
)

// nonblocking reads a socket with the runtime's own descriptor (already in
// nonblocking mode): the callbacks run under the runtime's read lock and
// deadline, and waiting goes through its poller. The callbacks are method
// values made once, so a read allocates nothing.
type nonblocking struct {
	rc      syscall.RawConn
	p       []byte
	n       int
	errno   error
	peek    [1]byte
	readFn  func(uintptr) bool
	readyFn func(uintptr) bool
}

func newNonblocking(c net.Conn) *nonblocking {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	nb := &nonblocking{rc: rc}
	nb.readFn, nb.readyFn = nb.readNow, nb.readyNow
	return nb
}

// readNow is one read(2); it never waits.
func (nb *nonblocking) readNow(fd uintptr) bool {
	for {
		n, errno := syscall.Read(int(fd), nb.p)
		if errno == syscall.EINTR {
			continue
		}
		nb.n, nb.errno = max(n, 0), errno
		return true
	}
}

// readyNow reports whether a read would return at once: data, the end of
// the stream or an error. It peeks, so a readiness the poller reported
// before this wait started is never missed.
func (nb *nonblocking) readyNow(fd uintptr) bool {
	for {
		_, _, errno := syscall.Recvfrom(int(fd), nb.peek[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		if errno == syscall.EINTR {
			continue
		}
		return errno != syscall.EAGAIN
	}
}

func (nb *nonblocking) read(c net.Conn, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	nb.p = p
	err := nb.rc.Read(nb.readFn)
	n, errno := nb.n, nb.errno
	nb.p, nb.n, nb.errno = nil, 0, nil
	switch {
	case err != nil: // the deadline passed or the connection is closed
		return 0, opError(c, err)
	case errno == syscall.EAGAIN:
		return 0, ErrWouldBlock
	case errno != nil:
		return 0, opError(c, os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (nb *nonblocking) wait(c net.Conn) error {
	if err := nb.rc.Read(nb.readyFn); err != nil {
		return opError(c, err)
	}
	return nil
}
