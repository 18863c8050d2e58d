package mgmt

// What FreeTAKServer's web UI reads from the channel (socketio.md
// "FreeTAKServer's web UI"): the names it listens for, the keys of
// serviceInfo and systemStatus it reads, and its events list.

import (
	"context"
	"encoding/json"
	"html"
	"log/slog"
	"net"
	"slices"
	"time"

	"outpost/appliance/logx"
	"outpost/appliance/mgmt/socketio"
	"outpost/appliance/store"
)

// ftsNames are the names FreeTAKServer answers each request under, which
// its web UI listens for; every answer goes out under both names.
var ftsNames = map[string]string{
	"users": "userUpdate", "logs": "logUpdate", "serviceInfo": "serviceInfoUpdate",
	"serverHealth": "serverHealthUpdate", "systemStatus": "systemStatusUpdate",
	"systemUsers": "systemUsersUpdate", "events": "eventsUpdate",
}

// ftsPushed are the pushes that also go out under their FreeTAKServer
// name: those the web UI handles again and again (it sets the client count
// and redraws the health chart). Its log and events handlers add a table
// or a list per event, so those are only answers to its requests.
var ftsPushed = map[string]bool{"users": true, "serverHealth": true}

// ftsServices are FreeTAKServer's services as its web UI knows them: the
// name in serviceInfo and the keys of systemStatus (measured, and what
// the configuration expects).
var ftsServices = []struct{ name, status, expected string }{
	{"TCP_CoT_service", "TCPCoTStatus", "TCPCoTStatusExpected"},
	{"SSL_CoT_service", "SSLCoTStatus", "SSLCoTStatusExpected"},
	{"TCP_DataPackage_service", "TCPDataPackageStatus", "TCPDataPackageStatusExpected"},
	{"SSL_DataPackage_service", "SSLDataPackageStatus", "SSLDataPackageStatusExpected"},
	{"Rest_API_service", "RestAPIStatus", "RestAPIStatusExpected"},
	{"Federation_server_service", "FederationServerStatus", "FederationServerExpected"},
}

// ftsName is the FreeTAKServer name of svc.
func ftsName(svc Service) string {
	if svc.FTSName != "" {
		return svc.FTSName
	}
	return svc.Name
}

// addFTSServices adds to serviceInfo's services every FreeTAKServer
// service under its own name: a listener's twin, or "off" on port 0 for
// one Outpost does not have (federation).
func (c *Channel) addFTSServices(services map[string]serviceItem) {
	for _, svc := range c.services() {
		if n := ftsName(svc); n != svc.Name {
			services[n] = services[svc.Name]
		}
	}
	for _, f := range ftsServices {
		if _, ok := services[f.name]; !ok {
			services[f.name] = serviceItem{Status: "off"}
		}
	}
}

// ftsStatus is systemStatus with FreeTAKServer's keys added: for each of
// its services, "on" or "off" as measured, and as the configuration
// expects (on when the listener is enabled).
func (c *Channel) ftsStatus(status map[string]string) map[string]string {
	out := make(map[string]string, len(status)+2*len(ftsServices))
	for k, v := range status {
		out[k] = v
	}
	svcs := c.services()
	for _, f := range ftsServices {
		measured, expected := "off", "off"
		if i := slices.IndexFunc(svcs, func(s Service) bool { return ftsName(s) == f.name }); i >= 0 {
			if svcs[i].Addr != "" {
				expected = "on"
			}
			if status[svcs[i].Name] == "on" {
				measured = "on"
			}
		}
		out[f.status], out[f.expected] = measured, expected
	}
	return out
}

// eventsMax bounds the items of the events answer.
const eventsMax = 50

// events answers the web UI's notifications: the active emergencies
// ("<name> <type>") and the most recent error records, newest first.
// FreeTAKServer sends this one as an object, not JSON text, and the UI
// reads it so; the UI puts each item into the page as HTML, so every item
// is escaped.
func (c *Channel) events(s *socketio.Socket, _ []json.RawMessage) {
	items := []string{}
	if c.emergencies != nil {
		for _, e := range c.emergencies() {
			if len(items) < eventsMax {
				items = append(items, html.EscapeString(logx.Cut(e, 256)))
			}
		}
	}
	if c.opts.Logs != nil {
		for _, e := range slices.Backward(c.opts.Logs.Recent(time.Time{})) {
			if len(items) < eventsMax && e.Level >= slog.LevelError {
				items = append(items, html.EscapeString(e.Text))
			}
		}
	}
	payload, _ := json.Marshal(map[string][]string{"events": items})
	s.Emit("events", json.RawMessage(payload))
	s.Emit(ftsNames["events"], json.RawMessage(payload))
}

// activeEmergencies lists the active emergencies of every group as
// "<name> <type>" (FreeTAKServer's notifications); none when they cannot
// be read.
func activeEmergencies(a *API) func() []string {
	return func() []string {
		if a.opts.Objects == nil {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		list, err := a.opts.Objects.Emergencies(ctx, store.AllGroups)
		if err != nil {
			a.log.Warn("socket.io events: emergencies not read", "err", err)
			return nil
		}
		out := make([]string, len(list))
		for i, e := range list {
			out[i] = e.Name + " " + e.Type
		}
		return out
	}
}

// changeServiceInfo is the web UI's request to start, stop or move
// listeners. Outpost's listeners are set by its configuration, so nothing
// changes; the answer is the unchanged serviceInfo, which the UI shows.
func (c *Channel) changeServiceInfo(s *socketio.Socket, args []json.RawMessage) {
	c.limited.Info("socket.io changeServiceInfo ignored: listeners are set in the configuration", "remote", s.RemoteAddr())
	c.serviceInfo(s, args)
}

// hostPort is where a device reaches the port the socket came in on:
// publicHost and that port (the request's Host when publicHost is unset).
func (c *Channel) hostPort(s *socketio.Socket) string {
	return hostPort(c.opts.PublicHost, s.LocalAddr(), s.Host())
}

// hostPort is publicHost with the port of local, or host when either is
// unknown.
func hostPort(publicHost string, local net.Addr, host string) string {
	port := ""
	if local != nil {
		if _, p, err := net.SplitHostPort(local.String()); err == nil {
			port = p
		}
	}
	if publicHost == "" || port == "" {
		return host
	}
	return net.JoinHostPort(publicHost, port)
}
