package socketio

import (
	"log/slog"
	"time"

	"github.com/coder/websocket"
)

// closeGrace is how long a socket closed for a missed deadline may take
// to answer the close handshake before it is cut off: a client that
// ignores everything gives its place back within AuthTimeout plus this,
// not the websocket library's 5 s more.
const closeGrace = time.Second

// expire closes a socket that missed its connect or authentication
// deadline (run by the writer): the disconnect packet when it had
// connected to the namespace (socket.io-client then does not reconnect),
// then the websocket close with 1008 (policy violation) and reason. The
// log line is rate-limited and quotes nothing the client wrote. See
// socketio.md "Sockets that never authenticate".
func (s *Socket) expire(reason, msg string) {
	s.srv.limited.Log(slog.LevelInfo, msg, "remote", s.remote, "sid", s.id)
	s.closing.Store(true)
	s.setReason(reason)
	cut := time.AfterFunc(closeGrace, func() { s.cut(reason) })
	defer cut.Stop()
	if s.connected.Load() {
		s.write(encodeControl(sioDisconnect, "/", nil))
	}
	s.closeWith(websocket.StatusPolicyViolation, reason)
}
