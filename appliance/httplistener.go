package appliance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
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

// httpListener serves an http.Handler on one address, optionally through a
// wrapper that performs TLS handshakes (pki.NewHandshakeListener).
type httpListener struct {
	name string
	addr string
	wrap func(net.Listener) net.Listener
	srv  *http.Server
	ln   net.Listener
	log  *slog.Logger

	served bool // Serve was called (set before any Shutdown, same goroutine)
	done   chan struct{}
}

func newHTTPListener(name, addr string, h http.Handler, idle time.Duration, wrap func(net.Listener) net.Listener, log *slog.Logger) *httpListener {
	l := &httpListener{name: name, addr: addr, wrap: wrap, log: log.With("listener", name), done: make(chan struct{})}
	l.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(l.log.Handler(), slog.LevelDebug),
	}
	return l
}

func (l *httpListener) Listen() error {
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		return fmt.Errorf("%s: listen on %s: %w", l.name, l.addr, err)
	}
	if l.wrap != nil {
		ln = l.wrap(ln)
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

func (l *httpListener) Shutdown(ctx context.Context) error {
	if !l.served {
		if l.ln != nil {
			return l.ln.Close()
		}
		return nil
	}
	err := l.srv.Shutdown(ctx)
	if err != nil {
		l.srv.Close()
	}
	<-l.done
	return err
}
