//go:build linux

package netx

import (
	"errors"
	"sync"

	"golang.org/x/sys/unix"
)

// Waiter waits for input on many connections with one goroutine and one
// epoll instance, so an idle connection needs no goroutine of its own (park.go).
// A connection is armed once per wait (EPOLLONESHOT): when it has input,
// its end or an error, the waiter calls its function once, and it is not
// watched again until armed again. Re-arming a connection that already has
// input reports it at once (epoll is level-triggered), so nothing that
// arrived between a read and the arming is missed.
type Waiter struct {
	epfd, wake int // the epoll instance; an eventfd that tells the loop to end

	mu     sync.Mutex // mu guards the rest
	ready  map[uint32]func()
	next   uint32 // the last id handed out; 0 is the wake eventfd's
	closed bool
	done   chan struct{}
}

// NewWaiter starts a waiter's goroutine; Close ends it.
func NewWaiter() (*Waiter, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: 0}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wake, &ev); err != nil {
		unix.Close(wake)
		unix.Close(epfd)
		return nil, err
	}
	w := &Waiter{epfd: epfd, wake: wake, ready: map[uint32]func(){}, done: make(chan struct{})}
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
	for {
		n, err := unix.EpollWait(w.epfd, events, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return // only a closed or broken epoll descriptor; never expected
		}
		for _, ev := range events[:n] {
			id := uint32(ev.Fd)
			if id == 0 {
				return // Close
			}
			w.mu.Lock()
			ready := w.ready[id]
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
	if w.closed {
		w.mu.Unlock()
		<-w.done
		return
	}
	w.closed = true
	w.mu.Unlock()
	var one = [8]byte{1}
	unix.Write(w.wake, one[:])
	<-w.done
	unix.Close(w.wake)
	unix.Close(w.epfd)
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
