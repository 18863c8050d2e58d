package netx

import (
	"net"
	"net/netip"
	"sync"
)

// Limits caps concurrent connections (or handshakes) per source address
// and in total. One Limits may be shared by several listeners; the zero
// limits mean "no limit". It is safe for concurrent use.
type Limits struct {
	perSource, total int

	mu       sync.Mutex // mu guards bySource and n
	bySource map[netip.Addr]int
	n        int
}

// NewLimits returns limits of perSource per address and total overall
// (0: unlimited).
func NewLimits(perSource, total int) *Limits {
	return &Limits{perSource: perSource, total: total, bySource: map[netip.Addr]int{}}
}

// Refusal causes, as counted and logged.
const (
	CausePerSource = "per_source" // the source address has too many
	CauseTotal     = "total"      // the listener (or group of listeners) is full
)

// acquire takes one slot for src; it returns the cause when refused.
func (l *Limits) acquire(src netip.Addr) (cause string) {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total > 0 && l.n >= l.total {
		return CauseTotal
	}
	if l.perSource > 0 && l.bySource[src] >= l.perSource {
		return CausePerSource
	}
	l.n++
	l.bySource[src]++
	return ""
}

// release gives back a slot taken by acquire.
func (l *Limits) release(src netip.Addr) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n--
	if c := l.bySource[src] - 1; c > 0 {
		l.bySource[src] = c
	} else {
		delete(l.bySource, src)
	}
}

// InUse reports the slots taken now.
func (l *Limits) InUse() int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// sourceOf is the IP address a connection comes from (unmapped), the key
// of the per-source limits.
func sourceOf(c net.Conn) netip.Addr {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return ta.AddrPort().Addr().Unmap()
	}
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// slotConn is an accepted connection that holds slots in one or more
// Limits; closing it gives them back (once). It can also be corked (see
// Cork), which is how a TLS writer sends many records in one system call.
type slotConn struct {
	net.Conn
	src   netip.Addr
	held  []*Limits
	once  sync.Once
	onEnd func()
	nb    *nonblocking // set by ReadNonblocking (park.go)

	wmu    sync.Mutex // wmu guards corked and pend
	corked bool
	pend   []byte
}

// Write writes p, or keeps it for Uncork while the connection is corked.
func (c *slotConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	if c.corked {
		if c.pend == nil {
			c.pend = getCorkBuffer()
		}
		c.pend = append(c.pend, p...)
		c.wmu.Unlock()
		return len(p), nil
	}
	c.wmu.Unlock()
	return c.Conn.Write(p)
}

// Cork makes writes wait in memory until Uncork, which sends them with one
// system call. A TLS connection over a corked slotConn turns many records
// into one write: the writer corks, writes its records through the
// *tls.Conn, and uncorks.
func (c *slotConn) Cork() {
	c.wmu.Lock()
	c.corked = true
	c.wmu.Unlock()
}

// Uncork sends what waited and writes through again.
func (c *slotConn) Uncork() error {
	c.wmu.Lock()
	c.corked = false
	pend := c.pend
	c.pend = nil
	c.wmu.Unlock()
	if len(pend) == 0 {
		return nil
	}
	_, err := c.Conn.Write(pend)
	putCorkBuffer(pend)
	return err
}

// Cork buffers are pooled: a connection holds one only while it writes.
var corkPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

func getCorkBuffer() []byte { return (*corkPool.Get().(*[]byte))[:0] }

func putCorkBuffer(b []byte) {
	if cap(b) > 1<<20 {
		return // grown by an unusual burst: let it go
	}
	b = b[:0]
	corkPool.Put(&b)
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		for _, l := range c.held {
			l.release(c.src)
		}
		if c.onEnd != nil {
			c.onEnd()
		}
	})
	return err
}

// NetConn returns the underlying connection (writes that need the
// concrete *net.TCPConn, such as writev through net.Buffers, use it; close
// through the slotConn so the slots are given back).
func (c *slotConn) NetConn() net.Conn { return c.Conn }
