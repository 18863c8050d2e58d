package mgmt

import (
	"encoding/json"
	"math"
	"net"
	"slices"
	"sync"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/mgmt/socketio"
	"outpost/appliance/sysinfo"
)

// The channel's payloads are JSON text sent as a string argument, as
// FreeTAKServer sends them (api.md §6.1).

// jsonString is v encoded as JSON text.
func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "{}" // the payloads are plain maps and structs
	}
	return string(b)
}

// decodeArg decodes the first argument into dst, whether it is JSON text
// in a string (as FreeTAKServer's clients send) or the object itself.
func decodeArg(args []json.RawMessage, dst any) bool {
	if len(args) == 0 {
		return false
	}
	raw := []byte(args[0])
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = []byte(s)
	}
	return json.Unmarshal(raw, dst) == nil
}

// usersPayload lists the connected clients as /Clients does (api.md §2.11).
func (c *Channel) usersPayload() string {
	var cs []broker.ClientInfo
	if c.opts.Clients != nil {
		cs = c.opts.Clients()
	}
	return jsonString(map[string][]clientItem{"Users": clientItems(cs)})
}

func (c *Channel) users(s *socketio.Socket, _ []json.RawMessage) {
	c.emit(s, "users", c.usersPayload())
}

// logItem is one log record; type is the level, file the component.
type logItem struct {
	Time    string `json:"time"`
	Type    string `json:"type"`
	File    string `json:"file"`
	Message string `json:"message"`
}

// logsPayload lists entries newest first, as FreeTAKServer does.
func (c *Channel) logsPayload(entries []logx.Entry) string {
	items := make([]logItem, 0, len(entries))
	for _, e := range slices.Backward(entries) {
		items = append(items, logItem{Time: httpapi.FormatTime(e.Time), Type: e.Level.String(), File: e.Source, Message: e.Text})
	}
	return jsonString(map[string][]logItem{"log_data": items})
}

// sinceLayouts are the forms of the logs request's time: ISO 8601 (what
// this channel sends) and FreeTAKServer's log time (local time).
var sinceLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02T15:04:05"}

// parseSince reads the logs request's {"time": ...}; anything missing or
// unreadable means every kept record.
func parseSince(args []json.RawMessage) time.Time {
	var req struct {
		Time string `json:"time"`
	}
	if !decodeArg(args, &req) || req.Time == "" {
		return time.Time{}
	}
	for _, l := range sinceLayouts {
		if t, err := time.ParseInLocation(l, req.Time, time.Local); err == nil {
			return t
		}
	}
	return time.Time{}
}

func (c *Channel) logs(s *socketio.Socket, args []json.RawMessage) {
	var entries []logx.Entry
	if c.opts.Logs != nil {
		entries = c.opts.Logs.Recent(parseSince(args))
	}
	c.emit(s, "logs", c.logsPayload(entries))
}

// serviceItem is one listener in serviceInfo.
type serviceItem struct {
	Status string `json:"status"`
	Port   int    `json:"port"`
}

func (c *Channel) serviceInfo(s *socketio.Socket, _ []json.RawMessage) {
	services := map[string]serviceItem{}
	for _, svc := range c.services() {
		st := "off"
		if svc.Addr != "" {
			st = "on"
		}
		services[svc.Name] = serviceItem{Status: st, Port: svc.Port}
	}
	c.addFTSServices(services)
	c.emit(s, "serviceInfo", jsonString(map[string]any{"services": services, "ip": c.opts.PublicHost}))
}

func (c *Channel) services() []Service {
	if c.opts.Services == nil {
		return nil
	}
	return c.opts.Services()
}

// healthInfo is serverHealth: whole percentages; null for a figure this
// system cannot measure.
type healthInfo struct {
	CPU    *int `json:"CPU"`
	Memory *int `json:"memory"`
	Disk   *int `json:"disk"`
}

// healthMaxAge lets requests close together share one measurement.
const healthMaxAge = time.Second

func (c *Channel) healthNow() healthInfo {
	return c.health.get(healthMaxAge, func() healthInfo {
		pct := func(what string, v float64, err error) *int {
			if err != nil {
				c.limited.Debug("server health not measured", "what", what, "err", err)
				return nil
			}
			n := int(math.Round(v))
			return &n
		}
		dir := c.opts.DataDir
		if dir == "" {
			dir = "."
		}
		cpu, err := c.cpu.Percent()
		h := healthInfo{CPU: pct("cpu", cpu, err)}
		mem, err := sysinfo.Memory()
		h.Memory = pct("memory", mem, err)
		disk, err := sysinfo.Disk(dir)
		h.Disk = pct("disk", disk, err)
		return h
	})
}

func (c *Channel) serverHealth(s *socketio.Socket, _ []json.RawMessage) {
	c.emit(s, "serverHealth", jsonString(c.healthNow()))
}

// statusMaxAge lets requests close together share one round of probes.
const statusMaxAge = time.Second

// systemStatus answers "on" or "off" per listener, measured by connecting
// to it (a listener that is configured but not accepting is "off"), with
// FreeTAKServer's keys (channel_fts.go).
func (c *Channel) systemStatus(s *socketio.Socket, _ []json.RawMessage) {
	c.emit(s, "systemStatus", jsonString(c.ftsStatus(c.statusNow(statusMaxAge))))
}

// statusNow is "on" or "off" per listener name, probed unless the last
// round (of systemStatus or GET /api/server) is younger than maxAge.
func (c *Channel) statusNow(maxAge time.Duration) map[string]string {
	return c.status.get(maxAge, func() map[string]string {
		svcs := c.services()
		out := make(map[string]string, len(svcs))
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, svc := range svcs {
			wg.Go(func() {
				v := "off"
				if svc.Addr != "" && probe(svc.Addr, c.opts.ProbeTimeout) {
					v = "on"
				}
				mu.Lock()
				out[svc.Name] = v
				mu.Unlock()
			})
		}
		wg.Wait()
		return out
	})
}

// probe reports whether a TCP connection to addr succeeds; a listener on
// every interface is probed on loopback.
func probe(addr string, timeout time.Duration) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), timeout)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// cached keeps one computed value for a while.
type cached[T any] struct {
	mu sync.Mutex
	at time.Time
	v  T
}

// get returns the value computed less than maxAge ago, or computes it
// (callers arriving meanwhile wait for that computation).
func (c *cached[T]) get(maxAge time.Duration, compute func() T) T {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < maxAge {
		return c.v
	}
	c.v = compute()
	c.at = time.Now()
	return c.v
}
