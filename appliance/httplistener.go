package appliance

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"outpost/appliance/httpapi"
	"outpost/appliance/netx"
)

// listener is the contract every listener meets (architecture.md "The five
// listeners"): Listen binds synchronously, Serve runs in the background,
// Shutdown is idempotent.
type listener interface {
	Listen() error
	Serve()
	Addr() net.Addr
	Shutdown(ctx context.Context) error
}

// httpListener serves an http.Handler on one port taken through netx (the
// shared connection limits and, on TLS ports, the bounded handshakes). Every
// request body must keep arriving (httpBodyTimeout between reads) and stay
// under maxBody, so a client cannot hold a connection open by announcing a
// body it never sends.
type httpListener struct {
	name string
	net  netx.Config
	srv  *http.Server
	ln   *netx.Listener
	log  *slog.Logger

	served bool // Serve was called (set before any Shutdown, same goroutine)
	done   chan struct{}
}

// httpLimits are the request limits of one HTTP listener.
type httpLimits struct {
	idle        time.Duration // keep-alive idle time
	bodyTimeout time.Duration // longest silence while a body is read
	maxBody     int64         // largest request body
}

// newHTTPListener builds an HTTP listener whose handler is bounded
// (guardBodies) and instrumented (httpMetrics).
func (a *Appliance) newHTTPListener(name string, nc netx.Config, h http.Handler, lim httpLimits) *httpListener {
	l := &httpListener{name: name, net: nc, log: a.log.With("listener", name), done: make(chan struct{})}
	if l.net.Name == "" {
		l.net.Name = name
	}
	if l.net.Logger == nil {
		l.net.Logger = l.log
	}
	l.srv = &http.Server{
		Handler:           a.httpMetrics.wrap(name, guardBodies(h, lim)),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       lim.idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(l.log.Handler(), slog.LevelDebug),
	}
	return l
}

// guardBodies bounds every request body: a declared length over maxBody is
// answered 413 at once; reading stops at maxBody; and each read must bring
// data within bodyTimeout (a read deadline moved forward as data arrives).
// Requests without a body (websocket upgrades among them) get no deadline.
func guardBodies(next http.Handler, lim httpLimits) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > lim.maxBody {
			w.Header().Set("Connection", "close")
			httpapi.WriteMessage(w, http.StatusRequestEntityTooLarge, "request body larger than the limit")
			return
		}
		if r.Body != nil && r.Body != http.NoBody && lim.bodyTimeout > 0 {
			rc := http.NewResponseController(w)
			rc.SetReadDeadline(time.Now().Add(lim.bodyTimeout))
			r.Body = &idleBody{ReadCloser: http.MaxBytesReader(w, r.Body, lim.maxBody), rc: rc, timeout: lim.bodyTimeout}
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

func (l *httpListener) Listen() error {
	ln, err := netx.Listen(l.net)
	if err != nil {
		return err
	}
	l.ln = ln
	return nil
}

func (l *httpListener) Serve() {
	l.served = true
	go func() {
		defer close(l.done)
		if err := l.srv.Serve(l.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			l.log.Error("HTTP listener stopped", "err", err)
		}
	}()
}

func (l *httpListener) Addr() net.Addr {
	if l.ln == nil {
		return nil
	}
	return l.ln.Addr()
}

// Shutdown stops accepting and lets requests in progress finish until ctx
// ends; then it closes what is left. Clients still busy at the end of the
// budget are not an error.
func (l *httpListener) Shutdown(ctx context.Context) error {
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
func (l *httpListener) Stats() netx.Stats {
	if l.ln == nil {
		return netx.Stats{}
	}
	return l.ln.Stats()
}
