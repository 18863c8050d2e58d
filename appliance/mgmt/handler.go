package mgmt

import (
	"context"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/broker"
	"outpost/appliance/diskspace"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/objects"
	"outpost/appliance/users"
)

// Defaults of Options.
const (
	DefaultMaxUploadBytes     = 2 << 30
	DefaultLoginTokenLifetime = 12 * time.Hour
)

// Limits of the management API.
const (
	maxJSONBody     = 1 << 20   // every JSON request body
	maxBatch        = 100       // users in one postSystemUser / putSystemUser / deleteSystemUser
	maxPackageBatch = 1000      // items of one PUT or DELETE /DataPackageTable
	maintainEvery   = time.Hour // audit and login-token pruning
	minClientToken  = 16        // shortest bearer token a client may choose
)

// Options configure the management API.
type Options struct {
	Broker *broker.Broker
	// What the API reads and changes of the store, area by area (the
	// interfaces of stores.go); nil Accounts: only the public routes work.
	Accounts AccountStore  // logins, audit, users by uid or name
	Files    PackageStore  // data packages, certificate packages, the basemap
	Missions MissionReader // the console's missions page
	Events   History       // the console's map
	// Users creates, changes and deletes system users and groups.
	Users *users.Service
	// Directory resolves bearer tokens to principals (access.md); Guard
	// budgets password checks (login).
	Directory *access.Directory
	Guard     *access.Guard // nil: a guard of the defaults
	// Objects keeps geo objects and emergencies (/ManageGeoObject,
	// /ManageEmergency). Nil: those routes are not served.
	Objects *objects.Service
	// AllowedClientIP reports whether an address is in AllowedCLIIPs
	// (api.md §5.4). Nil refuses everyone.
	AllowedClientIP func(netip.Addr) bool
	// MaxUploadBytes is the largest data package upload (maxUploadBytes).
	MaxUploadBytes int64
	// Space is the data filesystem's gauge: uploads below its reserve get
	// 507, and GET /api/server shows it. Nil: none.
	Space *diskspace.Gauge
	// LoginTokenLifetime is the validity of a POST /api/login token.
	LoginTokenLifetime time.Duration
	// AuditRetention is how long audit records are kept (0: forever).
	AuditRetention time.Duration
	// Metrics serves GET /metrics (Prometheus text) to callers in
	// AllowedCLIIPs or with a bearer token. Nil: not served.
	Metrics http.Handler
	// Channel serves the socket.io channel at /socket.io/ (api.md §6.1); it
	// authenticates with websocketkey, not a bearer token. Nil: not served.
	// A *Channel also answers GET /api/server and /api/logs.
	Channel http.Handler
	Logger  *slog.Logger
	Now     func() time.Time // clock of tokens and the limiter (tests)

	// Federation returns each federate's state and counters for GET
	// /api/federation (a JSON-able list; nil when federation is off). Nil:
	// the route is not served.
	Federation func() any
	// Federates is the store of the federates managed at run time, and
	// FederatesChanged what the server does after a change to it (the
	// running federation picks it up). Served with Federation.
	Federates        FederateStore
	FederatesChanged func()
	// FederationStatus returns this server's federation identity and its
	// listener's state for GET /api/federation (federation_manage.go).
	// Nil: not shown.
	FederationStatus func() FederationStatus
	// FederateAnnounced returns the federate groups a federate announced
	// (nil: none), shown with its group mapping.
	FederateAnnounced func(name string) []string

	// Console holds the web console's built files (web.FS()), served at /
	// and /assets/ (console.go). Nil: no console.
	Console fs.FS
	// BasemapPath is an MBTiles file served at /tiles/ (basemapPath); empty:
	// the newest data package with the keyword basemap, copied into
	// BasemapDir (tiles.go). Both empty: no basemap.
	BasemapPath string
	BasemapDir  string
	// PublicHost is the address clients reach this server at (publicHost),
	// written into the ATAK map source and the links of certificate
	// packages offered to devices.
	PublicHost string
	// CertOffer configures the offer of a new user's certificate package
	// to its device (certsend.go).
	CertOffer CertOfferOptions
}

// API is the management listener's handler (api.md §4.1).
type API struct {
	opts    Options
	log     *slog.Logger
	mux     *httpapi.Mux
	handler http.Handler // mux behind authentication

	routes *access.Routes // every route with its rule (access.md "Route matrix")

	authLog *logx.Limiter // refused-token warnings a client can cause at will

	channel *Channel      // Options.Channel when it is the socket.io channel
	console consoleFiles  // the console's files by path
	basemap *basemap      // the offline basemap's tile set
	deleted deletionCache // uids deleted by recent t-x-d-d, for /api/map

	certSends *certSender // certificate packages offered to devices
}

// New returns the management API.
func New(opts Options) *API {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.Logger = opts.Logger.With("component", "mgmt")
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Guard == nil {
		opts.Guard = access.NewGuard(access.GuardOptions{Now: opts.Now})
	}
	if opts.MaxUploadBytes <= 0 {
		opts.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if opts.LoginTokenLifetime <= 0 {
		opts.LoginTokenLifetime = DefaultLoginTokenLifetime
	}
	a := &API{
		opts:    opts,
		log:     opts.Logger,
		mux:     httpapi.NewMux(opts.Logger),
		authLog: logx.NewLimiter(opts.Logger, 10, time.Minute),
	}
	a.certSends = newCertSender(a, opts.CertOffer)
	a.routes = access.NewRoutes(a.mux)
	rt := a.routes
	// The rule of every route: docs/access.md "Route matrix".
	// api.md §4.1: the only route without authentication.
	rt.Handle("GET /Alive", access.Public, func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("API is running"))
		return nil
	})
	// api.md §5.4: an IP allow-list instead of a token (or an
	// administrator's token).
	rt.Handle("GET /Clients", access.AllowList, a.clients)
	// api.md §5.7: the credential is the body's user name and password.
	rt.Handle("POST /api/login", access.Public, a.login)
	if opts.Metrics != nil {
		rt.Handle("GET /metrics", access.AllowList, a.metrics)
	}
	if opts.Channel != nil {
		// api.md §5.9: the channel's own key, in band.
		rt.Handle("GET /socket.io/", access.Public, httpapi.Serve(opts.Channel))
		rt.Handle("POST /socket.io/", access.Public, httpapi.Serve(opts.Channel)) // long polling
		if a.channel, _ = opts.Channel.(*Channel); a.channel != nil {
			a.channel.attach(a) // system users, emergencies
		}
	}
	if opts.Console != nil {
		// The console's page and files: no data; the console authenticates
		// in the browser with a bearer token (console.go).
		a.console = a.loadConsole(opts.Console)
		rt.Handle("GET /{$}", access.Public, a.consoleIndex)
		rt.Handle("GET /assets/", access.Public, a.consoleAsset)
	}
	// Basemap tiles and the ATAK map source: TAK clients fetch them without
	// a token (tiles.go).
	a.basemap = &basemap{path: opts.BasemapPath, dir: opts.BasemapDir, files: opts.Files, space: opts.Space, log: opts.Logger}
	rt.Handle("GET /tiles/", access.Public, a.tiles)
	// The console's live map and server state (mapview.go, serverinfo.go).
	rt.Handle("GET /api/whoami", access.Any, a.whoami)
	rt.Handle("GET /api/map", access.Any, a.mapView)
	rt.Handle("GET /api/map/event", access.Any, a.mapEventByUID)
	rt.Handle("GET /api/server", access.Admin, a.serverInfo)
	rt.Handle("GET /api/logs", access.Admin, a.serverLogs)
	if opts.Federation != nil {
		rt.Handle("GET /api/federation", access.Admin, a.federation) // federation.go
		if opts.Federates != nil {
			rt.Handle("POST /api/federation/federates", access.Admin, a.addFederate)
			rt.Handle("PUT /api/federation/federates/{name}/trust", access.Admin, a.trustFederate)
			rt.Handle("DELETE /api/federation/federates/{name}", access.Admin, a.removeFederate)
			rt.Handle("PATCH /api/federation/federates/{name}", access.Admin, a.patchFederate) // federation_manage.go
			rt.Handle("GET /api/federation/federates", access.Admin, a.listFederates)
			rt.Handle("GET /api/federation/federates/{name}/groups", access.Admin, a.federateGroups) // federation_groups.go
			rt.Handle("PUT /api/federation/federates/{name}/groups", access.Admin, a.setFederateGroups)
		}
	}

	rt.Handle("GET /api/users", access.Admin, a.getAllUsers)
	rt.Handle("GET /ManageSystemUser/getAll", access.Admin, a.getAllUsers)
	rt.Handle("GET /ManageSystemUser/getSystemUser", access.Self, a.getSystemUser)
	rt.Handle("POST /ManageSystemUser/postSystemUser", access.Admin, a.postSystemUser)
	rt.Handle("PUT /ManageSystemUser/putSystemUser", access.Self, a.putSystemUser)
	rt.Handle("DELETE /ManageSystemUser/deleteSystemUser", access.Admin, a.deleteSystemUser)
	rt.Handle("GET /ManageSystemUser/certificatePackage", access.Self, a.certificatePackage)
	// A package offered to a device: the random ticket of the link is the
	// credential (certsend.go).
	rt.Handle("GET /api/certpackage/{ticket}", access.Public, a.certPackageLink)
	// Roles and groups (groups.go).
	rt.Handle("PUT /api/users/{uid}/role", access.Admin, a.putRole)
	rt.Handle("PUT /api/users/{uid}/groups", access.Admin, a.putGroups)
	// Enrollment invitations (invitations.go).
	rt.Handle("POST /api/users/{uid}/invitations", access.Admin, a.postInvitation)
	rt.Handle("GET /api/invitations", access.Admin, a.listInvitations)
	rt.Handle("DELETE /api/invitations/{id}", access.Admin, a.deleteInvitation)
	rt.Handle("GET /api/groups", access.Any, a.listGroups)
	rt.Handle("POST /api/groups", access.Admin, a.postGroup)
	rt.Handle("DELETE /api/groups/{name}", access.Admin, a.deleteGroup)

	rt.Handle("GET /DataPackageTable", access.Any, a.listPackages)
	rt.Handle("POST /DataPackageTable", access.Any, a.uploadPackage)
	rt.Handle("PUT /DataPackageTable", access.Any, a.updatePackages)
	rt.Handle("DELETE /DataPackageTable", access.Any, a.deletePackages)
	rt.Handle("GET /DataPackageTable/{hash}", access.Any, a.downloadPackage)

	// The console's Missions page (missions.go): read only.
	rt.Handle("GET /api/missions", access.Any, a.listMissions)
	rt.Handle("GET /api/missions/{name}", access.Any, a.getMission)

	if opts.Objects != nil {
		rt.Handle("POST /ManageGeoObject/postGeoObject", access.Any, a.postGeoObject)
		rt.Handle("PUT /ManageGeoObject/putGeoObject", access.Any, a.putGeoObject)
		rt.Handle("GET /ManageGeoObject/getGeoObject", access.Any, a.getGeoObject)
		rt.Handle("GET /ManageGeoObject/GetRepeatedMessages", access.Any, a.getRepeatedMessages)
		rt.Handle("DELETE /ManageGeoObject/DeleteRepeatedMessage", access.Any, a.deleteRepeatedMessage)
		rt.Handle("GET /ManageEmergency/getEmergency", access.Any, a.getEmergency)
		rt.Handle("POST /ManageEmergency/postEmergency", access.Any, a.postEmergency)
		rt.Handle("DELETE /ManageEmergency/deleteEmergency", access.Any, a.deleteEmergency)
	}

	a.handler = a.authenticate(a.mux)
	return a
}

func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.handler.ServeHTTP(w, r) }

// NotifyClientsChanged tells the API that a TAK client connected,
// identified itself or left: a waiting certificate package offer may now
// find its device (certsend.go). It never blocks.
func (a *API) NotifyClientsChanged() { a.certSends.clientsChanged() }

// Routes are the management API's routes with their rules (the matrix
// test, access.md "Route matrix").
func (a *API) Routes() *access.Routes { return a.routes }

// Maintain prunes audit records older than AuditRetention and expired login
// tokens, now and every hour, until ctx ends.
func (a *API) Maintain(ctx context.Context) {
	if a.opts.Accounts == nil {
		return
	}
	t := time.NewTicker(maintainEvery)
	defer t.Stop()
	for {
		a.prune(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (a *API) prune(ctx context.Context) {
	now := a.opts.Now()
	if a.opts.AuditRetention > 0 {
		n, err := a.opts.Accounts.PruneAudit(ctx, now.Add(-a.opts.AuditRetention))
		if err != nil && ctx.Err() == nil {
			a.log.Error("could not prune the audit log", "err", err)
		} else if n > 0 {
			a.log.Info("pruned old audit records", "records", n, "retention", a.opts.AuditRetention)
		}
	}
	n, err := a.opts.Accounts.PruneLoginTokens(ctx, now)
	if err != nil && ctx.Err() == nil {
		a.log.Error("could not prune expired login tokens", "err", err)
	} else if n > 0 {
		a.log.Debug("pruned expired login tokens", "tokens", n)
	}
}

// Close releases what the API holds open (the basemap file).
func (a *API) Close() error {
	a.basemap.close()
	return nil
}
