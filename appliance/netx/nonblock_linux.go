//go:build linux

package netx

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"

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

	// Nonblocking writes (writev): one writer at a time, the connection's
	// owner of its writing side.
	wbufs   [][]byte
	wn      int
	werrno  error
	writeFn func(uintptr) bool
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
	nb.readFn, nb.armFn, nb.writeFn = nb.readNow, nb.armNow, nb.writevNow
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
		return 0, opError("read", c, err)
	case errno == syscall.EAGAIN:
		return 0, ErrWouldBlock
	case errno != nil:
		return 0, opError("read", c, os.NewSyscallError("read", errno))
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
			return opError("read", c, err)
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
		return opError("read", c, err)
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

// maxIovecs bounds the buffers one writev takes; the rest wait for the
// next call.
const maxIovecs = 64

// writevNow is one writev(2) of the first maxIovecs buffers; it never
// waits. Its iovec array lives on the stack.
func (nb *nonblocking) writevNow(fd uintptr) bool {
	var iov [maxIovecs]syscall.Iovec
	k := 0
	for _, b := range nb.wbufs {
		if k == len(iov) {
			break
		}
		if len(b) > 0 {
			iov[k].Base = &b[0]
			iov[k].SetLen(len(b))
			k++
		}
	}
	if k == 0 {
		return true
	}
	for {
		r, _, errno := syscall.Syscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(k))
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			nb.werrno = errno
		} else {
			nb.wn = int(r)
		}
		return true
	}
}

// writev writes what the socket takes now of *bufs and drops it from
// *bufs; ErrWouldBlock when it takes nothing.
func (nb *nonblocking) writev(c net.Conn, bufs *net.Buffers) (int, error) {
	nb.wbufs = *bufs
	err := nb.rc.Write(nb.writeFn)
	n, errno := nb.wn, nb.werrno
	nb.wbufs, nb.wn, nb.werrno = nil, 0, nil
	switch {
	case err != nil: // the write deadline passed or the connection is closed
		return 0, opError("write", c, err)
	case errno == syscall.EAGAIN:
		return 0, ErrWouldBlock
	case errno != nil:
		return 0, opError("write", c, os.NewSyscallError("writev", errno))
	}
	consume(bufs, n)
	return n, nil
}
