package cotsession

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
)

// ReadErrorReason is the close reason a failed read means. When the session
// is closed already, its reason stands (whoever closed it made the read
// fail). A transport maps the errors only it knows onto these first (the
// websocket's "message too big" is cot.ErrTooLarge, a close frame io.EOF):
//
//   - io.EOF: the client closed the connection: ReasonClientClosed;
//   - cot.ErrTooLarge: a message over the limit, logged: ReasonTooLarge;
//   - a timeout: the read deadline is the idle timeout: ReasonIdle;
//   - io.ErrUnexpectedEOF, ECONNRESET: the client went away mid-message or
//     without a TLS close_notify: ReasonClientClosed;
//   - anything else, logged at debug level: ReasonReadError.
func (s *Session) ReadErrorReason(err error) broker.Reason {
	if r := s.Sess.Reason(); r != broker.ReasonNone {
		return r
	}
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF):
		return broker.ReasonClientClosed
	case errors.Is(err, cot.ErrTooLarge):
		s.d.warn.Warn("client sent a message larger than the limit; disconnecting", "session", s.Sess.ID(), "limit", s.d.cfg.MaxMessage)
		return broker.ReasonTooLarge
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, os.ErrDeadlineExceeded):
		return broker.ReasonIdle
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return broker.ReasonClientClosed
	default:
		s.Log().Debug("read failed", "err", err)
		return broker.ReasonReadError
	}
}
