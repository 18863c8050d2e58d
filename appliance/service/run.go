package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"time"
)

// Name is the service's name: the systemd unit outpost.service, the
// Windows service and the Event Log source "outpost".
const Name = "outpost"

// Daemon is the server as Run sees it. cmd/outpost fills it from an
// appliance.Appliance.
type Daemon struct {
	// Open opens the data and binds every listener; it returns once all
	// are bound and serving (or with the first error, having closed what
	// it opened).
	Open func(ctx context.Context) error
	// Close shuts down in order within ctx's deadline.
	Close func(ctx context.Context) error
	// Healthy is a cheap check (store answers, broker running) that gates
	// the systemd watchdog pings. Nil counts as healthy.
	Healthy func(ctx context.Context) error
	// ShutdownTimeout is the deadline given to Close.
	ShutdownTimeout time.Duration
	// MemoryLimit, when above zero, is applied with debug.SetMemoryLimit
	// before Open: the garbage collector works harder as the heap nears
	// it. Zero leaves the Go runtime's own setting (GOMEMLIMIT, or none).
	MemoryLimit int64
	// GCPercent, when above zero, is applied with debug.SetGCPercent before
	// Open, unless the environment sets GOGC (an operator's explicit
	// choice wins). Zero leaves the Go runtime's setting.
	GCPercent int
	// IdleMemoryReturn, when above zero, is how long the server must stay
	// quiet before the free heap a burst left behind is returned to the
	// system (reclaim.go). Zero never returns it early.
	IdleMemoryReturn time.Duration
	// Log receives the lifecycle lines (default slog.Default()).
	Log *slog.Logger

	reclaim *reclaimer // running between open and close
}

// ErrStart wraps an error of Daemon.Open: the server never ran.
var ErrStart = errors.New("could not start")

// ErrShutdown wraps an error of Daemon.Close: the shutdown was not clean.
var ErrShutdown = errors.New("shutdown was not clean")

// SignalContext returns a context cancelled by SIGINT or SIGTERM (on
// Windows, Ctrl-C arrives as os.Interrupt and closing the console as
// SIGTERM).
func SignalContext(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}

func (d *Daemon) logger() *slog.Logger {
	if d.Log == nil {
		return slog.Default()
	}
	return d.Log
}

// applyMemoryLimit sets the soft memory limit of the Go runtime and
// returns the limit in effect afterwards.
func (d *Daemon) applyMemoryLimit() int64 {
	if d.MemoryLimit > 0 {
		debug.SetMemoryLimit(d.MemoryLimit)
	}
	return debug.SetMemoryLimit(-1) // -1 reads the current limit
}

// applyGCPercent sets the garbage collector's target and returns the one
// in effect afterwards.
func (d *Daemon) applyGCPercent() int {
	if _, set := os.LookupEnv("GOGC"); d.GCPercent > 0 && !set {
		debug.SetGCPercent(d.GCPercent)
	}
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// open applies the memory settings and opens the appliance.
func (d *Daemon) open(ctx context.Context) error {
	d.logger().Info("garbage collector target", "gc_percent", d.applyGCPercent())
	limit := d.applyMemoryLimit()
	if limit == math.MaxInt64 {
		d.logger().Info("no memory limit set; the heap may grow as the load requires")
	} else {
		d.logger().Info("memory limit applied", "bytes", limit, "mib", limit>>20)
	}
	if err := d.Open(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrStart, err)
	}
	if d.IdleMemoryReturn > 0 {
		d.reclaim = startReclaimer(d.IdleMemoryReturn, d.logger())
	}
	return nil
}

// close runs Daemon.Close with the shutdown deadline.
func (d *Daemon) close() error {
	timeout := d.ShutdownTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if d.reclaim != nil {
		d.reclaim.close()
		d.reclaim = nil
	}
	if err := d.Close(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrShutdown, err)
	}
	return nil
}

// runForeground runs the daemon until ctx ends or SIGINT/SIGTERM arrives,
// speaking systemd's notify protocol when systemd started it.
func runForeground(ctx context.Context, d Daemon) error {
	ctx, stop := SignalContext(ctx)
	defer stop()
	log := d.logger()
	if err := d.open(ctx); err != nil {
		return err
	}
	if err := Ready(); err != nil {
		log.Warn("could not tell systemd we are ready", "err", err)
	}
	wctx, stopWatchdog := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Watchdog(wctx, d.Healthy, log)
	}()
	<-ctx.Done()
	stopWatchdog()
	<-done
	log.Info("shutdown requested")
	if err := Stopping(); err != nil {
		log.Warn("could not tell systemd we are stopping", "err", err)
	}
	return d.close()
}
