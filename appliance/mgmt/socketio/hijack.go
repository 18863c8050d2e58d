package socketio

import (
	"bufio"
	"net"
	"net/http"
)

// hijackRecorder hands websocket.Accept the response writer and remembers
// the connection Accept takes over. A socket cut off (Socket.cut) closes
// that connection itself: the websocket library's own CloseNow waits for
// a close handshake already under way, up to its 5 s timeout, when the
// client never answers it.
type hijackRecorder struct {
	http.ResponseWriter
	conn net.Conn
}

func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	h.conn = c
	return c, brw, err
}

// Unwrap lets http.ResponseController reach the server's writer.
func (h *hijackRecorder) Unwrap() http.ResponseWriter { return h.ResponseWriter }
