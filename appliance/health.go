package appliance

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// healthStoreTimeout bounds the store ping of Healthy.
const healthStoreTimeout = time.Second

// Healthy is the cheap liveness check behind the systemd watchdog: the
// broker is running and the store answers a read within a second.
func (a *Appliance) Healthy(ctx context.Context) error {
	if !a.opened.Load() {
		return errors.New("not started")
	}
	if a.broker == nil || a.broker.Closed() {
		return errors.New("broker is closed")
	}
	ctx, cancel := context.WithTimeout(ctx, healthStoreTimeout)
	defer cancel()
	if err := a.store.Ping(ctx); err != nil {
		return fmt.Errorf("store does not answer: %w", err)
	}
	return nil
}
