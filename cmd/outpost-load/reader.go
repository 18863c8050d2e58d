package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"syscall"
	"time"
)

// readLoop reads the connection until it fails or the run ends: XML until
// a positive negotiation answer, protobuf frames after it (protocol.md §4).
// It reports whether the server sent anything; when it did not, the caller
// may retry the connection.
func (c *client) readLoop(nc net.Conn) (established bool) {
	r := c.r
	buf := make([]byte, minReadBuf)
	start, end, searched := 0, 0, 0 // pending bytes buf[start:end]; searched: XML bytes without </event>
	proto := false
	var throttleFrom time.Time
	var throttled int64 // bytes read since throttleFrom
	for {
		want := len(buf) - end
		if c.slow && r.throttling.Load() {
			if r.o.SlowRate == 0 {
				<-r.done // stopped reading: the server's problem now
				return true
			}
			now := time.Now()
			if throttleFrom.IsZero() {
				throttleFrom, throttled = now, 0
			}
			allowed := int64(now.Sub(throttleFrom).Seconds()*float64(r.o.SlowRate)) - throttled
			if allowed < 64 {
				wait := time.Duration(float64(64-allowed) / float64(r.o.SlowRate) * float64(time.Second))
				if !r.sleepFor(max(wait, 20*time.Millisecond)) {
					return true
				}
				continue
			}
			want = min(want, int(allowed))
		}
		n, err := nc.Read(buf[end : end+want])
		if n > 0 {
			if !established {
				established = true
				if !c.proto && c.state.Load() == stPending {
					c.markReady()
				}
			}
			c.bytes += int64(n)
			throttled += int64(n)
			saturated := n == len(buf)-end // more may be waiting
			end += n
			var ferr error
			start, searched, proto, ferr = c.consume(buf, start, end, searched, proto)
			if ferr != nil {
				c.gone(ferr)
				return true
			}
			if start == end {
				start, end, searched = 0, 0, 0
			}
			switch {
			case start == 0 && end == len(buf) && len(buf) >= maxReadBuf:
				c.gone(errFraming) // a message larger than the server may send
				return true
			case start == 0 && end == len(buf), saturated && len(buf) < busyReadBuf:
				// One message needs more room, or reads keep filling the
				// buffer: take more per read.
				nb := make([]byte, min(2*len(buf), maxReadBuf))
				end = copy(nb, buf[start:end])
				searched -= start
				start, buf = 0, nb
			case end == len(buf):
				end = copy(buf, buf[start:end])
				searched -= start
				start = 0
			case end == 0 && len(buf) > minReadBuf && n < minReadBuf/4:
				buf = make([]byte, minReadBuf) // quiet again: let the big buffer go
			}
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && c.state.Load() == stPending && !r.closing.Load() {
				// No offer or answer within negotiateTimeout: carry on in XML.
				c.neg = negTimeout
				nc.SetReadDeadline(time.Time{})
				if err := c.sendFirstSA(); err != nil {
					c.gone(err)
					return true
				}
				c.markReady()
				continue
			}
			if !established {
				return false
			}
			c.gone(err)
			return true
		}
	}
}

// consume handles every complete message in buf[start:end] and returns the
// new start, how much of the rest was searched for </event>, and the
// stream's format.
func (c *client) consume(buf []byte, start, end, searched int, proto bool) (int, int, bool, error) {
	for start < end {
		var msg []byte
		if proto {
			n, off, err := cutFrame(buf[start:end])
			if err != nil {
				return start, 0, proto, err
			}
			if n == 0 {
				return start, 0, proto, nil
			}
			msg = buf[start+off : start+n]
			start += n
		} else {
			n := cutXML(buf[start:end], max(searched-start, 0))
			if n == 0 {
				return start, end, proto, nil
			}
			msg = buf[start : start+n]
			start += n
		}
		c.msgs++
		if c.handle(msg) {
			proto = true // the bytes after a positive answer are protobuf
		}
	}
	return start, start, proto, nil
}

// handle processes one message; it reports whether the stream switches to
// protobuf after it.
func (c *client) handle(msg []byte) bool {
	if m, ok := findMark(msg); ok {
		c.onSA(m)
		return false
	}
	switch {
	case bytes.Contains(msg, typeOffer):
		if c.proto && c.neg == negNone {
			if err := c.write(appendTakRequest); err != nil {
				c.gone(err)
				return false
			}
			c.neg = negRequested
		}
	case bytes.Contains(msg, typeAnswer):
		if c.neg != negRequested {
			c.other++
			return false
		}
		c.conn().SetReadDeadline(time.Time{})
		ok := bytes.Contains(msg, answerTrue)
		if ok {
			c.neg = negSwitched
			c.wmu.Lock()
			c.wproto = true
			c.wmu.Unlock()
		} else {
			c.neg = negRefused
		}
		if err := c.sendFirstSA(); err != nil {
			c.gone(err)
			return false
		}
		c.markReady()
		return ok
	case bytes.Contains(msg, typePong):
		c.pongs++
	case bytes.Contains(msg, typeDeparture):
		c.departures++
	default:
		c.other++
	}
	return false
}

// onSA accounts for one load SA: who has been heard from (the replay),
// measured deliveries and their latency, and sequence gaps (reports the
// server coalesced: a newer SA of the same client replaced them in a full
// queue, architecture.md "The relay").
func (c *client) onSA(m mark) {
	r := c.r
	now := time.Now()
	if m.sender < 0 || m.sender >= len(r.clients) {
		c.other++
		return
	}
	c.arrived.Add(1)
	if w, bit := m.sender/64, uint64(1)<<(m.sender%64); c.seen[w]&bit == 0 {
		c.seen[w] |= bit
		c.distinct.Add(1)
		c.lastNewPeer.Store(int64(now.Sub(r.t0)))
	}
	if slot := r.slotOf[m.sender]; slot >= 0 && c.last != nil {
		prev := int64(c.last[slot]) - 1 // -1: nothing yet
		if int64(m.seq) <= prev {
			c.dups++
			return
		}
		if fm := r.firstMeasured[slot].Load(); fm > 0 {
			lo := max(prev+1, int64(fm))
			if hi := int64(m.seq) - 1; hi >= lo {
				c.coalesced += hi - lo + 1
			}
		}
		c.last[slot] = m.seq + 1
	}
	if m.measured {
		c.recv.Add(1)
		c.hist.add(now.UnixNano() - m.sent)
	}
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
