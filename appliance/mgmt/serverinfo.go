package mgmt

// The server's state over REST, for the console and scripts that hold a
// bearer token rather than the websocket key (docs/api-management.md
// "Server"): GET /api/server (version, uptime, listeners and whether they
// accept connections, machine health, free disk space against the reserve) and GET /api/logs (the recent log
// records). They answer what the socket.io channel's serviceInfo,
// systemStatus, serverHealth and logs events answer (api.md §6.1), from the
// same code, plus the relay's counters. The listeners are probed at most
// every 30 s for this route.

import (
	"net/http"
	"sort"
	"time"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
)

type serverService struct {
	Name    string `json:"name"`
	Port    int    `json:"port"`
	Enabled bool   `json:"enabled"` // configured and bound
	Status  string `json:"status"`  // "on" when it accepts a connection now
}

// serverRelay are the relay's counters since the start.
type serverRelay struct {
	Sessions  int    `json:"sessions"`  // CoT connections open now
	Published uint64 `json:"published"` // events routed
	Delivered uint64 `json:"delivered"` // events queued to clients
}

// serverDisk is the free space of the data directory's filesystem against
// the disk reserve (operations.md "Free disk space").
type serverDisk struct {
	FreeBytes    int64 `json:"freeBytes"`
	TotalBytes   int64 `json:"totalBytes"`
	ReserveBytes int64 `json:"reserveBytes"` // below it uploads get 507 and the CoT history pauses
	FloorBytes   int64 `json:"floorBytes"`   // below it every write that grows the database gets 507
	BelowReserve bool  `json:"belowReserve"`
	BelowFloor   bool  `json:"belowFloor"`
}

type serverAnswer struct {
	Version    string          `json:"version"`
	Started    string          `json:"started"`
	Uptime     int64           `json:"uptimeSeconds"`
	PublicHost string          `json:"publicHost"`
	Addresses  []string        `json:"addresses"`      // the machine's other addresses clients may use
	TokenFile  string          `json:"adminTokenFile"` // where the first start wrote the admin token
	Clients    int             `json:"clients"`
	Services   []serverService `json:"services"`
	Health     healthInfo      `json:"health"`
	Relay      serverRelay     `json:"relay"`
	Disk       *serverDisk     `json:"disk"` // null when free space cannot be measured
}

// serverStatusMaxAge spaces the listener probes of GET /api/server: each
// probe is a connection the listener logs, and the console asks every 5 s.
const serverStatusMaxAge = 30 * time.Second

// serverInfo answers GET /api/server.
func (a *API) serverInfo(w http.ResponseWriter, r *http.Request) error {
	c := a.channel
	if c == nil {
		return notFound("server state is not available on this listener")
	}
	out := serverAnswer{
		Version: c.opts.Version, Started: httpapi.FormatTime(c.opts.StartTime),
		Uptime: int64(time.Since(c.opts.StartTime) / time.Second), PublicHost: c.opts.PublicHost,
		Services: []serverService{}, Health: c.healthNow(),
		Addresses: append([]string{}, c.opts.Addresses...), TokenFile: c.opts.AdminTokenFile,
	}
	if c.opts.Clients != nil {
		out.Clients = len(c.opts.Clients())
	}
	if a.opts.Broker != nil {
		st := a.opts.Broker.Stats()
		out.Relay = serverRelay{Sessions: st.Sessions, Published: st.Published, Delivered: st.Delivered}
	}
	if st := a.opts.Space.Status(); st.Known {
		out.Disk = &serverDisk{FreeBytes: st.Free, TotalBytes: st.Total, ReserveBytes: st.Reserve, FloorBytes: st.Floor,
			BelowReserve: st.BelowReserve, BelowFloor: st.BelowFloor}
	}
	status := c.statusNow(serverStatusMaxAge)
	for _, s := range c.services() {
		out.Services = append(out.Services, serverService{Name: s.Name, Port: s.Port, Enabled: s.Addr != "", Status: status[s.Name]})
	}
	sort.Slice(out.Services, func(i, j int) bool { return out.Services[i].Name < out.Services[j].Name })
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// serverLogs answers GET /api/logs?since=<ISO 8601>: the kept log records
// (newest first) written after since, as the channel's logs event.
func (a *API) serverLogs(w http.ResponseWriter, r *http.Request) error {
	c := a.channel
	if c == nil {
		return notFound("server logs are not available on this listener")
	}
	var since time.Time
	if v := r.URL.Query().Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return httpapi.BadRequest("since", "must be an ISO 8601 time like 2026-11-22T10:00:00.000Z, not %q", logx.Clip(v))
		}
		since = t
	}
	var entries []logx.Entry
	if c.opts.Logs != nil {
		entries = c.opts.Logs.Recent(since)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(c.logsPayload(entries)))
	return nil
}
