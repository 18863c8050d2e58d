package appliance

// Closing the appliance, in the documented order (architecture.md
// "Shutdown order").

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Close shuts down in the documented order (architecture.md "Shutdown
// order"): the broker drains (no departures), the listeners stop and their
// clients get the first half of ctx's time to receive what is queued, then
// the broker stops, the workers write what they hold, the CoT history is
// flushed and the store closed in the rest. A client that does not drain in
// time is closed, not an error. It returns every error met (joined),
// carrying on after each. Idempotent: a second call returns the first
// call's result.
func (a *Appliance) Close(ctx context.Context) error {
	a.closeOnce.Do(func() { a.closeErr = a.shutdown(ctx) })
	return a.closeErr
}

func (a *Appliance) shutdown(ctx context.Context) error {
	start := time.Now()
	a.log.Info("shutting down")
	var errs []error
	if a.stopRevokes != nil {
		a.stopRevokes()
	}
	// Two budgets (RELIABILITY.md "Shutdown"): clients get the first half of
	// the time to receive what is queued for them; the workers, the history
	// flush and the store close get the rest, so one stalled client can
	// never cost the history or turn the exit into a failure.
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = start.Add(a.cfg.ShutdownTimeout)
	}
	drainCtx, cancelDrain := context.WithDeadline(ctx, start.Add(deadline.Sub(start)/2))
	defer cancelDrain()
	if err := a.life.stop(drainCtx, stageWatch); err != nil {
		errs = append(errs, err)
	}
	if a.broker != nil {
		a.broker.Drain() // no departures from here on: everyone is leaving
	}
	errs = append(errs, a.stopListeners(drainCtx)...)
	cancelDrain()
	if a.broker != nil {
		a.broker.Close()
	}
	if a.mgmt != nil {
		a.mgmt.Close() // the basemap file
	}
	// The workers' last writes (the uid bindings still queued, the alerts
	// still to record) go in before the store closes.
	if err := a.life.stop(ctx, stageWorkers); err != nil {
		errs = append(errs, err)
	}
	if a.history != nil {
		if err := a.history.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("flush CoT history: %w", err))
		}
	}
	if a.store != nil {
		if err := a.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close store: %w", err))
		}
	}
	err := errors.Join(errs...)
	a.log.Info("shut down", "took", time.Since(start).Round(time.Millisecond), "err", err)
	return err
}

// stopListeners shuts every listener down in parallel within ctx, after
// the websockets the HTTP servers do not close themselves.
func (a *Appliance) stopListeners(ctx context.Context) []error {
	if a.channel != nil {
		// http.Server.Shutdown does not close websockets: the channel does.
		if err := a.channel.Shutdown(ctx); err != nil {
			a.log.Info("socket.io sessions still open at the end of the drain budget were closed", "err", err)
		}
	}
	if a.marti != nil {
		// Nor CoT websockets: the client API ends them, letting each
		// receive what is queued until the drain budget ends.
		a.marti.Shutdown(ctx)
	}
	var errs []error
	var wg sync.WaitGroup
	var mu sync.Mutex // mu guards errs
	for _, name := range a.names {
		l := a.listeners[name] // bound or not: each Shutdown ends what it started
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Shutdown(ctx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errs
}
