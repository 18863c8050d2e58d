package marti

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/broker"
	"outpost/appliance/diskspace"
	"outpost/appliance/httpapi"
	"outpost/appliance/rate"
	"outpost/appliance/users"
)

// Options configure the client API handler.
type Options struct {
	Version  string // server version, e.g. "0.1.0"
	Hostname string // the public host clients use (config publicHost; never 0.0.0.0)
	NodeID   string // stable identifier of this server
	Broker   *broker.Broker
	// What the client API reads and changes of the store (stores.go).
	Missions   MissionStore
	Files      FileStore
	Checklists ChecklistStore
	Events     EventStore
	Videos     VideoStore

	// MissionChanged, when set, is told of each mission change a client
	// made (created, deleted, contents added or removed) once committed
	// (mission_federation.go).
	MissionChanged func(MissionChange)

	// MaxUploadBytes bounds one uploaded file (maxUploadBytes; 413 above).
	MaxUploadBytes int64
	// Space is the data filesystem's reserve: uploads below it get 507
	// (httpapi.Upload). Nil: none.
	Space *diskspace.Gauge

	// Mission log entries one client address may write per minute, and
	// their content bytes (missionLogEntriesPerMinute,
	// missionLogBytesPerMinute; 429 above; 0: no limit).
	MissionLogsPerMinute     int
	MissionLogBytesPerMinute int

	// Identify returns the user name and certificate serial of a mutual-TLS
	// request (pki.Authority.Identity): the submitter of uploads on 8443 and
	// the identity of CoT websocket sessions.
	Identify func(tls.ConnectionState) (user string, serial *big.Int, ok bool)

	// Directory resolves a request's client certificate to its principal
	// (access.md); without it every caller is anonymous. Users keeps the
	// groups a client switches on and off (groups/active); Guard budgets
	// mission password checks (nil: a guard of the defaults).
	Directory *access.Directory
	Users     *users.Service
	Guard     *access.Guard

	// CoT over websocket (websocket.go). Zero values take the defaults of
	// the CoT listeners.
	Websocket WebsocketOptions

	// The repeated emergencies (repeater.go).
	Repeater RepeaterOptions

	Logger *slog.Logger
	Now    func() time.Time
}

// envelope is the api.md §2.13 response envelope.
type envelope struct {
	Version string `json:"version"`
	Type    string `json:"type"`
	Data    any    `json:"data"`
	NodeID  string `json:"nodeId"`
}

func (h *Handler) envelope(typ string, data any) envelope {
	return envelope{Version: "3", Type: typ, Data: data, NodeID: h.opts.NodeID}
}

// envelopeListing is the head and the tail of an envelope whose data is a
// list written item by item (httpapi.Listing, listWriter).
func (h *Handler) envelopeListing(typ string) (head, tail string) {
	t, _ := json.Marshal(typ)
	id, _ := json.Marshal(h.opts.NodeID)
	return `{"version":"3","type":` + string(t) + `,"data":[`, `],"nodeId":` + string(id) + "}\n"
}

// Handler is the client API shared by 8080 and 8443 (api.md §1: the same
// routes on both; differences are the scheme and port of returned links,
// the submitter recorded with uploads, and CoT over websocket, which needs
// the client certificate of 8443).
type Handler struct {
	opts    Options
	log     *slog.Logger
	mux     *httpapi.Mux
	rules   *access.Routes // every route with its rule
	guidMux *httpapi.Mux   // the mission guid routes (mission_guid.go)
	started time.Time
	ws      *cotSockets
	rec     *missionRecorder        // uids of events sent to missions (mission_record.go)
	logRate *rate.Keyed[netip.Addr] // mission log writes per client address (mission_logs.go)
	// citrapSlots bounds the CI-TRAP packages read into memory at once
	// (citrap.go).
	citrapSlots chan struct{}
}

// NewHandler returns the client API handler.
func NewHandler(opts Options) *Handler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxUploadBytes <= 0 {
		opts.MaxUploadBytes = 2 << 30
	}
	if opts.Guard == nil {
		opts.Guard = access.NewGuard(access.GuardOptions{Now: opts.Now})
	}
	log := opts.Logger.With("component", "marti")
	h := &Handler{opts: opts, log: log, mux: httpapi.NewMux(log), started: opts.Now(),
		logRate: rate.NewKeyed[netip.Addr](float64(opts.MissionLogsPerMinute)/60, float64(opts.MissionLogBytesPerMinute)/60, time.Minute, 0)}
	h.citrapSlots = make(chan struct{}, citrapParallel)
	h.rules = access.NewRoutes(h.mux)
	h.guidMux = httpapi.NewMux(log)
	h.ws = newCoTSockets(&h.opts, log)
	if opts.Missions != nil {
		h.rec = newMissionRecorder(opts.Missions, h)
	}
	h.routes()
	return h
}

// routes registers every route, with its rule (access.md "Route matrix");
// missions and ExCheck (api.md §4.3, §4.4) from their own files.
func (h *Handler) routes() {
	rt := h.rules
	c := clientRoutes{rt}.Handle
	// What clients call on connect (protocol.md §7, api.md §4.4).
	c("GET /Marti/api/version", h.version)
	c("GET /Marti/api/version/config", h.versionConfig)
	c("GET /Marti/api/clientEndPoints", h.clientEndPoints)
	c("GET /Marti/api/contacts/all", h.contacts)
	c("GET /Marti/api/device/profile/connection", h.deviceProfile)
	h.cotRoutes(c) // cot_history.go

	// Groups (channels.go, access.md "Groups").
	c("GET /Marti/api/groups/all", h.groups)
	c("GET /Marti/api/groups/groupCacheEnabled", h.groupCacheEnabled)
	c("GET /Marti/api/groups/user", h.groupsOfUser)
	rt.Handle("PUT /Marti/api/groups/active", access.CertificateOnly, h.setActiveGroups)
	rt.Handle("PUT /Marti/api/groups/activebits", access.CertificateOnly, h.setActiveBits)

	// Settings (settings.go, subscriptions.go, citrap.go).
	c(profileToolRoute, h.deviceProfile)
	c("GET /Marti/api/util/user/roles", h.userRoles)
	c("GET /Marti/api/cops/hierarchy", h.copsHierarchy)
	c("GET /Marti/api/subscriptions/all", h.clientSubscriptions)
	c("POST /Marti/api/citrap", h.postReport)
	c("GET /Marti/api/citrap", h.listReports)
	c("GET /Marti/api/citrap/{id}", h.getReport)

	// Enterprise sync (api.md §4.2).
	c("POST /Marti/sync/upload", h.upload)
	c("PUT /Marti/sync/content", h.putContent)
	c("POST /Marti/sync/content", h.putContent)
	c("GET /Marti/sync/content", h.getContent) // HEAD too
	c("PUT /Marti/sync/missionupload", h.missionUpload)
	c("POST /Marti/sync/missionupload", h.missionUpload)
	c("GET /Marti/sync/missionquery", h.missionQuery)
	c("GET /Marti/sync/search", h.search)
	c(apiSearchRoute, h.search) // the envelope (sync_search.go)
	c("PUT /Marti/api/sync/metadata/{hash}/tool", h.setPrivacy)
	c("GET /Marti/api/sync/metadata/{hash}/tool", h.metadataDownload)
	c("GET /Marti/sync/{hash}/metadata", h.syncMetadata) // sync_meta.go
	c("PUT /Marti/api/sync/metadata/{hash}/keywords", h.setKeywords)
	c("DELETE /Marti/sync/delete", h.deleteFile)
	c("POST /Marti/sync/delete", h.deleteFile)

	// The file manager (files_manager.go).
	c("GET /Marti/api/files/metadata", h.filesMetadata)
	c("GET /Marti/api/files/metadata/count", h.filesCount)
	c("GET /files/api/config", h.filesConfig)

	// Video connections.
	c("GET /Marti/vcm", h.vcmList)
	c("POST /Marti/vcm", h.vcmPost)
	c("GET /Marti/api/video", h.videoList)
	c("POST /Marti/api/video", h.videoPost)
	c("GET /Marti/api/video/{uid}", h.videoGet)
	c("PUT /Marti/api/video/{uid}", h.videoPut)
	c("DELETE /Marti/api/video/{uid}", h.videoDelete)

	// CoT over websocket (TAK protocol v1), mutual TLS only.
	rt.Handle("GET /takproto/1", access.CertificateOnly, h.ws.serveHTTP)

	h.missionRoutes(rt)                                // mission_routes.go
	h.missionMetaRoutes(rt)                            // mission_meta.go, mission_people.go, mission_delete.go
	h.missionGUIDRoutes(rt.Sub(guidPrefix, h.guidMux)) // mission_guid.go
	h.repeaterRoutes(rt)                               // repeater.go
	h.excheckRoutes(rt)                                // excheck_routes.go
}

// Routes are the client API's routes with their rules (the matrix test).
func (h *Handler) Routes() *access.Routes { return h.rules }

// ServeHTTP resolves the caller (access.md "Principals": the client
// certificate's user on 8443, anonymous on 8080) and serves the route.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := access.Anon()
	if r.TLS != nil && h.opts.Directory != nil {
		var err error
		p, err = h.opts.Directory.Certificate(r.Context(), *r.TLS)
		if err != nil {
			access.Refuse(w, r, err)
			return
		}
	}
	r = r.WithContext(access.With(r.Context(), p))
	if strings.HasPrefix(r.URL.Path, guidPrefix) {
		h.guidMux.ServeHTTP(w, r)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// Shutdown ends every CoT websocket session (http.Server.Shutdown does not
// close hijacked connections): each may receive what is queued for it until
// ctx ends, then whatever is left is cut off. The broker should be draining
// first (no departures announced).
// The mission recorder then writes what it still has queued.
func (h *Handler) Shutdown(ctx context.Context) error {
	err := h.ws.shutdown(ctx)
	if h.rec != nil {
		h.rec.close(ctx)
	}
	return err
}

// CloseWhere closes the CoT websocket sessions whose client certificate
// serial matches (a revocation while connected, api.md §5.11) and returns
// how many it closed. The HTTPS guard handles the other 8443 connections.
func (h *Handler) CloseWhere(match func(serial *big.Int) bool, reason broker.Reason) int {
	return h.ws.sessions.CloseWhere(match, reason)
}

// identity is the certificate identity of a mutual-TLS request ("" on
// plain HTTP).
func (h *Handler) identity(r *http.Request) (string, *big.Int) {
	if r.TLS == nil || h.opts.Identify == nil {
		return "", nil
	}
	if user, serial, ok := h.opts.Identify(*r.TLS); ok {
		return user, serial
	}
	return "", nil
}

// linkBase is "<scheme>://<public host>:<port>" of the listener the request
// came on: https on the TLS listener, and the port it is bound to (the real
// one when configured as 0).
func (h *Handler) linkBase(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	port := ""
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ta, ok := la.(*net.TCPAddr); ok {
			port = strconv.Itoa(ta.Port)
		} else if _, p, err := net.SplitHostPort(la.String()); err == nil {
			port = p
		}
	}
	if port == "" {
		port = "8080"
		if r.TLS != nil {
			port = "8443"
		}
	}
	return scheme + "://" + net.JoinHostPort(h.opts.Hostname, port)
}

// version answers ATAK's fallback check: plain text containing "TAK Server"
// (api.md §4.4, protocol.md §7).
func (h *Handler) version(w http.ResponseWriter, r *http.Request) error {
	httpapi.WriteText(w, http.StatusOK, "Outpost TAK Server "+h.opts.Version)
	return nil
}

// versionConfig is the JSON ATAK checks first on connect (protocol.md §7).
func (h *Handler) versionConfig(w http.ResponseWriter, r *http.Request) error {
	httpapi.WriteJSON(w, http.StatusOK, h.envelope("ServerConfig",
		map[string]string{"version": h.opts.Version, "api": "3", "hostname": h.opts.Hostname}))
	return nil
}

// clientRoutes registers routes of the rule access.Client, the rule of
// every client route but the few that need a certificate.
type clientRoutes struct{ rt *access.Routes }

func (c clientRoutes) Handle(pattern string, f httpapi.HandlerFunc) {
	c.rt.Handle(pattern, access.Client, f)
}

// ours is err as a fault of ours, whatever kind it wraps: answered 500
// with msg (httpapi.Internal), logged by httpapi.Fail as what failed and
// err's words. It is for the steps where a refusal of the store or of
// another package is still the server's failure, not the client's (a
// file's blob missing under its row, a certificate the authority could not
// sign), which these routes answer 500 whatever the cause.
func ours(err error, msg, what string) error {
	if err == nil {
		return nil
	}
	return httpapi.Internal(fmt.Errorf("%s: %v", what, err), msg)
}
