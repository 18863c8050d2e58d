package appliance

// The goroutines the appliance starts (architecture.md "The root
// composes"): every goroutine it starts outside a listener runs in a stage,
// and Close stops the stages in order (close.go), waiting for each
// goroutine of a stage before going on.

import (
	"context"
	"fmt"
	"sync"
)

// stage is a group of goroutines stopped together.
type stage int

const (
	// stageWatch: watching the revocation list, which cuts connections
	// off; stopped first.
	stageWatch stage = iota
	// stageWorkers: the upkeep that writes to the store (uid bindings,
	// managed federates, audit pruning, stale objects and emergencies);
	// stopped once no listener serves, and waited for before the history
	// is flushed and the store closed.
	stageWorkers
	stages
)

// lifecycle owns the appliance's goroutines by stage.
type lifecycle struct {
	mu      sync.Mutex // mu guards ctx, cancel and stopped
	ctx     [stages]context.Context
	cancel  [stages]context.CancelFunc
	stopped [stages]bool
	wg      [stages]sync.WaitGroup
}

// spawn runs f in its own goroutine in stage s, with a context that ends
// when the stage stops. After the stage stopped it runs nothing.
func (l *lifecycle) spawn(s stage, f func(ctx context.Context)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped[s] {
		return
	}
	if l.ctx[s] == nil {
		l.ctx[s], l.cancel[s] = context.WithCancel(context.Background())
	}
	ctx := l.ctx[s]
	l.wg[s].Add(1)
	go func() {
		defer l.wg[s].Done()
		f(ctx)
	}()
}

// stop ends stage s and waits for its goroutines until ctx ends (an error
// then: a goroutine that does not end in time is a fault of ours).
func (l *lifecycle) stop(ctx context.Context, s stage) error {
	l.mu.Lock()
	l.stopped[s] = true
	if l.cancel[s] != nil {
		l.cancel[s]()
	}
	l.mu.Unlock()
	done := make(chan struct{})
	go func() { l.wg[s].Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stage %d: goroutines still running at the end of the shutdown budget", s)
	}
}
