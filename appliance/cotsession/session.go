package cotsession

import (
	"errors"
	"log/slog"
	"math/big"
	"sync"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/logx"
	"outpost/appliance/rate"
)

// Session is the part of one connection that every CoT transport shares:
// its broker session, its identity, its pacing and what was already logged
// about it. A transport's connection embeds it (by value: one allocation
// per connection, as before the driver existed) and joins it with
// Driver.Join. Handle is called by one reading goroutine at a time.
type Session struct {
	// Sess is the broker session, set by Join and never changed: the one
	// owner of "this connection is ending" (architecture.md "Queues and
	// the slow-consumer policy").
	Sess *broker.Session

	d      *core
	serial *big.Int // client certificate serial; nil without a certificate

	// Negotiation (Negotiate); nil where the transport cannot switch.
	neg *cot.Negotiator
	dec *cot.StreamDecoder

	logOnce sync.Once
	logger  *slog.Logger // made on first use (Log): most connections never log

	// Reading side only (one Handle at a time): the pacing of this
	// connection, and what was already logged for it.
	events, bytes                              rate.Bucket
	loggedPace, loggedOversize, loggedImpostor bool
}

// session lets the registry reach the Session a connection embeds (Conn).
func (s *Session) session() *Session { return s }

// Serial is the client certificate serial the session joined with (nil
// without a certificate).
func (s *Session) Serial() *big.Int { return s.serial }

// Log is the connection's logger: the transport's, with the session, the
// remote address and the user.
func (s *Session) Log() *slog.Logger {
	s.logOnce.Do(func() {
		info := s.Sess.Info()
		s.logger = s.d.log.With("session", s.Sess.ID(), "remote", info.Addr)
		if info.User != "" {
			s.logger = s.logger.With("user", logx.Clip(info.User))
		}
	})
	return s.logger
}

// Negotiate offers the client TAK protocol v1 (protocol.md §4) and lets
// Handle answer its request: dec, the transport's decoder, switches to
// protobuf at the byte after a request that was granted. Call it before
// the first Handle, after the replay is queued (the offer follows it).
// Transports that start in protobuf (the websocket) never call it: their
// requests are consumed like every control type.
func (s *Session) Negotiate(dec *cot.StreamDecoder) {
	s.neg, s.dec = cot.NewNegotiator(s.d.cfg.ServerUID), dec
	if offer := s.neg.Offer(s.d.cfg.Now()); offer != nil {
		s.Sess.Send(broker.NewEnvelope(offer))
	}
}

// Handle deals with one result of the transport's decoder: the message is
// paced (msg.Size bytes; a transport counts at least 1 for any message it
// read), skipped bytes (msg.Junk) and malformed messages (a
// *cot.SyntaxError) are counted, and an event is answered (a ping, on this
// session only), negotiated, consumed (control types, protocol.md §5) or
// published. Any other error ends the connection: stop is true and reason
// says why (ReadErrorReason). A message with neither event nor <auth> (a
// TakControl alone) is paced and otherwise ignored.
//
// Handle runs for every inbound event: it allocates nothing of its own and
// takes no lock beyond the broker's. It is kept out of line so that a
// reader waiting for input keeps a small frame (architecture.md "Memory
// per connection").
//
//go:noinline
func (s *Session) Handle(msg *cot.Message, err error) (reason broker.Reason, stop bool) {
	cfg := &s.d.cfg
	if msg.Size > 0 {
		s.pace(msg.Size)
	}
	if msg.Junk > 0 {
		s.d.stats.junkBytes.Add(uint64(msg.Junk))
		s.d.warn.Debug("bytes skipped looking for the next protobuf frame", "session", s.Sess.ID(), "bytes", msg.Junk)
	}
	if err != nil {
		var se *cot.SyntaxError
		if errors.As(err, &se) {
			s.Malformed(se.Msg)
			return broker.ReasonNone, false
		}
		return s.ReadErrorReason(err), true
	}
	if msg.Auth != nil {
		s.Log().Debug("client sent <auth>", "username", logx.Clip(msg.Auth.Username), "uid", logx.Clip(msg.Auth.UID))
		return broker.ReasonNone, false
	}
	ev := msg.Event
	if ev == nil {
		return broker.ReasonNone, false
	}
	now := cfg.Now()
	switch {
	case cot.IsPing(ev.Type):
		// protocol.md §5: answer on this connection only.
		s.Sess.Send(broker.NewEnvelope(cot.NewPong(now)))
	case ev.Type == cot.TypeTakQuery && s.neg != nil:
		s.negotiate(ev, now)
	case cot.IsControl(ev.Type):
		// Consumed, never relayed (protocol.md §5).
	default:
		if err := cfg.Broker.Publish(ev, s.Sess); err != nil {
			s.refused(ev, err)
		}
	}
	return broker.ReasonNone, false
}

// negotiate answers a client's request for a protocol version.
func (s *Session) negotiate(ev *cot.Event, now time.Time) {
	reply, switchTo, ok := s.neg.Handle(ev, now)
	if !ok {
		return
	}
	env := broker.NewEnvelope(reply)
	env.SwitchFormat = switchTo
	if switchTo {
		// The client speaks protobuf from the byte after its request.
		s.dec.SetProtocol(cot.ProtocolV1)
		s.Log().Debug("client switched to TAK protocol v1")
	}
	s.Sess.Send(env)
}

// Malformed counts a malformed message the transport skipped (what is
// client data: it is clipped).
func (s *Session) Malformed(what string) {
	s.d.stats.syntax.Add(1)
	s.d.warn.Debug("malformed CoT message skipped", "session", s.Sess.ID(), "err", logx.Clip(what))
}

// pace charges one message of size bytes and waits, if the client is over
// its rate, until it is back within it or the session ends. A client over
// its rate is not cut off and nothing it sent is dropped: its reader simply
// stops reading, so the transport pushes back on that client alone and the
// relay never spends more on one connection than its share.
func (s *Session) pace(size int) {
	now := s.d.cfg.Now()
	wait := max(s.events.Debit(now, 1), s.bytes.Debit(now, float64(size)))
	if wait <= 0 {
		return
	}
	s.d.stats.paced.Add(1)
	if !s.loggedPace {
		s.loggedPace = true
		s.d.warn.Info("client sends faster than its rate; reading from it is paced (logged once per connection)",
			"session", s.Sess.ID(), "events_per_second", s.d.cfg.MaxEventsPerSecond, "bytes_per_second", s.d.cfg.MaxBytesPerSecond)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.Sess.Done():
	}
}

// refused counts an event the broker refused and logs it once per
// connection and kind (and at a bounded rate across connections).
func (s *Session) refused(ev *cot.Event, err error) {
	switch {
	case errors.Is(err, broker.ErrTooLarge):
		s.d.stats.oversize.Add(1)
		if !s.loggedOversize {
			s.loggedOversize = true
			s.d.warn.Warn("event refused: larger than what clients can receive (logged once per connection)",
				"session", s.Sess.ID(), "uid", logx.Clip(ev.UID), "type", logx.Clip(ev.Type), "err", err.Error())
		}
	case errors.Is(err, broker.ErrUIDTaken):
		s.d.stats.impostor.Add(1)
		if !s.loggedImpostor {
			s.loggedImpostor = true
			s.d.warn.Warn("position report refused: its uid belongs to another client (logged once per connection)",
				"session", s.Sess.ID(), "user", logx.Clip(s.Sess.Info().User), "uid", logx.Clip(ev.UID), "err", err.Error())
		}
	}
}

// Sendable returns frame, env's bytes in the connection's format (err: the
// encoding's error), or nil when they cannot be sent: the encoding failed,
// or they are larger than what clients can receive (the broker refuses such
// events at publish; this guards the server's own events and the protobuf
// encoding). Both are logged; an oversize frame is counted. It is called
// for every delivery and stays small enough to be inlined.
func (s *Session) Sendable(env *broker.Envelope, frame []byte, err error) []byte {
	if err == nil && len(frame) <= cot.MaxRelayedEvent {
		return frame
	}
	s.unsendable(env, len(frame), err)
	return nil
}

func (s *Session) unsendable(env *broker.Envelope, n int, err error) {
	if err != nil {
		s.Log().Debug("event cannot be encoded as protobuf; skipped", "uid", logx.Clip(env.Event.UID), "err", err)
		return
	}
	s.d.stats.oversize.Add(1)
	s.Log().Debug("event larger than 64 KiB not sent", "uid", logx.Clip(env.Event.UID), "bytes", n)
}
