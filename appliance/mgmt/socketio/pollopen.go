package socketio

import (
	"net/http"
	"net/url"
	"path"
	"strings"
)

// openPolling answers a polling handshake with the open packet (offering
// the websocket upgrade) and runs the new socket until it ends, holding
// its slot; its requests find it by sid (polling.go).
func (srv *Server) openPolling(w http.ResponseWriter, r *http.Request, sl *slot) {
	s := newSocket(srv, nil, nil, r, sl)
	s.poll = newPollState(srv.opts.QueueLen)
	if !srv.register(s) {
		srv.release(sl)
		handshakeError(w, http.StatusServiceUnavailable, 3, "Too many connections")
		return
	}
	go func() {
		s.servePolling()
		srv.leave(s, sl)
	}()
	w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
	w.Write(s.openPacket())
}

// allowOrigin sets the CORS headers of a polling request from a browser
// page of another origin (the FreeTAKServer web UI is one): any origin
// without OriginPatterns, as for the websocket, since the channel
// authenticates in band and never with cookies; with them, the origins
// whose host matches one. It reports whether the origin is allowed.
func (srv *Server) allowOrigin(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true // not a browser's cross-origin request
	}
	if len(srv.opts.OriginPatterns) == 0 {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Host)
	for _, p := range srv.opts.OriginPatterns {
		if ok, _ := path.Match(strings.ToLower(p), host); ok {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Add("Vary", "Origin")
			return true
		}
	}
	return false
}
