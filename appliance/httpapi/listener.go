package httpapi

// The HTTP listener (architecture.md "The five listeners"): every HTTP port
// serves its handler through one of these, over a netx intake.

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"outpost/appliance/netx"
)

// Limits are the request limits of one HTTP listener.
type Limits struct {
	Idle        time.Duration // keep-alive idle time
	BodyTimeout time.Duration // longest silence while a body is read
	MaxBody     int64         // largest request body
	// ReadTimeout bounds reading a whole request (0: none), for a port whose
	// requests are small (enrollment).
	ReadTimeout time.Duration
	// ConnState is the server's hook on connection states (nil: none).
	ConnState func(net.Conn, http.ConnState)
}

// Listener serves an http.Handler on one port taken through netx (the
// shared connection limits and, on TLS ports, the bounded handshakes). Every
// request body must keep arriving (BodyTimeout between reads) and stay
// under MaxBody, so a client cannot hold a connection open by announcing a
// body it never sends.
type Listener struct {
	name string
	net  netx.Config
	srv  *http.Server
	ln   *netx.Listener
	log  *slog.Logger

	served bool // Serve was called (set before any Shutdown, same goroutine)
	done   chan struct{}
}

// NewListener builds the listener name on nc, serving h with its bodies
// bounded; nothing is bound until Listen.
func NewListener(name string, nc netx.Config, h http.Handler, lim Limits, log *slog.Logger) *Listener {
	if log == nil {
		log = slog.Default()
	}
	l := &Listener{name: name, net: nc, log: log.With("listener", name), done: make(chan struct{})}
	if l.net.Name == "" {
		l.net.Name = name
	}
	if l.net.Logger == nil {
		l.net.Logger = l.log
	}
	l.srv = &http.Server{
		Handler:           guardBodies(h, lim),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       lim.ReadTimeout,
		IdleTimeout:       lim.Idle,
		MaxHeaderBytes:    64 << 10,
		ConnState:         lim.ConnState,
		ErrorLog:          slog.NewLogLogger(l.log.Handler(), slog.LevelDebug),
	}
	return l
}

// guardBodies bounds every request body: a declared length over MaxBody is
// answered 413 at once; reading stops at MaxBody; and each read must bring
// data within BodyTimeout (a read deadline moved forward as data arrives).
// Requests without a body (websocket upgrades among them) get no deadline.
func guardBodies(next http.Handler, lim Limits) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > lim.MaxBody {
			w.Header().Set("Connection", "close")
			WriteMessage(w, http.StatusRequestEntityTooLarge, "request body larger than the limit")
			return
		}
		if r.Body != nil && r.Body != http.NoBody && lim.BodyTimeout > 0 {
			rc := http.NewResponseController(w)
			rc.SetReadDeadline(time.Now().Add(lim.BodyTimeout))
			r.Body = &idleBody{ReadCloser: http.MaxBytesReader(w, r.Body, lim.MaxBody), rc: rc, timeout: lim.BodyTimeout}
		}
		next.ServeHTTP(w, r)
	})
}

// idleBody moves the connection's read deadline forward each time body
// data arrives.
type idleBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.rc.SetReadDeadline(time.Now().Add(b.timeout))
	}
	return n, err
}

// Listen binds the port.
func (l *Listener) Listen() error {
	ln, err := netx.Listen(l.net)
	if err != nil {
		return err
	}
	l.ln = ln
	return nil
}

// Serve serves in the background until Shutdown.
func (l *Listener) Serve() {
	l.served = true
	go func() {
		defer close(l.done)
		if err := l.srv.Serve(l.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			l.log.Error("HTTP listener stopped", "err", err)
		}
	}()
}

// Addr is the bound address (nil before Listen).
func (l *Listener) Addr() net.Addr {
	if l.ln == nil {
		return nil
	}
	return l.ln.Addr()
}

// Shutdown stops accepting and lets requests in progress finish until ctx
// ends; then it closes what is left. Clients still busy at the end of the
// budget are not an error.
func (l *Listener) Shutdown(ctx context.Context) error {
	if !l.served {
		if l.ln != nil {
			return l.ln.Close()
		}
		return nil
	}
	if err := l.srv.Shutdown(ctx); err != nil {
		l.srv.Close()
		l.log.Info("HTTP requests still running at the end of the drain budget were closed")
	}
	<-l.done
	return nil
}

// Stats returns the listener's connection counters.
func (l *Listener) Stats() netx.Stats {
	if l.ln == nil {
		return netx.Stats{}
	}
	return l.ln.Stats()
}
