package identity

import (
	"context"
	"crypto/tls"
	"log/slog"
	"math/big"
	"sync/atomic"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/broker"
	"outpost/appliance/cotsession"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// accessPollInterval is how often the access generation is read for changes
// another process made.
const accessPollInterval = 2 * time.Second

// bindingQueue bounds the uid bindings waiting to be written.
const bindingQueue = 1024

// Accounts is what the keeper uses of the store.
type Accounts interface {
	UIDBindings(ctx context.Context) ([]store.Binding, error)
	BindUIDs(ctx context.Context, bs []store.Binding) error
	AccessGeneration(ctx context.Context) (int64, error)
}

// Options configure a Keeper.
type Options struct {
	Directory *access.Directory
	Accounts  Accounts
	// Identify returns a TLS client certificate's common name and serial
	// (pki.Authority.Identity).
	Identify func(tls.ConnectionState) (name string, serial *big.Int, ok bool)
	Logger   *slog.Logger
}

// Keeper keeps the identities of CoT connections. Its Run goroutine writes
// the uid bindings and watches the access generation; Attach gives it the
// broker once that exists (the broker is built with the bindings Load
// read).
type Keeper struct {
	opts     Options
	log      *slog.Logger
	limited  *logx.Limiter // what a client can cause at will
	cache    cache
	bindings chan store.Binding
	broker   atomic.Pointer[broker.Broker]
}

// New returns a keeper; nothing runs until Run.
func New(o Options) *Keeper {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	k := &Keeper{opts: o, log: o.Logger, bindings: make(chan store.Binding, bindingQueue),
		limited: logx.NewLimiter(o.Logger.With("component", "access"), 10, time.Minute)}
	k.cache.dir = o.Directory
	return k
}

// Load reads the uid bindings kept from earlier runs (uid → identity), for
// the broker's Options.Bindings.
func (k *Keeper) Load(ctx context.Context) (map[string]string, error) {
	kept, err := k.opts.Accounts.UIDBindings(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(kept))
	for _, b := range kept {
		out[b.UID] = b.Identity
	}
	return out, nil
}

// Attach gives the keeper the broker whose sessions it regroups.
func (k *Keeper) Attach(b *broker.Broker) { k.broker.Store(b) }

// IdentifyCoT is the CoT TLS listener's Identify: the certificate's user
// (or certificate principal) and its groups.
func (k *Keeper) IdentifyCoT(cs tls.ConnectionState) cotsession.Identity {
	name, serial, ok := k.opts.Identify(cs)
	if !ok {
		return cotsession.Identity{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := k.cache.principal(ctx, name)
	if err != nil {
		// No lookup, no groups: the connection sees nothing rather than
		// more than it should.
		k.limited.Warn("the groups of a certificate could not be read; its connection sees nothing", "user", logx.Clip(name), "err", err)
		return cotsession.Identity{User: name, Serial: serial, Grouped: true}
	}
	return cotsession.Identity{User: name, Serial: serial, In: p.In, Out: p.Out, Grouped: true}
}

// Bound is the broker's Options.Bound: a new uid binding is queued to be
// kept; it never blocks the relay (a full queue keeps the binding for this
// run only, and says so).
func (k *Keeper) Bound(uid, identity string) {
	select {
	case k.bindings <- store.Binding{UID: uid, Identity: identity, At: time.Now()}:
	default:
		k.limited.Warn("a uid binding is kept for this run only: too many at once", "uid", logx.Clip(uid), "user", logx.Clip(identity))
	}
}

// Changed is the users service's Changed: the user's open connections
// take its role and groups as they are now, at once.
func (k *Keeper) Changed(name string) {
	k.cache.forget()
	k.regroup(name)
}

// regroup gives the open CoT connections of identity name its groups as
// they are now (and, for a deleted user, its uids go free).
func (k *Keeper) regroup(name string) {
	b := k.broker.Load()
	if b == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := k.opts.Directory.ByName(ctx, name, nil)
	if err != nil {
		k.log.Error("the groups of a changed user could not be read; its connections keep their groups until they reconnect",
			"user", logx.Clip(name), "err", err)
		return
	}
	if p.Kind != access.SystemUser {
		b.Unbind(name) // deleted: its uids go free with its bindings
	}
	if n := b.SetGroups(name, p.In, p.Out); n > 0 {
		k.log.Info("a user's open connections took its new groups", "user", logx.Clip(name), "connections", n)
	}
}
