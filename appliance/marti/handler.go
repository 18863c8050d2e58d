package marti

import (
	"context"
	"crypto/tls"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// Options configure the client API handler.
type Options struct {
	Version  string // server version, e.g. "0.1.0"
	Hostname string // the public host clients use (config publicHost; never 0.0.0.0)
	NodeID   string // stable identifier of this server
	Broker   *broker.Broker
	// What the client API reads and changes (store areas).
	Missions   *store.Missions
	Files      *store.Files
	Checklists *store.Checklists
	Events     *store.Events
	Videos     *store.Videos
	Accounts   *store.Accounts

	// MaxUploadBytes bounds one uploaded file (maxUploadBytes; 413 above).
	MaxUploadBytes int64

	// Identify returns the user name and certificate serial of a mutual-TLS
	// request (pki.Authority.Identity): the submitter of uploads on 8443 and
	// the identity of CoT websocket sessions.
	Identify func(tls.ConnectionState) (user string, serial *big.Int, ok bool)

	// CoT over websocket (websocket.go). Zero values take the defaults of
	// the CoT listeners.
	Websocket WebsocketOptions

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

// Handler is the client API shared by 8080 and 8443 (api.md §1: the same
// routes on both; differences are the scheme and port of returned links,
// the submitter recorded with uploads, and CoT over websocket, which needs
// the client certificate of 8443).
type Handler struct {
	opts    Options
	log     *slog.Logger
	mux     *httpapi.Mux
	started time.Time
	ws      *cotSockets
	rec     *missionRecorder // uids of events sent to missions (mission_record.go)
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
	log := opts.Logger.With("component", "marti")
	h := &Handler{opts: opts, log: log, mux: httpapi.NewMux(log), started: opts.Now()}
	h.ws = newCoTSockets(&h.opts, log)
	if opts.Missions != nil {
		h.rec = newMissionRecorder(opts.Missions, h)
	}
	h.routes()
	return h
}

// routes registers every route; missions and ExCheck (api.md §4.3, §4.4)
// from their own files.
func (h *Handler) routes() {
	m := h.mux
	// What clients call on connect (protocol.md §7, api.md §4.4).
	m.HandleFunc("GET /Marti/api/version", h.version)
	m.HandleFunc("GET /Marti/api/version/config", h.versionConfig)
	m.HandleFunc("GET /Marti/api/clientEndPoints", h.clientEndPoints)
	m.HandleFunc("GET /Marti/api/contacts/all", h.contacts)
	m.HandleFunc("GET /Marti/api/groups/all", h.groups)
	m.HandleFunc("GET /Marti/api/device/profile/connection", h.deviceProfile)
	m.HandleFunc("GET /Marti/api/cot/xml/{uid}", h.cotXML)

	// Enterprise sync (api.md §4.2).
	m.HandleFunc("POST /Marti/sync/upload", h.upload)
	m.HandleFunc("PUT /Marti/sync/content", h.putContent)
	m.HandleFunc("POST /Marti/sync/content", h.putContent)
	m.HandleFunc("GET /Marti/sync/content", h.getContent) // HEAD too
	m.HandleFunc("PUT /Marti/sync/missionupload", h.missionUpload)
	m.HandleFunc("POST /Marti/sync/missionupload", h.missionUpload)
	m.HandleFunc("GET /Marti/sync/missionquery", h.missionQuery)
	m.HandleFunc("GET /Marti/sync/search", h.search)
	m.HandleFunc("PUT /Marti/api/sync/metadata/{hash}/tool", h.setPrivacy)
	m.HandleFunc("GET /Marti/api/sync/metadata/{hash}/tool", h.metadataDownload)

	// Video connections.
	m.HandleFunc("GET /Marti/vcm", h.vcmList)
	m.HandleFunc("POST /Marti/vcm", h.vcmPost)
	m.HandleFunc("GET /Marti/api/video", h.videoList)
	m.HandleFunc("POST /Marti/api/video", h.videoPost)
	m.HandleFunc("GET /Marti/api/video/{uid}", h.videoGet)
	m.HandleFunc("PUT /Marti/api/video/{uid}", h.videoPut)
	m.HandleFunc("DELETE /Marti/api/video/{uid}", h.videoDelete)

	// CoT over websocket (TAK protocol v1), mutual TLS only.
	m.HandleFunc("GET /takproto/1", h.ws.serveHTTP)

	h.missionRoutes(m) // mission_routes.go
	h.excheckRoutes(m) // excheck_routes.go
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

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
func (h *Handler) version(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteText(w, http.StatusOK, "Outpost TAK Server "+h.opts.Version)
}

// versionConfig is the JSON ATAK checks first on connect (protocol.md §7).
func (h *Handler) versionConfig(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, h.envelope("ServerConfig",
		map[string]string{"version": h.opts.Version, "api": "3", "hostname": h.opts.Hostname}))
}
