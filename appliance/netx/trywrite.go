package netx

import "net"

// Writes that never wait. The stream relay writes a busy connection from a
// shared goroutine (appliance/stream flusher.go), which must never block on
// one client: it writes what the socket takes now and hands the rest to a
// goroutine of that connection alone. Like nonblocking reads (park.go),
// these work only after ReadNonblocking reported true (Linux).

// TryWritev writes what the socket takes now of *bufs, at most 64 buffers
// in one writev, and drops what it wrote from *bufs. It returns
// ErrWouldBlock when the socket takes nothing now. Only one goroutine may
// write the connection at a time.
func (c *slotConn) TryWritev(bufs *net.Buffers) (int, error) {
	return c.nb.writev(c.Conn, bufs)
}

// TryUncork is Uncork without waiting: it sends what the socket takes now
// of what waited while corked. sent reports whether all of it went (the
// connection then writes through again); otherwise the rest still waits,
// the connection stays corked, and Uncork sends it.
func (c *slotConn) TryUncork() (sent bool, err error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for len(c.pend) > 0 {
		one := net.Buffers{c.pend}
		n, err := c.nb.writev(c.Conn, &one)
		if err == ErrWouldBlock {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		c.pend = c.pend[:copy(c.pend, c.pend[n:])]
	}
	c.corked = false
	if c.pend != nil {
		putCorkBuffer(c.pend)
		c.pend = nil
	}
	return true, nil
}

// consume drops the first n bytes from *b, as a write of them would.
func consume(b *net.Buffers, n int) {
	for len(*b) > 0 {
		if n < len((*b)[0]) {
			(*b)[0] = (*b)[0][n:]
			return
		}
		n -= len((*b)[0])
		(*b)[0] = nil
		*b = (*b)[1:]
	}
}
