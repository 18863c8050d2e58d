//go:build linux

package netx

import (
	"errors"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Waiter waits for input on many connections with one goroutine and one
// epoll instance, so an idle connection needs no goroutine of its own (park.go).
// The epoll descriptor is itself waited on through the runtime's poller (it
// is readable when one of its connections is), so the waiting goroutine
// holds no thread and is woken as any socket reader is.
// A connection is armed once per wait (EPOLLONESHOT): when it has input,
// its end or an error, the waiter calls its function once, and it is not
// watched again until armed again. Re-arming a connection that already has
// input reports it at once (epoll is level-triggered), so nothing that
// arrived between a read and the arming is missed.
type Waiter struct {
	epfd int      // the epoll instance
	file *os.File // epfd in the runtime's poller; closing it ends the loop
	rc   syscall.RawConn

	mu     sync.Mutex // mu guards the rest
	ready  map[uint32]func()
	next   uint32 // the last id handed out; 0 is never one
	closed bool
	done   chan struct{}
}

// NewWaiter starts a waiter's goroutine; Close ends it.
func NewWaiter() (*Waiter, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	// Nonblocking, so os.NewFile hands it to the runtime's poller.
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, err
	}
	f := os.NewFile(uintptr(epfd), "epoll")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	w := &Waiter{epfd: epfd, file: f, rc: rc, ready: map[uint32]func(){}, done: make(chan struct{})}
	go w.loop()
	return w, nil
}

// errWaiterClosed is returned when arming a connection on a closed waiter.
var errWaiterClosed = errors.New("netx: waiter closed")

// add registers ready and returns its id.
func (w *Waiter) add(ready func()) (uint32, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, errWaiterClosed
	}
	for {
		w.next++
		if _, taken := w.ready[w.next]; w.next != 0 && !taken {
			break
		}
	}
	w.ready[w.next] = ready
	return w.next, nil
}

// forget drops an id: an event still pending for it finds nothing.
func (w *Waiter) forget(id uint32) {
	w.mu.Lock()
	delete(w.ready, id)
	w.mu.Unlock()
}

// Len is how many connections are registered.
func (w *Waiter) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.ready)
}

func (w *Waiter) loop() {
	defer close(w.done)
	events := make([]unix.EpollEvent, 128)
	var n int
	var werr error
	poll := func(fd uintptr) bool {
		for {
			n, werr = unix.EpollWait(int(fd), events, 0)
			if werr != unix.EINTR {
				return n > 0 || werr != nil
			}
		}
	}
	for {
		// rc.Read calls poll, and while it finds nothing waits until the
		// runtime's poller reports the epoll descriptor readable.
		if err := w.rc.Read(poll); err != nil || werr != nil {
			return // Close (or a broken epoll descriptor; never expected)
		}
		for _, ev := range events[:n] {
			w.mu.Lock()
			ready := w.ready[uint32(ev.Fd)]
			w.mu.Unlock()
			if ready != nil {
				ready()
			}
		}
	}
}

// Close ends the waiter's goroutine; connections armed on it are never
// reported. It waits for a function being called to return.
func (w *Waiter) Close() {
	w.mu.Lock()
	closed := w.closed
	w.closed = true
	w.mu.Unlock()
	if !closed {
		w.file.Close()
	}
	<-w.done
}

// arm watches fd for input once; ctl is EPOLL_CTL_ADD the first time. It
// holds mu so that it never uses the epoll descriptor after Close.
func (w *Waiter) arm(fd int, ctl int, ev *unix.EpollEvent) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errWaiterClosed
	}
	return unix.EpollCtl(w.epfd, ctl, fd, ev)
}
