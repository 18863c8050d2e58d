package appliance

// Who may see and do what, composed (access.md): the directory every
// listener resolves its callers with, the password guard, the users service,
// the uid bindings kept across restarts, and the upkeep that makes a change
// of roles or groups, made here or by another process (the command line),
// reach the connections already open.

import (
	"context"
	"crypto/tls"
	"sync"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/cotsession"
	"outpost/appliance/logx"
	"outpost/appliance/store"
	"outpost/appliance/users"
)

// accessPollInterval is how often the access generation is read for changes
// another process made.
const accessPollInterval = 2 * time.Second

// bindingQueue bounds the uid bindings waiting to be written.
const bindingQueue = 1024

// identities resolves the certificate identities of CoT connections, cached
// by name until the next change of who may see what: a connect storm of one
// user's devices costs one lookup, not one per connection.
type identities struct {
	dir *access.Directory

	mu  sync.Mutex // mu guards gen and m
	gen int64      // counts forget calls: a lookup begun before one is not kept
	m   map[string]access.Principal
}

// principal is the principal of the certificate identity name (cached).
func (c *identities) principal(ctx context.Context, name string) (access.Principal, error) {
	c.mu.Lock()
	p, ok := c.m[name]
	gen := c.gen
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := c.dir.ByName(ctx, name, nil)
	if err != nil {
		return p, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return p, nil // a change came meanwhile: use the answer, do not keep it
	}
	if c.m == nil || len(c.m) > 4096 {
		c.m = map[string]access.Principal{}
	}
	c.m[name] = p
	return p, nil
}

// forget drops what was cached, and what lookups under way would keep.
func (c *identities) forget() {
	c.mu.Lock()
	c.m = nil
	c.gen++
	c.mu.Unlock()
}

// openAccess builds the parts of access that need the store, and loads the
// uid bindings kept from earlier runs (before the broker is built).
func (a *Appliance) openAccess(ctx context.Context) (map[string]string, error) {
	acc := a.store.Accounts()
	if n, err := acc.AdoptGroupFields(ctx); err != nil {
		return nil, err
	} else if n > 0 {
		a.log.Info("users' group fields became group memberships (access.md \"Groups\")", "users", n)
	}
	a.directory = &access.Directory{Accounts: acc, Identify: a.pki.Identity}
	a.idCache = &identities{dir: a.directory}
	a.guard = access.NewGuard(access.GuardOptions{Total: float64(a.cfg.PasswordChecksPerSecond)})
	a.users = users.New(users.Options{Accounts: acc, Files: a.store.Files(), Authority: a.pki,
		Changed: a.accessChanged, Logger: a.log})
	kept, err := acc.UIDBindings(ctx)
	if err != nil {
		return nil, err
	}
	bindings := make(map[string]string, len(kept))
	for _, b := range kept {
		bindings[b.UID] = b.Identity
	}
	a.bindings = make(chan store.Binding, bindingQueue)
	a.accessLog = logx.NewLimiter(a.log.With("component", "access"), 10, time.Minute)
	return bindings, nil
}

// identifyCoT is the CoT TLS listener's Identify: the certificate's user
// (or certificate principal) and its groups.
func (a *Appliance) identifyCoT(cs tls.ConnectionState) cotsession.Identity {
	name, serial, ok := a.pki.Identity(cs)
	if !ok {
		return cotsession.Identity{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := a.idCache.principal(ctx, name)
	if err != nil {
		// No lookup, no groups: the connection sees nothing rather than
		// more than it should.
		a.accessLog.Warn("the groups of a certificate could not be read; its connection sees nothing", "user", logx.Clip(name), "err", err)
		return cotsession.Identity{User: name, Serial: serial, Grouped: true}
	}
	return cotsession.Identity{User: name, Serial: serial, In: p.In, Out: p.Out, Grouped: true}
}

// bound is the broker's Options.Bound: a new uid binding is queued to be
// kept; it never blocks the relay (a full queue keeps the binding for this
// run only, and says so).
func (a *Appliance) bound(uid, identity string) {
	select {
	case a.bindings <- store.Binding{UID: uid, Identity: identity, At: time.Now()}:
	default:
		a.accessLog.Warn("a uid binding is kept for this run only: too many at once", "uid", logx.Clip(uid), "user", logx.Clip(identity))
	}
}

// keepBindings writes queued uid bindings until ctx ends, then what is left.
func (a *Appliance) keepBindings(ctx context.Context) {
	write := func(batch []store.Binding) {
		if len(batch) == 0 {
			return
		}
		wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.store.Accounts().BindUIDs(wctx, batch); err != nil {
			a.log.Error("uid bindings could not be kept; they hold for this run", "bindings", len(batch), "err", err)
		}
	}
	var batch []store.Binding
	for {
		select {
		case b := <-a.bindings:
			batch = append(batch[:0], b)
		more:
			for len(batch) < 256 {
				select {
				case b := <-a.bindings:
					batch = append(batch, b)
				default:
					break more
				}
			}
			write(batch)
		case <-ctx.Done():
			batch = batch[:0]
			for len(a.bindings) > 0 {
				batch = append(batch, <-a.bindings)
			}
			write(batch)
			return
		}
	}
}

// accessChanged is the users service's Changed: the user's open
// connections take its role and groups as they are now, at once.
func (a *Appliance) accessChanged(name string) {
	a.idCache.forget()
	a.regroup(name)
}

// regroup gives the open CoT connections of identity name its groups as
// they are now (and, for a deleted user, its uids go free).
func (a *Appliance) regroup(name string) {
	if a.broker == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := a.directory.ByName(ctx, name, nil)
	if err != nil {
		a.log.Error("the groups of a changed user could not be read; its connections keep their groups until they reconnect",
			"user", logx.Clip(name), "err", err)
		return
	}
	if p.Kind != access.SystemUser {
		a.broker.Unbind(name) // deleted: its uids go free with its bindings
	}
	if n := a.broker.SetGroups(name, p.In, p.Out); n > 0 {
		a.log.Info("a user's open connections took its new groups", "user", logx.Clip(name), "connections", n)
	}
}

// watchAccess re-reads the access generation every accessPollInterval and,
// when another process changed who may see what, regroups every identified
// connection.
func (a *Appliance) watchAccess(ctx context.Context) {
	t := time.NewTicker(accessPollInterval)
	defer t.Stop()
	last, err := a.store.Accounts().AccessGeneration(ctx)
	if err != nil && ctx.Err() == nil {
		a.log.Error("the access generation could not be read", "err", err)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		gen, err := a.store.Accounts().AccessGeneration(ctx)
		if err != nil {
			if ctx.Err() == nil {
				a.accessLog.Warn("the access generation could not be read", "err", err)
			}
			continue
		}
		if gen == last {
			continue
		}
		last = gen
		a.idCache.forget()
		seen := map[string]bool{}
		for _, s := range a.broker.Sessions() {
			if u := s.Info().User; u != "" && !seen[u] {
				seen[u] = true
				a.regroup(u)
			}
		}
	}
}
