package appliance

// Opening the appliance: the data, the relay, federation, the listeners,
// then the workers (architecture.md "The root composes").

import (
	"context"
	"fmt"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/admin"
	"outpost/appliance/broker"
	"outpost/appliance/config"
	"outpost/appliance/diskspace"
	"outpost/appliance/fedhost"
	"outpost/appliance/geo"
	"outpost/appliance/identity"
	"outpost/appliance/logx"
	"outpost/appliance/objects"
	"outpost/appliance/store"
	"outpost/appliance/users"
)

// crlPollInterval is how often the revocation list file is checked for
// changes made by another process (outpost cert revoke).
const crlPollInterval = 2 * time.Second

// Open checks the configuration, opens the data (creating it on first run),
// binds every enabled listener and starts serving; when it returns nil,
// every listener is bound and serving (Addrs tells where). On error
// everything already opened is closed again, through the same path as
// Close, and the appliance cannot be opened again.
func (a *Appliance) Open(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			a.Close(cctx)
		}
	}()
	if err := a.openData(ctx); err != nil {
		return err
	}
	if err := a.openRelay(ctx); err != nil {
		return err
	}
	if a.fed, err = fedhost.New(fedhost.Options{Config: &a.cfg, Authority: a.pki, Store: a.store, Broker: a.broker, Logger: a.log}); err != nil {
		return err
	}
	if err := a.buildListeners(ctx); err != nil {
		return err
	}
	for _, name := range a.names {
		if err := a.listeners[name].Listen(); err != nil {
			return err
		}
	}
	a.publishBoundPorts()
	for _, name := range a.names {
		l := a.listeners[name]
		l.Serve()
		if addr := l.Addr(); addr != nil { // federation's listener may open later (docs/federation.md)
			a.log.Info("listening", "listener", name, "addr", addr.String())
		}
	}
	a.startWorkers()
	a.opened.Store(true)
	a.log.Info("Outpost is ready", "version", Version(), "data_dir", a.cfg.DataDir, "public_host", a.cfg.PublicHost)
	admin.Welcome(ctx, a.log, &a.cfg, a.boundPort, a.store.Accounts())
	return nil
}

// openData checks the configuration and opens the data directory, the
// store and its history writer, the certificate authority and access.
func (a *Appliance) openData(ctx context.Context) (err error) {
	cfg := &a.cfg
	if err := cfg.Validate(); err != nil {
		return err
	}
	if a.allowedCLI, err = config.ParseAllowList(cfg.AllowedCLIIPs); err != nil {
		return fmt.Errorf("config AllowedCLIIPs: %w", err)
	}
	if err := admin.PrepareData(cfg, a.log); err != nil {
		return err
	}
	// The disk reserve (operations.md "Free disk space"): uploads, the CoT history
	// and, below the floor, every write that grows the database ask it.
	a.space = diskspace.New(cfg.DataDir, diskspace.Options{Reserve: cfg.DiskReserve, Floor: cfg.DiskFloor, Logger: a.log})
	a.store, err = store.Open(ctx, cfg.DBPath(), store.Options{Logger: a.log, MaxBlobSize: cfg.MaxUploadBytes,
		PasswordChecksPerSecond: float64(cfg.PasswordChecksPerSecond), Budgets: admin.Budgets(cfg), Space: a.space})
	if err != nil {
		return err
	}
	if err := admin.EnsureAdminToken(ctx, cfg, a.store.Accounts(), a.log); err != nil {
		return err
	}
	a.history = a.store.StartHistory(store.HistoryOptions{
		Retention: cfg.HistoryRetention, MaxBytes: int64(cfg.HistoryMaxBytes),
		ClientRate: float64(cfg.HistoryClientRate), ClientBytes: int64(cfg.HistoryClientBytes),
		TotalRate: float64(cfg.HistoryTotalRate), TotalBytes: int64(cfg.HistoryTotalBytes),
		Paused: a.space.BelowReserve,
	})
	a.store.Missions().MissionSubscribers("") // loads the subscriber lists now, not on the relay's first mission event
	a.historyLog = logx.NewLimiter(a.log.With("component", "cot-history"), 10, 10*time.Second)
	if a.pki, err = admin.OpenAuthority(cfg, a.log); err != nil {
		return err
	}
	acc := a.store.Accounts()
	if n, err := acc.AdoptGroupFields(ctx); err != nil {
		return err
	} else if n > 0 {
		a.log.Info("users' group fields became group memberships (access.md \"Groups\")", "users", n)
	}
	a.directory = &access.Directory{Accounts: acc, Identify: a.pki.Identity}
	a.guard = access.NewGuard(access.GuardOptions{Total: float64(cfg.PasswordChecksPerSecond)})
	a.ids = identity.New(identity.Options{Directory: a.directory, Accounts: acc, Identify: a.pki.Identity, Logger: a.log})
	a.users = users.New(users.Options{Accounts: acc, Files: a.store.Files(), Authority: a.pki,
		Changed: a.ids.Changed, Logger: a.log})
	return nil
}

// openRelay builds the broker (with the uid bindings kept from earlier
// runs) and the server's own objects, restored for replay.
func (a *Appliance) openRelay(ctx context.Context) error {
	cfg := &a.cfg
	bindings, err := a.ids.Load(ctx)
	if err != nil {
		return err
	}
	a.broker = broker.New(broker.Options{
		Bindings:  bindings,
		Bound:     a.ids.Bound,
		SoftBytes: cfg.QueueSoftBytes,
		HardBytes: cfg.QueueHardBytes,
		Observer:  a.observe,
		Logger:    a.log,
		// <dest mission> resolves from memory (the store keeps each
		// mission's subscribers; no SQL per event).
		MissionSubscribers: a.store.Missions().MissionSubscribers,
		ClientsChanged: func() {
			if a.channel != nil {
				a.channel.NotifyClientsChanged()
			}
			if a.mgmt != nil {
				a.mgmt.NotifyClientsChanged() // certificate packages waiting for their devices
			}
		},
	})
	a.ids.Attach(a.broker)
	var gc *geo.Geocoder
	if cfg.GeocoderURL != "" {
		gc = &geo.Geocoder{URL: cfg.GeocoderURL}
	}
	a.objects = objects.New(objects.Options{Broker: a.broker, Objects: a.store.Objects(), Events: a.store.Events(), Geocoder: gc,
		RepeatInterval: cfg.RepeatInterval, EmergencyRepeatInterval: cfg.EmergencyRepeatInterval, Logger: a.log})
	// Repeated and persistent objects and active emergencies reach clients
	// from their first connection on (protocol.md §5, replay).
	_, err = a.objects.Restore(ctx)
	return err
}

// startWorkers starts the goroutines the appliance owns (lifecycle.go),
// once every listener serves.
func (a *Appliance) startWorkers() {
	// api.md §5.11: the revocation list is re-read when it changes (the CLI
	// revokes from another process) and revoked clients are cut off.
	a.stopRevokes = a.pki.OnRevocation(a.disconnectRevoked)
	a.life.spawn(stageWatch, func(ctx context.Context) { a.pki.WatchCRL(ctx, crlPollInterval) })
	a.life.spawn(stageWorkers, a.ids.Run) // uid bindings, changes of access by other processes
	a.life.spawn(stageWorkers, a.objects.Run)
	if a.mgmt != nil {
		a.life.spawn(stageWorkers, a.mgmt.Maintain) // audit retention, expired login tokens
	}
	if a.fed != nil {
		a.life.spawn(stageWorkers, a.fed.Run) // managed federates
	}
}
