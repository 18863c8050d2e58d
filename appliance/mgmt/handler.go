package mgmt

import (
	"context"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"path"
	"strings"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/objects"
	"outpost/appliance/pki"
	"outpost/appliance/store"
)

// Defaults of Options.
const (
	DefaultMaxUploadBytes     = 2 << 30
	DefaultLoginTokenLifetime = 12 * time.Hour
)

// Limits of the management API.
const (
	maxJSONBody     = 1 << 20     // every JSON request body
	maxBatch        = 100         // users in one postSystemUser / putSystemUser / deleteSystemUser
	maxPackageBatch = 1000        // items of one PUT or DELETE /DataPackageTable
	authMaxFailures = 10          // failed logins or unknown tokens per client address...
	authWindow      = time.Minute // ...within this window...
	authBlock       = time.Minute // ...block the address this long (429)
	authMaxTracked  = 4096        // client addresses the limiter remembers
	maintainEvery   = time.Hour   // audit and login-token pruning
	minClientToken  = 16          // shortest bearer token a client may choose
)

// Options configure the management API.
type Options struct {
	Broker *broker.Broker
	// What the API reads and changes (store areas); nil Accounts: only the
	// public routes work.
	Accounts  *store.Accounts // users, tokens, audit
	Files     *store.Files    // data packages, certificate packages, the basemap
	Missions  *store.Missions // the console's missions page
	Events    *store.Events   // the console's map
	Authority *pki.Authority  // certificate packages and revocation of deleted users
	// Objects keeps geo objects and emergencies (/ManageGeoObject,
	// /ManageEmergency). Nil: those routes are not served.
	Objects *objects.Service
	// AllowedClientIP reports whether an address is in AllowedCLIIPs
	// (api.md §5.4). Nil refuses everyone.
	AllowedClientIP func(netip.Addr) bool
	// MaxUploadBytes is the largest data package upload (maxUploadBytes).
	MaxUploadBytes int64
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

	// Console holds the web console's built files (web.FS()), served at /
	// and /assets/ (console.go). Nil: no console.
	Console fs.FS
	// BasemapPath is an MBTiles file served at /tiles/ (basemapPath); empty:
	// the newest data package with the keyword basemap, copied into
	// BasemapDir (tiles.go). Both empty: no basemap.
	BasemapPath string
	BasemapDir  string
	// PublicHost is the address clients reach this server at (publicHost),
	// written into the ATAK map source.
	PublicHost string
}

// API is the management listener's handler (api.md §4.1).
type API struct {
	opts    Options
	log     *slog.Logger
	mux     *httpapi.Mux
	handler http.Handler // mux behind authentication

	// Routes served without a bearer token (see handlePublic).
	publicPaths    map[string]bool
	publicPrefixes []string

	limiter *httpapi.FailureLimiter // failed logins and unknown tokens, per address
	authLog *logx.Limiter           // refused-token warnings a client can cause at will

	channel *Channel      // Options.Channel when it is the socket.io channel
	console consoleFiles  // the console's files by path
	basemap *basemap      // the offline basemap's tile set
	deleted deletionCache // uids deleted by recent t-x-d-d, for /api/map
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
	if opts.MaxUploadBytes <= 0 {
		opts.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if opts.LoginTokenLifetime <= 0 {
		opts.LoginTokenLifetime = DefaultLoginTokenLifetime
	}
	a := &API{
		opts:        opts,
		log:         opts.Logger,
		mux:         httpapi.NewMux(opts.Logger),
		publicPaths: map[string]bool{},
		limiter:     httpapi.NewFailureLimiter(authMaxFailures, authWindow, authBlock, authMaxTracked, opts.Now),
		authLog:     logx.NewLimiter(opts.Logger, 10, time.Minute),
	}
	// api.md §4.1: the only route without authentication.
	a.handlePublic("GET /Alive", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("API is running"))
	})
	// api.md §5.4: an IP allow-list instead of a token.
	a.handlePublic("GET /Clients", a.clients)
	// api.md §5.7: the credential is the body's user name and password.
	a.handlePublic("POST /api/login", a.login)
	if opts.Metrics != nil {
		// The allow-list or a bearer token (checked by the handler).
		a.handlePublic("GET /metrics", a.metrics)
	}
	if opts.Channel != nil {
		// api.md §5.9: the channel's own key, in band.
		a.handlePublic("GET /socket.io/", opts.Channel.ServeHTTP)
		a.channel, _ = opts.Channel.(*Channel)
	}
	if opts.Console != nil {
		// The console's page and files: no data; the console authenticates
		// in the browser with a bearer token (console.go).
		a.console = a.loadConsole(opts.Console)
		a.handlePublic("GET /{$}", a.consoleIndex)
		a.handlePublic("GET /assets/", a.consoleAsset)
	}
	// Basemap tiles and the ATAK map source: TAK clients fetch them without
	// a token (tiles.go).
	a.basemap = &basemap{path: opts.BasemapPath, dir: opts.BasemapDir, files: opts.Files, log: opts.Logger}
	a.handlePublic("GET /tiles/", a.tiles)
	// The console's live map and server state, behind the token like the
	// rest (mapview.go, serverinfo.go).
	a.mux.HandleFunc("GET /api/map", a.mapView)
	a.mux.HandleFunc("GET /api/map/event", a.mapEventByUID)
	a.mux.HandleFunc("GET /api/server", a.serverInfo)
	a.mux.HandleFunc("GET /api/logs", a.serverLogs)

	a.mux.HandleFunc("GET /api/users", a.getAllUsers)
	a.mux.HandleFunc("GET /ManageSystemUser/getAll", a.getAllUsers)
	a.mux.HandleFunc("GET /ManageSystemUser/getSystemUser", a.getSystemUser)
	a.mux.HandleFunc("POST /ManageSystemUser/postSystemUser", a.postSystemUser)
	a.mux.HandleFunc("PUT /ManageSystemUser/putSystemUser", a.putSystemUser)
	a.mux.HandleFunc("DELETE /ManageSystemUser/deleteSystemUser", a.deleteSystemUser)
	a.mux.HandleFunc("GET /ManageSystemUser/certificatePackage", a.certificatePackage)

	a.mux.HandleFunc("GET /DataPackageTable", a.listPackages)
	a.mux.HandleFunc("POST /DataPackageTable", a.uploadPackage)
	a.mux.HandleFunc("PUT /DataPackageTable", a.updatePackages)
	a.mux.HandleFunc("DELETE /DataPackageTable", a.deletePackages)
	a.mux.HandleFunc("GET /DataPackageTable/{hash}", a.downloadPackage)

	// The console's Missions page (missions.go): read only.
	a.mux.HandleFunc("GET /api/missions", a.listMissions)
	a.mux.HandleFunc("GET /api/missions/{name}", a.getMission)

	if opts.Objects != nil {
		a.mux.HandleFunc("POST /ManageGeoObject/postGeoObject", a.postGeoObject)
		a.mux.HandleFunc("PUT /ManageGeoObject/putGeoObject", a.putGeoObject)
		a.mux.HandleFunc("GET /ManageGeoObject/getGeoObject", a.getGeoObject)
		a.mux.HandleFunc("GET /ManageGeoObject/GetRepeatedMessages", a.getRepeatedMessages)
		a.mux.HandleFunc("DELETE /ManageGeoObject/DeleteRepeatedMessage", a.deleteRepeatedMessage)
		a.mux.HandleFunc("GET /ManageEmergency/getEmergency", a.getEmergency)
		a.mux.HandleFunc("POST /ManageEmergency/postEmergency", a.postEmergency)
		a.mux.HandleFunc("DELETE /ManageEmergency/deleteEmergency", a.deleteEmergency)
	}

	a.handler = a.authenticate(a.mux)
	return a
}

// handlePublic registers a route served WITHOUT a bearer token. It is the one
// place a route opts out of authentication: /Alive, /Clients (IP allow-list)
// and /api/login, the socket.io channel (/socket.io/, its own key), the
// console's files and the basemap tiles. A pattern whose path ends in "/"
// makes everything below it public; one ending in "/{$}" only that path.
func (a *API) handlePublic(pattern string, h http.HandlerFunc) {
	a.mux.HandleFunc(pattern, h)
	p := pattern
	if i := strings.IndexByte(p, ' '); i >= 0 {
		p = strings.TrimSpace(p[i+1:])
	}
	if exact, ok := strings.CutSuffix(p, "{$}"); ok {
		a.publicPaths[path.Clean(exact)] = true
	} else if strings.HasSuffix(p, "/") {
		a.publicPrefixes = append(a.publicPrefixes, p)
	} else {
		a.publicPaths[p] = true
	}
}

// isPublic reports whether the (cleaned) path is a public route.
func (a *API) isPublic(p string) bool {
	p = path.Clean("/" + p)
	if a.publicPaths[p] {
		return true
	}
	for _, pre := range a.publicPrefixes {
		if strings.HasPrefix(p+"/", pre) {
			return true
		}
	}
	return false
}

func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.handler.ServeHTTP(w, r) }

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
