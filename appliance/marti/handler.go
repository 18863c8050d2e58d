package marti

import (
	"log/slog"
	"net/http"

	"outpost/appliance/broker"
	"outpost/appliance/httpapi"
)

// Options configure the client API handler.
type Options struct {
	Version  string // server version, e.g. "0.1.0"
	Hostname string // the public host clients use
	NodeID   string // stable identifier of this server
	Broker   *broker.Broker
	Logger   *slog.Logger
}

// envelope is the api.md §2.13 response envelope.
type envelope struct {
	Version string `json:"version"`
	Type    string `json:"type"`
	Data    any    `json:"data"`
	NodeID  string `json:"nodeId"`
}

// NewHandler returns the client API handler shared by 8080 and 8443.
func NewHandler(opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.Logger = opts.Logger.With("component", "marti")
	h := &handler{opts: opts}
	mux := httpapi.NewMux()
	mux.HandleFunc("GET /Marti/api/version", h.version)
	mux.HandleFunc("GET /Marti/api/version/config", h.versionConfig)
	mux.HandleFunc("GET /Marti/api/clientEndPoints", h.clientEndPoints)
	return mux
}

type handler struct{ opts Options }

// version answers ATAK's fallback check: plain text containing "TAK Server"
// (api.md).
func (h *handler) version(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("Outpost TAK Server " + h.opts.Version))
}

// versionConfig is the JSON ATAK checks first on connect (protocol.md §7).
func (h *handler) versionConfig(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, envelope{
		Version: "3", Type: "ServerConfig", NodeID: h.opts.NodeID,
		Data: map[string]string{"version": h.opts.Version, "api": "3", "hostname": h.opts.Hostname},
	})
}

type clientEndpoint struct {
	Callsign      string `json:"callsign"`
	UID           string `json:"uid"`
	Username      string `json:"username"`
	LastEventTime string `json:"lastEventTime"`
	LastStatus    string `json:"lastStatus"`
}

// clientEndPoints lists connected clients (protocol.md §7). Every item is complete:
// one malformed item makes ATAK reject the whole list.
func (h *handler) clientEndPoints(w http.ResponseWriter, r *http.Request) {
	items := []clientEndpoint{}
	if h.opts.Broker != nil {
		for _, c := range h.opts.Broker.Clients() {
			items = append(items, clientEndpoint{
				Callsign: c.Callsign, UID: c.UID, Username: c.User,
				LastEventTime: httpapi.FormatTime(c.LastSeen), LastStatus: "Connected",
			})
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, envelope{Version: "3", Type: "com.bbn.marti.remote.ClientEndpoint", NodeID: h.opts.NodeID, Data: items})
}
