package config

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// knownWeakSecrets are defaults shipped by other servers; refusing them
// keeps an operator from carrying a published secret over by copy and paste.
var knownWeakSecrets = map[string]bool{
	"supersecret": true, "yourwebsocketkey": true, "<websocket_key>": true,
	"changeme": true, "password": true,
}

// Validate checks every value and returns an error naming the first bad key.
func (c *Config) Validate() error {
	if strings.TrimSpace(c.DataDir) == "" {
		return keyErr("dataDir", "must not be empty")
	}
	if c.Bind == "" {
		return keyErr("bind", "must not be empty")
	}
	if c.Bind != "localhost" {
		if _, err := netip.ParseAddr(c.Bind); err != nil {
			return keyErr("bind", fmt.Sprintf("%q is not an IP address", c.Bind))
		}
	}
	if err := checkHost(c.PublicHost); err != nil {
		return keyErr("publicHost", err.Error())
	}
	if !validName(c.ServerName) {
		return keyErr("serverName", "must be 1-64 characters of letters, digits, '.', '-' or '_'")
	}
	seen := map[int]string{}
	for _, p := range c.ports() {
		if p.value < -1 || p.value > 65535 {
			return keyErr(p.key, fmt.Sprintf("%d is not a port (use 1-65535, 0 for any free port, -1 to disable)", p.value))
		}
		if p.value > 0 {
			if other, dup := seen[p.value]; dup {
				return keyErr(p.key, fmt.Sprintf("port %d is already used by %s", p.value, other))
			}
			seen[p.value] = p.key
		}
	}
	switch c.HTTPAccess {
	case HTTPAccessOpen, HTTPAccessLoopback, HTTPAccessOff:
	default:
		return keyErr("httpAccess", fmt.Sprintf("%q is not open, loopback or off", c.HTTPAccess))
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return keyErr("logFormat", fmt.Sprintf("%q is not text or json", c.LogFormat))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return keyErr("logLevel", fmt.Sprintf("%q is not debug, info, warn or error", c.LogLevel))
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{
		{"cotIdleTimeout", c.CoTIdleTimeout}, {"SSL_SOCK_TIMEOUT", c.SSLSockTimeout},
		{"WRAP_SSL_TIMEOUT", c.SSLHandshakeTimeout}, {"writeTimeout", c.WriteTimeout},
		{"shutdownTimeout", c.ShutdownTimeout}, {"httpBodyTimeout", c.HTTPBodyTimeout},
	} {
		if d.v <= 0 {
			return keyErr(d.key, "must be a positive duration")
		}
	}
	if c.HistoryRetention < 0 {
		return keyErr("historyRetention", "must not be negative (0 keeps history forever)")
	}
	if c.AuditRetention < 0 {
		return keyErr("auditRetention", "must not be negative (0 keeps audit records forever)")
	}
	if c.LoginTokenLifetime < time.Second || c.LoginTokenLifetime > 366*24*time.Hour {
		return keyErr("loginTokenLifetime", "must be between 1s and 366d")
	}
	if c.ChannelAuthTimeout < 100*time.Millisecond || c.ChannelAuthTimeout > time.Minute {
		return keyErr("channelAuthTimeout", "must be between 100ms and 1m")
	}
	if c.ChannelUnauthenticatedPerSource < 1 || c.ChannelUnauthenticatedPerSource > MaxChannelUnauthenticatedPerSource {
		return keyErr("channelUnauthenticatedPerSource", fmt.Sprintf(
			"must be between 1 and %d: the channel has 32 sockets, and one address must never hold them all", MaxChannelUnauthenticatedPerSource))
	}
	if c.CertOfferWait < 0 || c.CertOfferWait > 7*24*time.Hour {
		return keyErr("certOfferWait", "must be between 0 (never sent) and 7d")
	}
	if err := checkGeocoderURL(c.GeocoderURL); err != nil {
		return keyErr("geocoderURL", err.Error())
	}
	if c.RepeatInterval < time.Second || c.RepeatInterval > 24*time.Hour {
		return keyErr("repeatInterval", "must be between 1s and 24h")
	}
	if c.EmergencyRepeatInterval < time.Second || c.EmergencyRepeatInterval > time.Hour {
		return keyErr("emergencyRepeatInterval", "must be between 1s and 1h")
	}
	if c.MaxUploadBytes < 1024 || c.MaxUploadBytes > 1<<40 {
		return keyErr("maxUploadBytes", "must be between 1 KiB and 1024 GiB")
	}
	for _, b := range []struct {
		key      string
		v, least int
	}{
		{"maxAuditRecords", c.MaxAuditRecords, 100}, {"maxExCheckDocuments", c.MaxExCheckDocuments, 1},
		{"maxExCheckBytes", c.MaxExCheckBytes, 64 << 10}, {"maxVideoConnections", c.MaxVideoConnections, 1},
		{"maxServerObjects", c.MaxServerObjects, 1}, {"maxDataPackages", c.MaxDataPackages, 1},
	} {
		if b.v < b.least {
			return keyErr(b.key, fmt.Sprintf("must be at least %d (a budget; there is no unlimited)", b.least))
		}
	}
	if r, f := c.DiskReserve, c.DiskFloor; r.Set && f.Set && r.Percent == 0 && f.Percent == 0 && f.Bytes > r.Bytes {
		return keyErr("diskFloor", fmt.Sprintf("%s is above diskReserve (%s): the floor is the last line under the reserve", f, r))
	}
	if c.MaxMessageBytes < 1024 || c.MaxMessageBytes > 8<<20 {
		return keyErr("maxMessageBytes", "must be between 1 KiB and 8 MiB (events over 64 KiB are never relayed)")
	}
	for _, n := range []struct {
		key      string
		v, least int
	}{
		{"maxConnections", c.MaxConnections, 1}, {"maxPendingHandshakes", c.MaxPendingHandshakes, 1},
		{"maxPendingHandshakesPerSource", c.MaxPendingHandshakesPerSource, 1},
		{"httpMaxConnections", c.HTTPMaxConnections, 1}, {"passwordChecksPerSecond", c.PasswordChecksPerSecond, 1},
		{"maxConnectionsPerSource", c.MaxConnectionsPerSource, 0}, {"httpMaxConnectionsPerSource", c.HTTPMaxConnectionsPerSource, 0},
		{"historyMaxBytes", c.HistoryMaxBytes, 0}, {"historyClientRate", c.HistoryClientRate, 0},
		{"historyClientBytes", c.HistoryClientBytes, 0}, {"historyTotalRate", c.HistoryTotalRate, 0},
		{"historyTotalBytes", c.HistoryTotalBytes, 0},
		{"clientEventsPerSecond", c.ClientEventsPerSecond, 0}, {"clientBytesPerSecond", c.ClientBytesPerSecond, 0},
	} {
		if n.v < n.least {
			if n.least == 0 {
				return keyErr(n.key, "must not be negative (0 means no limit)")
			}
			return keyErr(n.key, fmt.Sprintf("must be at least %d", n.least))
		}
	}
	if err := c.checkMissionBudgets(); err != nil {
		return err
	}
	if err := c.checkFederation(); err != nil {
		return err
	}
	if err := c.checkMesh(); err != nil {
		return err
	}
	if c.MemoryLimit != 0 && c.MemoryLimit < MinMemoryLimit {
		return keyErr("memoryLimit", "must be 0 (no limit) or at least 32 MiB")
	}
	if c.GCPercent != 0 && (c.GCPercent < 10 || c.GCPercent > 1000) {
		return keyErr("gcPercent", "must be 0 (the Go runtime's GOGC) or between 10 and 1000")
	}
	if c.IdleMemoryReturn != 0 && (c.IdleMemoryReturn < time.Second || c.IdleMemoryReturn > time.Hour) {
		return keyErr("idleMemoryReturn", "must be 0 (never) or between 1s and 1h")
	}
	if c.QueueSoftBytes < 4096 {
		return keyErr("queueSoftBytes", "must be at least 4096")
	}
	if c.QueueHardBytes <= c.QueueSoftBytes {
		return keyErr("queueHardBytes", "must be larger than queueSoftBytes")
	}
	switch c.KeyType {
	case "rsa", "ecdsa-p256":
	default:
		return keyErr("keyType", fmt.Sprintf("%q is not rsa or ecdsa-p256", c.KeyType))
	}
	for _, s := range []struct{ key, v string }{
		{"SecretKey", c.SecretKey}, {"websocketkey", c.WebsocketKey}, {"password", c.Password},
	} {
		if knownWeakSecrets[strings.ToLower(s.v)] {
			return keyErr(s.key, "is a published default; leave it empty to have one generated")
		}
	}
	for _, l := range []struct {
		key string
		v   []string
	}{{"AllowedCLIIPs", c.AllowedCLIIPs}, {"AllowCLIIPs", c.AllowCLIIPs}} {
		if _, err := ParseAllowList(l.v); err != nil {
			return keyErr(l.key, err.Error())
		}
	}
	return nil
}

// Error is a configuration error that names its key.
type Error struct {
	Key string
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("config %s: %s", e.Key, e.Msg) }

func keyErr(key, msg string) error { return &Error{Key: key, Msg: msg} }

func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func checkHost(h string) error {
	if h == "" {
		return fmt.Errorf("must not be empty")
	}
	if strings.ContainsAny(h, " /:@?#") && net.ParseIP(h) == nil {
		return fmt.Errorf("%q is not a host name or IP address", h)
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsUnspecified() {
		return fmt.Errorf("%q is not reachable by clients; name a real address", h)
	}
	return nil
}

// checkGeocoderURL accepts "" (no geocoder) or an http(s) URL with a host
// and without credentials, query or fragment.
func checkGeocoderURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// address (leave it empty for no geocoder)", s)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q must be the service's base address, without credentials, query or fragment", u.Redacted())
	}
	return nil
}

// MaxMissionLogEntry is the largest missionLogEntryMaxBytes: a log entry
// arrives in a JSON body of at most 256 KiB.
const MaxMissionLogEntry = 192 << 10

// checkMissionBudgets checks the mission budgets: none negative, a log
// entry that fits a request, and a per-address byte rate that lets one
// whole entry through.
func (c *Config) checkMissionBudgets() error {
	for _, n := range []struct {
		key string
		v   int
	}{
		{"missionLogEntryMaxBytes", c.MissionLogEntryMaxBytes}, {"missionLogMaxEntries", c.MissionLogMaxEntries},
		{"missionLogMaxBytes", c.MissionLogMaxBytes}, {"missionLogEntriesPerMinute", c.MissionLogEntriesPerMinute},
		{"missionLogBytesPerMinute", c.MissionLogBytesPerMinute}, {"missionMaxContents", c.MissionMaxContents},
		{"missionMaxChanges", c.MissionMaxChanges}, {"missionMaxChangeBytes", c.MissionMaxChangeBytes},
	} {
		if n.v < 0 {
			return keyErr(n.key, "must not be negative (0 means no limit)")
		}
	}
	if c.MissionLogEntryMaxBytes == 0 || c.MissionLogEntryMaxBytes > MaxMissionLogEntry {
		return keyErr("missionLogEntryMaxBytes", "must be between 1 and 192 KiB (a log entry arrives in a request of at most 256 KiB)")
	}
	if c.MissionLogBytesPerMinute != 0 && c.MissionLogBytesPerMinute < c.MissionLogEntryMaxBytes {
		return keyErr("missionLogBytesPerMinute", "must be 0 (no limit) or at least missionLogEntryMaxBytes, or the largest entry could never be written")
	}
	return nil
}
