// Package takclient is a small CoT streaming client that behaves like a TAK
// client on the wire: XML streaming, optional negotiation to TAK protocol v1,
// pings. It exists for Outpost's own tests and its load tool, so they talk
// to the server over real sockets exactly as ATAK would.
//
// Imports: cot only.
package takclient

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"outpost/appliance/cot"
)

// Client is one streaming connection.
type Client struct {
	conn net.Conn

	wmu   sync.Mutex // wmu guards writes and proto
	proto bool       // writes are protobuf frames

	wantProto  atomic.Bool // switch the reader on a positive t-x-takp-r
	switched   chan struct{}
	switchOnce sync.Once

	events chan *cot.Event
	errMu  sync.Mutex
	err    error // why the reader stopped
	done   chan struct{}
}

// Dial connects over TCP, or over TLS when cfg is not nil.
func Dial(addr string, cfg *tls.Config) (*Client, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	var nc net.Conn
	var err error
	if cfg != nil {
		nc, err = tls.DialWithDialer(&d, "tcp", addr, cfg)
	} else {
		nc, err = d.Dial("tcp", addr)
	}
	if err != nil {
		return nil, err
	}
	return New(nc), nil
}

// New wraps an established connection and starts its reader.
func New(nc net.Conn) *Client {
	c := &Client{conn: nc, events: make(chan *cot.Event, 4096), done: make(chan struct{}), switched: make(chan struct{})}
	go c.readLoop()
	return c
}

func (c *Client) readLoop() {
	defer close(c.done)
	defer close(c.events)
	dec := cot.NewStreamDecoder(c.conn, 0)
	for {
		msg, err := dec.Next()
		if err != nil {
			var se *cot.SyntaxError
			if errors.As(err, &se) {
				continue
			}
			c.errMu.Lock()
			c.err = err
			c.errMu.Unlock()
			return
		}
		if msg.Event == nil {
			continue
		}
		ev := msg.Event
		if ev.Type == "t-x-takp-r" && c.wantProto.Load() {
			if tc := ev.Detail.TakControl; tc != nil && tc.Response != nil && *tc.Response {
				dec.SetProtocol(cot.ProtocolV1)
				c.switchOnce.Do(func() { close(c.switched) })
			}
		}
		c.events <- ev
	}
}

// Err is why the connection's reader stopped (nil while it runs).
func (c *Client) Err() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.err
}

// Done is closed when the reader stops (the server closed the connection).
func (c *Client) Done() <-chan struct{} { return c.done }

// Conn is the underlying connection.
func (c *Client) Conn() net.Conn { return c.conn }

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Send writes an event in the connection's current format.
func (c *Client) Send(ev *cot.Event) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	var b []byte
	if c.proto {
		msg, err := ev.MarshalProto()
		if err != nil {
			return err
		}
		b = cot.AppendStreamFrame(nil, msg)
	} else {
		b = ev.AppendXML(nil)
	}
	c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := c.conn.Write(b)
	return err
}

// SendRaw writes bytes as they are.
func (c *Client) SendRaw(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := c.conn.Write(b)
	return err
}

// Protobuf reports whether the client writes protobuf.
func (c *Client) Protobuf() bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.proto
}

// Next returns the next received event, or an error at timeout or when the
// connection closed.
func (c *Client) Next(timeout time.Duration) (*cot.Event, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case ev, ok := <-c.events:
		if !ok {
			if err := c.Err(); err != nil {
				return nil, fmt.Errorf("connection closed: %w", err)
			}
			return nil, io.EOF
		}
		return ev, nil
	case <-t.C:
		return nil, fmt.Errorf("no event within %v", timeout)
	}
}

// WaitFor returns the first received event that matches, discarding the
// others, or an error at timeout.
func (c *Client) WaitFor(match func(*cot.Event) bool, timeout time.Duration) (*cot.Event, error) {
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("no matching event within %v", timeout)
		}
		ev, err := c.Next(left)
		if err != nil {
			return nil, err
		}
		if match(ev) {
			return ev, nil
		}
	}
}

// Type matches events of one type.
func Type(typ string) func(*cot.Event) bool {
	return func(ev *cot.Event) bool { return ev.Type == typ }
}

// Negotiate upgrades the connection to TAK protocol v1 the way ATAK does
// (protocol.md §4): wait for the server's offer, send a request, wait for the
// positive response; after it both directions are protobuf.
func (c *Client) Negotiate(timeout time.Duration) error {
	if _, err := c.WaitFor(Type("t-x-takp-v"), timeout); err != nil {
		return fmt.Errorf("waiting for the protocol offer: %w", err)
	}
	c.wantProto.Store(true)
	now := time.Now().UTC()
	req := &cot.Event{
		Version: "2.0", UID: "client-" + uuid.NewString(), Type: "t-x-takp-q", How: "m-g",
		Time: now, Start: now, Stale: now.Add(time.Minute),
		Point:  cot.Point{Ce: 999999, Le: 999999},
		Detail: cot.Detail{XML: []byte(`<TakControl><TakRequest version="1"/></TakControl>`)},
	}
	c.wmu.Lock()
	c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := c.conn.Write(req.AppendXML(nil))
	if err != nil {
		c.wmu.Unlock()
		return err
	}
	select {
	case <-c.switched:
	case <-c.done:
		c.wmu.Unlock()
		return fmt.Errorf("connection closed during negotiation: %v", c.Err())
	case <-time.After(timeout):
		c.wmu.Unlock()
		return errors.New("no positive t-x-takp-r")
	}
	c.proto = true
	c.wmu.Unlock()
	return nil
}

// Ping sends a t-x-c-t ping as ATAK does (uid <uid>-ping).
func (c *Client) Ping(uid string) error {
	now := time.Now().UTC()
	return c.Send(&cot.Event{
		Version: "2.0", UID: uid + "-ping", Type: "t-x-c-t", How: "m-g",
		Time: now, Start: now, Stale: now.Add(20 * time.Second),
		Point: cot.Point{Hae: cot.Unknown, Ce: cot.Unknown, Le: cot.Unknown},
	})
}

// SA builds a position report like ATAK's (protocol.md §1).
func SA(uid, callsign string, lat, lon float64) *cot.Event {
	now := time.Now().UTC()
	return &cot.Event{
		Version: "2.0", UID: uid, Type: "a-f-G-U-C", How: "m-g",
		Time: now, Start: now, Stale: now.Add(6 * time.Minute),
		Point: cot.Point{Lat: lat, Lon: lon, Hae: 25, Ce: 9.9, Le: cot.Unknown},
		Detail: cot.Detail{
			XML: []byte(`<takv device="test" platform="Outpost-test" os="1" version="1"/>` +
				`<contact callsign="` + callsign + `" endpoint="*:-1:stcp"/>` +
				`<__group name="Cyan" role="Team Member"/><status battery="88"/>` +
				`<track speed="0.0" course="12.5"/>`),
			Contact: &cot.Contact{Callsign: callsign, Endpoint: "*:-1:stcp"},
			Group:   &cot.Group{Name: "Cyan", Role: "Team Member"},
		},
	}
}

// Chat builds a GeoChat-like event, optionally addressed with <marti><dest>.
func Chat(uid, text string, dests ...cot.Dest) *cot.Event {
	now := time.Now().UTC()
	detail := `<remarks>` + text + `</remarks>`
	var marti *cot.Marti
	if len(dests) > 0 {
		m := "<marti>"
		for _, d := range dests {
			switch {
			case d.UID != "":
				m += `<dest uid="` + d.UID + `"/>`
			case d.Callsign != "":
				m += `<dest callsign="` + d.Callsign + `"/>`
			case d.Mission != "":
				m += `<dest mission="` + d.Mission + `"/>`
			}
		}
		detail = m + "</marti>" + detail
		marti = &cot.Marti{Dests: dests}
	}
	return &cot.Event{
		Version: "2.0", UID: uid, Type: "b-t-f", How: "h-g-i-g-o",
		Time: now, Start: now, Stale: now.Add(time.Minute),
		Point:  cot.Point{Hae: cot.Unknown, Ce: cot.Unknown, Le: cot.Unknown},
		Detail: cot.Detail{XML: []byte(detail), Marti: marti},
	}
}
