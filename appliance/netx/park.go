package netx

import "net"

// Parked reading. An idle streaming connection costs what its goroutines
// and buffers cost, so the stream listeners give a quiet client neither: its
// connection is armed on a Waiter (waiter_linux.go: one goroutine and one
// epoll instance for all connections), which reports it when input
// arrives, and the reading and decoding run on a short-lived goroutine
// with Reads that return ErrWouldBlock instead of waiting
// (docs/architecture.md "Memory per connection").
//
// Where the system does not support it (nonblock_other.go,
// waiter_other.go), ReadNonblocking reports false, NewWaiter fails, and the
// connection reads as any net.Conn does.

// ErrWouldBlock is what a nonblocking Read returns when nothing is ready to
// read. It is a temporary net.Error, so a *tls.Conn reading through the
// connection keeps its state (a partly read record stays buffered) and
// returns it as is; its WouldBlock method is how the CoT stream decoder
// recognises it without importing this package.
var ErrWouldBlock error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string    { return "netx: no input ready" }
func (wouldBlock) Timeout() bool    { return false }
func (wouldBlock) Temporary() bool  { return true }
func (wouldBlock) WouldBlock() bool { return true }

// Read reads from the connection: nonblocking once ReadNonblocking was
// switched on, otherwise as the underlying connection does.
func (c *slotConn) Read(p []byte) (int, error) {
	if c.nb == nil {
		return c.Conn.Read(p)
	}
	return c.nb.read(c.Conn, p)
}

// ReadNonblocking makes every later Read return ErrWouldBlock at once when
// nothing is ready, and reports whether it could (false: reads keep
// blocking). Call it before the connection is read from concurrently; a TLS
// connection calls it on the slotConn under its *tls.Conn, after the
// handshake.
func (c *slotConn) ReadNonblocking() bool {
	nb := newNonblocking(c.Conn)
	if nb == nil {
		return false
	}
	c.nb = nb
	return true
}

// NotifyReadable arranges for ready to run once, on w's goroutine, when
// the connection has input, its end or an error; ready must not block.
// Input that is already there is reported at once. Call it again after
// reading until ErrWouldBlock to wait for more; never twice without a
// report in between. Only valid after ReadNonblocking reported true.
func (c *slotConn) NotifyReadable(w *Waiter, ready func()) error {
	return c.nb.notify(c.Conn, w, ready)
}

// StopNotify forgets the connection on its waiter: a report still pending
// for it is dropped. Call it when the connection ends.
func (c *slotConn) StopNotify() {
	c.nb.stopNotify()
}

// opError wraps an error of a raw read or write the way net.Conn's
// methods do.
func opError(op string, c net.Conn, err error) error {
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
