//go:build linux

package netx

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// nonblocking reads a socket with the runtime's own descriptor (already in
// nonblocking mode) and arms it on a Waiter: the callbacks run under the
// runtime's read lock and deadline (reads) or its reference (arming), so
// the descriptor is never used after Close. They are method values made
// once, so a read or an arming allocates nothing.
type nonblocking struct {
	rc     syscall.RawConn
	p      []byte
	n      int
	errno  error
	readFn func(uintptr) bool

	// Waiting on a Waiter (notify). amu keeps two arms of one connection
	// apart (only a connection that is ending can see two at once).
	amu    sync.Mutex
	w      *Waiter
	id     uint32 // the connection's id in w; 0: not registered yet
	ctl    int
	ev     unix.EpollEvent
	armErr error
	armFn  func(uintptr)
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
	nb.readFn, nb.armFn = nb.readNow, nb.armNow
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

// notify arms the connection on w: ready runs once, on w's goroutine,
// when it has input. The first call registers it. The descriptor is used
// under the runtime's Control, so never after the connection is closed.
func (nb *nonblocking) notify(c net.Conn, w *Waiter, ready func()) error {
	nb.amu.Lock()
	defer nb.amu.Unlock()
	nb.ctl = unix.EPOLL_CTL_MOD
	if nb.id == 0 {
		id, err := w.add(ready)
		if err != nil {
			return opError(c, err)
		}
		nb.w, nb.id, nb.ctl = w, id, unix.EPOLL_CTL_ADD
		nb.ev = unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: int32(id)}
	}
	err := nb.rc.Control(nb.armFn)
	if err == nil {
		err = nb.armErr
	}
	nb.armErr = nil
	if err != nil {
		return opError(c, err)
	}
	return nil
}

func (nb *nonblocking) armNow(fd uintptr) { nb.armErr = nb.w.arm(int(fd), nb.ctl, &nb.ev) }

// stopNotify forgets the registration (the kernel drops the descriptor's
// when it is closed).
func (nb *nonblocking) stopNotify() {
	nb.amu.Lock()
	defer nb.amu.Unlock()
	if nb.id != 0 {
		nb.w.forget(nb.id)
		nb.id = 0
	}
}
