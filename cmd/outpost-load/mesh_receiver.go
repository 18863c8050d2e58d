package main

import (
	"bytes"
	"context"
	"net"
	"sync/atomic"
	"time"
)

// A meshReceiver is one TCP client of the server: it sends one SA (and a
// ping now and then), and reads. Like the main mode's clients it parses no
// event: it cuts the stream on </event> and reads the load remarks
// (scan.go).
type meshReceiver struct {
	m    *meshRun
	idx  int
	hist *histogram
	nc   atomic.Pointer[net.Conn]

	ready     atomic.Bool
	lastWrite atomic.Int64 // Unix ns
	recv      atomic.Int64 // measured deliveries, read while running (drain)

	// The reader's own; read by the report after it exited.
	pairs                                 []seqWindow // per device
	dups, late, msgs, bytes, pongs, other int64
	err                                   error // why it could not connect, or why the server closed it
}

// run connects (retrying until --connect-timeout, as TAK clients do), sends
// the receiver's SA and reads until teardown.
func (r *meshReceiver) run() {
	m := r.m
	defer m.readWG.Done()
	connected := false
	defer func() {
		if !connected {
			m.connectWG.Done()
		}
	}()
	deadline := time.Now().Add(m.o.ConnectTO)
	backoff := 500 * time.Millisecond
	for {
		nc, err := r.dial(deadline)
		if err == nil {
			r.nc.Store(&nc)
			if m.closing.Load() {
				nc.Close()
				return
			}
			if err = r.write(func(dst []byte) ([]byte, error) { return appendReceiverSA(dst, r.idx), nil }); err == nil {
				nc.SetReadDeadline(deadline)
				if r.readLoop(nc, func() { connected = true; m.connectWG.Done() }) {
					return
				}
				err = errClosedEarly
			}
			nc.Close()
		}
		r.err = err
		m.dialErrors.Add(1)
		if m.ctx.Err() != nil || time.Until(deadline) < backoff {
			return
		}
		select {
		case <-time.After(backoff):
		case <-m.ctx.Done():
			return
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (r *meshReceiver) dial(deadline time.Time) (net.Conn, error) {
	m := r.m
	ctx, cancel := context.WithDeadline(m.ctx, deadline)
	defer cancel()
	nd := &net.Dialer{Timeout: 15 * time.Second}
	if len(m.o.local) > 0 {
		nd.LocalAddr = m.o.local[r.idx%len(m.o.local)]
	}
	return nd.DialContext(ctx, "tcp", m.o.Addr)
}

// write sends one message (the SA, then only from the pinger: never two
// writers at once).
func (r *meshReceiver) write(build func(dst []byte) ([]byte, error)) error {
	p := r.nc.Load()
	if p == nil {
		return net.ErrClosed
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	b, err := build((*bp)[:0])
	if err != nil {
		return err
	}
	*bp = b[:0]
	(*p).SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err = (*p).Write(b)
	r.lastWrite.Store(time.Now().UnixNano())
	return err
}

// Read buffer of a receiver: grown for a message that does not fit, never
// beyond two maximal messages.
const meshReadBuf = 16 << 10

// readLoop reads until the connection ends. The first bytes from the
// server make the receiver ready (onReady); it returns false when the
// connection ended before any, so the caller may retry.
func (r *meshReceiver) readLoop(nc net.Conn, onReady func()) bool {
	m := r.m
	buf := make([]byte, meshReadBuf)
	start, end, searched := 0, 0, 0 // pending bytes buf[start:end]; searched: bytes without </event>
	for {
		n, err := nc.Read(buf[end:])
		if n > 0 {
			if !r.ready.Load() {
				nc.SetReadDeadline(time.Time{})
				r.ready.Store(true)
				onReady()
			}
			now := time.Now().UnixNano() // one clock reading per read: these arrived together
			r.bytes += int64(n)
			end += n
			for {
				k := cutXML(buf[start:end], max(searched-start, 0))
				if k == 0 {
					searched = end
					break
				}
				r.handle(buf[start:start+k], now)
				start += k
			}
			switch {
			case start == end:
				start, end, searched = 0, 0, 0
			case start == 0 && end == len(buf):
				if len(buf) >= maxReadBuf {
					err = errFraming // a message larger than the server may send
					break
				}
				nb := make([]byte, 2*len(buf))
				copy(nb, buf)
				buf = nb
			case end == len(buf):
				end = copy(buf, buf[start:end])
				searched -= start
				start = 0
			}
		}
		if err != nil {
			if !r.ready.Load() {
				return false
			}
			if !m.closing.Load() {
				r.err = err
				m.disconnected.Add(1)
				m.logf("receiver %d closed: %s", r.idx, classify(err))
			}
			nc.Close()
			return true
		}
	}
}

// handle accounts for one message.
func (r *meshReceiver) handle(msg []byte, now int64) {
	r.msgs++
	if mk, ok := findMark(msg); ok && mk.sender < len(r.pairs) {
		switch r.pairs[mk.sender].accept(mk.seq) {
		case seqNew:
			if mk.measured {
				r.recv.Add(1)
				r.pairs[mk.sender].got++
				r.hist.add(now - mk.sent)
			}
		case seqDup:
			r.dups++
		case seqLate:
			r.late++
		}
		return
	}
	if isPong(msg) {
		r.pongs++
		return
	}
	r.other++
}

func isPong(msg []byte) bool { return bytes.Contains(msg, typePong) }

// seqWindow is what one receiver heard of one device: the newest sequence
// number and which of the 63 before it arrived (like IPsec's replay
// window), and how many measured SAs arrived once. Deliveries of one
// device keep their order through the server (one socket read by one
// goroutine, one queue per receiver), so an SA older than the window is
// not expected; it is counted as late, neither received nor duplicate.
type seqWindow struct {
	newest uint32 // 0: nothing yet (sequence numbers start at 1)
	bits   uint64 // bit i: newest-i arrived
	got    int32  // measured SAs received once
}

// Outcomes of seqWindow.accept.
const (
	seqNew = iota
	seqDup
	seqLate
)

func (w *seqWindow) accept(seq uint32) int {
	switch {
	case w.newest == 0 || seq > w.newest:
		if shift := uint64(seq) - uint64(w.newest); w.newest == 0 || shift >= 64 {
			w.bits = 1
		} else {
			w.bits = w.bits<<shift | 1
		}
		w.newest = seq
		return seqNew
	case w.newest-seq >= 64:
		return seqLate
	}
	bit := uint64(1) << (w.newest - seq)
	if w.bits&bit != 0 {
		return seqDup
	}
	w.bits |= bit
	return seqNew
}
