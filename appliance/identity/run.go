package identity

import (
	"context"
	"sync"
	"time"

	"outpost/appliance/store"
)

// lastWrite bounds the write of the bindings still queued when Run ends.
const lastWrite = 10 * time.Second

// Run writes queued uid bindings and, every accessPollInterval, re-reads
// the access generation, until ctx ends; then it writes the bindings still
// queued (within lastWrite) and returns. The appliance runs it once, and
// waits for it before the store closes.
func (k *Keeper) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); k.watchAccess(ctx) }()
	k.keepBindings(ctx)
	wg.Wait()
}

// keepBindings writes queued uid bindings until ctx ends, then what is left.
func (k *Keeper) keepBindings(ctx context.Context) {
	write := func(wctx context.Context, batch []store.Binding) {
		if len(batch) == 0 {
			return
		}
		wctx, cancel := context.WithTimeout(wctx, lastWrite)
		defer cancel()
		if err := k.opts.Accounts.BindUIDs(wctx, batch); err != nil {
			k.log.Error("uid bindings could not be kept; they hold for this run", "bindings", len(batch), "err", err)
		}
	}
	var batch []store.Binding
	for {
		select {
		case b := <-k.bindings:
			batch = append(batch[:0], b)
		more:
			for len(batch) < 256 {
				select {
				case b := <-k.bindings:
					batch = append(batch, b)
				default:
					break more
				}
			}
			write(context.WithoutCancel(ctx), batch)
		case <-ctx.Done():
			batch = batch[:0]
			for len(k.bindings) > 0 {
				batch = append(batch, <-k.bindings)
			}
			write(context.WithoutCancel(ctx), batch)
			return
		}
	}
}

// watchAccess re-reads the access generation every accessPollInterval and,
// when another process changed who may see what, regroups every identified
// connection.
func (k *Keeper) watchAccess(ctx context.Context) {
	t := time.NewTicker(accessPollInterval)
	defer t.Stop()
	last, err := k.opts.Accounts.AccessGeneration(ctx)
	if err != nil && ctx.Err() == nil {
		k.log.Error("the access generation could not be read", "err", err)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		gen, err := k.opts.Accounts.AccessGeneration(ctx)
		if err != nil {
			if ctx.Err() == nil {
				k.limited.Warn("the access generation could not be read", "err", err)
			}
			continue
		}
		if gen == last {
			continue
		}
		last = gen
		k.cache.forget()
		b := k.broker.Load()
		if b == nil {
			continue
		}
		seen := map[string]bool{}
		for _, s := range b.Sessions() {
			if u := s.Info().User; u != "" && !seen[u] {
				seen[u] = true
				k.regroup(u)
			}
		}
	}
}
