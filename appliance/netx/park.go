package netx

import "net"

// Parked reading. An idle streaming connection costs what its goroutines
// and buffers cost, so the stream listeners keep the goroutine that waits
// for a quiet client as shallow as the runtime allows: it waits in
// WaitReadable, which holds no buffer and only a few stack frames, and the
// reading and decoding run on a short-lived goroutine with Reads that
// return ErrWouldBlock instead of waiting. A goroutine stack that grew
// (decoding, a TLS record) never shrinks back to the runtime's 2 KiB
// minimum while its goroutine waits below a few hundred bytes of frames,
// so the one that waits must never be the one that decodes
// (docs/architecture.md "Memory per connection").
//
// Where the system does not support it (nonblock_other.go), ReadNonblocking
// reports false and the connection reads as any net.Conn does.

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

// WaitReadable waits until the connection has input, its end or an error,
// without reading anything. The read deadline applies: it returns the
// deadline's timeout error, or the error of a closed connection. Only valid
// after ReadNonblocking reported true.
func (c *slotConn) WaitReadable() error {
	return c.nb.wait(c.Conn)
}

// opError wraps an error of a raw read the way net.Conn.Read does.
func opError(c net.Conn, err error) error {
	return &net.OpError{Op: "read", Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
