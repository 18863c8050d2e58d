package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"outpost/appliance/diskspace"
)

// field binds one configuration key to its YAML key, environment variable
// and (optionally) command-line flag.
type field struct {
	key    string // YAML key, as the spec spells it where the spec names it
	env    string // OUTPOST_* variable
	flag   string // command-line flag name; "" when the key has none
	usage  string
	secret bool // never printed
	ptr    func(*Config) any
}

// fields lists every key. Order is the order of `outpost run -h`.
var fields = []field{
	{"dataDir", "OUTPOST_DATA_DIR", "data-dir", "directory holding the database, certificates and secrets", false, func(c *Config) any { return &c.DataDir }},
	{"bind", "OUTPOST_BIND", "bind", "address every listener binds to", false, func(c *Config) any { return &c.Bind }},
	{"publicHost", "OUTPOST_PUBLIC_HOST", "public-host", "address written into links and client packages", false, func(c *Config) any { return &c.PublicHost }},
	{"serverName", "OUTPOST_SERVER_NAME", "server-name", "server name in certificates and truststore names", false, func(c *Config) any { return &c.ServerName }},
	{"restPort", "OUTPOST_REST_PORT", "rest-port", "management API port (-1 disables, 0 picks a free port)", false, func(c *Config) any { return &c.RESTPort }},
	{"httpPort", "OUTPOST_HTTP_PORT", "http-port", "client API HTTP port", false, func(c *Config) any { return &c.HTTPPort }},
	{"httpAccess", "OUTPOST_HTTP_ACCESS", "http-access", "who may reach the client API over HTTP, which has no authentication: open, loopback (this machine only) or off", false, func(c *Config) any { return &c.HTTPAccess }},
	{"httpsPort", "OUTPOST_HTTPS_PORT", "https-port", "client API mutual-TLS port", false, func(c *Config) any { return &c.HTTPSPort }},
	{"cotPort", "OUTPOST_COT_PORT", "cot-port", "CoT over TCP port", false, func(c *Config) any { return &c.CoTPort }},
	{"sslCotPort", "OUTPOST_SSL_COT_PORT", "ssl-cot-port", "CoT over mutual TLS port", false, func(c *Config) any { return &c.SSLCoTPort }},
	{"enrollPort", "OUTPOST_ENROLL_PORT", "enroll-port", "certificate enrollment port", false, func(c *Config) any { return &c.EnrollPort }},
	{"logFormat", "OUTPOST_LOG_FORMAT", "log-format", "log format: text or json", false, func(c *Config) any { return &c.LogFormat }},
	{"logLevel", "OUTPOST_LOG_LEVEL", "log-level", "log level: debug, info, warn or error", false, func(c *Config) any { return &c.LogLevel }},
	{"cotIdleTimeout", "OUTPOST_COT_IDLE_TIMEOUT", "cot-idle-timeout", "close a TCP CoT client silent this long", false, func(c *Config) any { return &c.CoTIdleTimeout }},
	{"SSL_SOCK_TIMEOUT", "OUTPOST_SSL_SOCK_TIMEOUT", "ssl-sock-timeout", "close a TLS client silent this long", false, func(c *Config) any { return &c.SSLSockTimeout }},
	{"WRAP_SSL_TIMEOUT", "OUTPOST_WRAP_SSL_TIMEOUT", "wrap-ssl-timeout", "maximum TLS handshake time", false, func(c *Config) any { return &c.SSLHandshakeTimeout }},
	{"writeTimeout", "OUTPOST_WRITE_TIMEOUT", "write-timeout", "close a client whose socket accepts nothing for this long (up to 1.25 times it) as a slow consumer", false, func(c *Config) any { return &c.WriteTimeout }},
	{"maxMessageBytes", "OUTPOST_MAX_MESSAGE_BYTES", "max-message-bytes", "largest CoT message accepted (1KiB-8MiB; events over 64KiB are never relayed)", false, func(c *Config) any { return &c.MaxMessageBytes }},
	{"maxConnections", "OUTPOST_MAX_CONNECTIONS", "max-connections", "most connections per CoT listener; also the cap on CoT websockets (/takproto/1)", false, func(c *Config) any { return &c.MaxConnections }},
	{"queueSoftBytes", "OUTPOST_QUEUE_SOFT_BYTES", "queue-soft-bytes", "per-client queue size above which position reports are coalesced", false, func(c *Config) any { return &c.QueueSoftBytes }},
	{"queueHardBytes", "OUTPOST_QUEUE_HARD_BYTES", "queue-hard-bytes", "per-client queue size above which the client is disconnected", false, func(c *Config) any { return &c.QueueHardBytes }},
	{"maxConnectionsPerSource", "OUTPOST_MAX_CONNECTIONS_PER_SOURCE", "max-connections-per-source", "most CoT connections from one address, both CoT listeners together (0: no limit; raise it for load tests from one machine)", false, func(c *Config) any { return &c.MaxConnectionsPerSource }},
	{"maxPendingHandshakes", "OUTPOST_MAX_PENDING_HANDSHAKES", "max-pending-handshakes", "most TLS handshakes in flight, all TLS listeners together", false, func(c *Config) any { return &c.MaxPendingHandshakes }},
	{"maxPendingHandshakesPerSource", "OUTPOST_MAX_PENDING_HANDSHAKES_PER_SOURCE", "max-pending-handshakes-per-source", "most TLS handshakes in flight from one address", false, func(c *Config) any { return &c.MaxPendingHandshakesPerSource }},
	{"httpMaxConnections", "OUTPOST_HTTP_MAX_CONNECTIONS", "http-max-connections", "most HTTP connections, all HTTP listeners together", false, func(c *Config) any { return &c.HTTPMaxConnections }},
	{"httpMaxConnectionsPerSource", "OUTPOST_HTTP_MAX_CONNECTIONS_PER_SOURCE", "http-max-connections-per-source", "most HTTP connections from one address (0: no limit)", false, func(c *Config) any { return &c.HTTPMaxConnectionsPerSource }},
	{"httpBodyTimeout", "OUTPOST_HTTP_BODY_TIMEOUT", "http-body-timeout", "cut off a request body that sends nothing this long", false, func(c *Config) any { return &c.HTTPBodyTimeout }},
	{"passwordChecksPerSecond", "OUTPOST_PASSWORD_CHECKS_PER_SECOND", "password-checks-per-second", "password checks (logins, enrollments) per second for the whole server, whoever asks; beyond, 429", false, func(c *Config) any { return &c.PasswordChecksPerSecond }},
	{"clientEventsPerSecond", "OUTPOST_CLIENT_EVENTS_PER_SECOND", "client-events-per-second", "CoT events one connection may send per second before its reading is paced (0: no limit)", false, func(c *Config) any { return &c.ClientEventsPerSecond }},
	{"clientBytesPerSecond", "OUTPOST_CLIENT_BYTES_PER_SECOND", "client-bytes-per-second", "CoT bytes one connection may send per second before its reading is paced (0: no limit)", false, func(c *Config) any { return &c.ClientBytesPerSecond }},
	{"historyRetention", "OUTPOST_HISTORY_RETENTION", "history-retention", "how long relayed CoT is kept (e.g. 7d, 36h; 0 keeps forever)", false, func(c *Config) any { return &c.HistoryRetention }},
	{"historyMaxBytes", "OUTPOST_HISTORY_MAX_BYTES", "history-max-bytes", "cap of stored CoT history (e.g. 1GiB; 0: none); above it the heaviest uid's oldest events go first", false, func(c *Config) any { return &c.HistoryMaxBytes }},
	{"historyClientRate", "OUTPOST_HISTORY_CLIENT_RATE", "", "events per second one connection may add to history (0: no limit)", false, func(c *Config) any { return &c.HistoryClientRate }},
	{"historyClientBytes", "OUTPOST_HISTORY_CLIENT_BYTES", "", "bytes per second one connection may add to history (0: no limit)", false, func(c *Config) any { return &c.HistoryClientBytes }},
	{"historyTotalRate", "OUTPOST_HISTORY_TOTAL_RATE", "", "events per second all connections together may add to history (0: no limit)", false, func(c *Config) any { return &c.HistoryTotalRate }},
	{"historyTotalBytes", "OUTPOST_HISTORY_TOTAL_BYTES", "", "bytes per second all connections together may add to history (0: no limit)", false, func(c *Config) any { return &c.HistoryTotalBytes }},
	{"shutdownTimeout", "OUTPOST_SHUTDOWN_TIMEOUT", "shutdown-timeout", "deadline of an orderly shutdown", false, func(c *Config) any { return &c.ShutdownTimeout }},
	{"maxUploadBytes", "OUTPOST_MAX_UPLOAD_BYTES", "max-upload-bytes", "largest data package upload (e.g. 2GiB), also the largest blob; larger ones are refused with 413", false, func(c *Config) any { return &c.MaxUploadBytes }},
	{"missionLogEntryMaxBytes", "OUTPOST_MISSION_LOG_ENTRY_MAX_BYTES", "", "content of one mission log entry (e.g. 64KiB); larger ones are refused with 413", false, func(c *Config) any { return &c.MissionLogEntryMaxBytes }},
	{"missionLogMaxEntries", "OUTPOST_MISSION_LOG_MAX_ENTRIES", "", "log entries one mission may hold; more are refused with 413 (0: no limit)", false, func(c *Config) any { return &c.MissionLogMaxEntries }},
	{"missionLogMaxBytes", "OUTPOST_MISSION_LOG_MAX_BYTES", "", "content bytes of one mission's log entries together (e.g. 16MiB); more are refused with 413 (0: no limit)", false, func(c *Config) any { return &c.MissionLogMaxBytes }},
	{"missionLogEntriesPerMinute", "OUTPOST_MISSION_LOG_ENTRIES_PER_MINUTE", "", "mission log entries one client address may write per minute; more are refused with 429 (0: no limit)", false, func(c *Config) any { return &c.MissionLogEntriesPerMinute }},
	{"missionLogBytesPerMinute", "OUTPOST_MISSION_LOG_BYTES_PER_MINUTE", "", "mission log content bytes one client address may write per minute; more are refused with 429 (0: no limit)", false, func(c *Config) any { return &c.MissionLogBytesPerMinute }},
	{"missionMaxContents", "OUTPOST_MISSION_MAX_CONTENTS", "", "files and CoT uids one mission may hold together; more are refused with 413 (0: no limit)", false, func(c *Config) any { return &c.MissionMaxContents }},
	{"missionMaxChanges", "OUTPOST_MISSION_MAX_CHANGES", "", "change records kept per mission; the oldest go first (0: no limit)", false, func(c *Config) any { return &c.MissionMaxChanges }},
	{"missionMaxChangeBytes", "OUTPOST_MISSION_MAX_CHANGE_BYTES", "", "bytes of change records kept per mission (e.g. 32MiB); the oldest go first (0: no limit)", false, func(c *Config) any { return &c.MissionMaxChangeBytes }},
	{"maxAuditRecords", "OUTPOST_MAX_AUDIT_RECORDS", "max-audit-records", "audit records kept; each one beyond prunes the oldest, counted in outpost_audit_pruned_total (at least 100)", false, func(c *Config) any { return &c.MaxAuditRecords }},
	{"maxExCheckDocuments", "OUTPOST_MAX_EXCHECK_DOCUMENTS", "", "ExCheck templates kept, and checklists kept; more are refused with 409", false, func(c *Config) any { return &c.MaxExCheckDocuments }},
	{"maxExCheckBytes", "OUTPOST_MAX_EXCHECK_BYTES", "", "XML of all ExCheck templates and checklists together (e.g. 256MiB, at least 64KiB); more is refused with 409", false, func(c *Config) any { return &c.MaxExCheckBytes }},
	{"maxVideoConnections", "OUTPOST_MAX_VIDEO_CONNECTIONS", "", "video connections kept; more are refused with 409", false, func(c *Config) any { return &c.MaxVideoConnections }},
	{"maxServerObjects", "OUTPOST_MAX_SERVER_OBJECTS", "", "geo objects and emergencies made through the management API kept, together; a new one beyond is refused with 409 once stale ones are gone", false, func(c *Config) any { return &c.MaxServerObjects }},
	{"maxDataPackages", "OUTPOST_MAX_DATA_PACKAGES", "", "data packages kept; more are refused with 409 (connection packages of users are always stored)", false, func(c *Config) any { return &c.MaxDataPackages }},
	{"diskReserve", "OUTPOST_DISK_RESERVE", "disk-reserve", "free space kept on the data directory's filesystem: below it uploads get 507 and the CoT history pauses (auto: the larger of 5% and 256MiB, at most 10%; a size like 512MiB, a percentage like 5% (at most 50%), or 0: none)", false, func(c *Config) any { return &c.DiskReserve }},
	{"diskFloor", "OUTPOST_DISK_FLOOR", "disk-floor", "hard floor of free space: below it every write that grows the database gets 507 (auto: 16MiB, at most half the reserve; a size or a percentage, never above the reserve)", false, func(c *Config) any { return &c.DiskFloor }},
	{"auditRetention", "OUTPOST_AUDIT_RETENTION", "audit-retention", "how long management API audit records are kept (e.g. 90d; 0 keeps forever)", false, func(c *Config) any { return &c.AuditRetention }},
	{"loginTokenLifetime", "OUTPOST_LOGIN_TOKEN_LIFETIME", "login-token-lifetime", "validity of a token issued by POST /api/login (e.g. 12h)", false, func(c *Config) any { return &c.LoginTokenLifetime }},
	{"channelAuthTimeout", "OUTPOST_CHANNEL_AUTH_TIMEOUT", "channel-auth-timeout", "close a socket.io channel socket that has not authenticated with websocketkey this long after its handshake (100ms-1m)", false, func(c *Config) any { return &c.ChannelAuthTimeout }},
	{"channelUnauthenticatedPerSource", "OUTPOST_CHANNEL_UNAUTHENTICATED_PER_SOURCE", "channel-unauthenticated-per-source", "most socket.io channel sockets one address may hold before they authenticate (1-16; the channel has 32); beyond, 429", false, func(c *Config) any { return &c.ChannelUnauthenticatedPerSource }},
	{"certOfferWait", "OUTPOST_CERT_OFFER_WAIT", "cert-offer-wait", "how long the certificate package of a user created with Certs \"true\" waits for a client with the user's callsign, which is then sent it (0: never sent, since a callsign proves nothing; at most 7d)", false, func(c *Config) any { return &c.CertOfferWait }},
	{"memoryLimit", "OUTPOST_MEMORY_LIMIT", "memory-limit", "soft memory limit of the server, e.g. 256MiB (debug.SetMemoryLimit; at least 32MiB; 0: none, or GOMEMLIMIT when set)", false, func(c *Config) any { return &c.MemoryLimit }},
	{"gcPercent", "OUTPOST_GC_PERCENT", "gc-percent", "garbage collector target: the heap may grow this many percent over what is live before a collection (10-1000; 0: Go's own; GOGC in the environment always wins)", false, func(c *Config) any { return &c.GCPercent }},
	{"idleMemoryReturn", "OUTPOST_IDLE_MEMORY_RETURN", "idle-memory-return", "how long the server must be quiet before the free heap a burst left behind goes back to the system (1s-1h; 0: never early)", false, func(c *Config) any { return &c.IdleMemoryReturn }},
	{"geocoderURL", "OUTPOST_GEOCODER_URL", "geocoder-url", "Nominatim-compatible geocoder (e.g. http://10.0.0.5:8080) for street addresses in geo objects and emergencies (empty: coordinates only, offline)", false, func(c *Config) any { return &c.GeocoderURL }},
	{"repeatInterval", "OUTPOST_REPEAT_INTERVAL", "repeat-interval", "how often geo objects posted with repeat are re-broadcast (1s-24h)", false, func(c *Config) any { return &c.RepeatInterval }},
	{"emergencyRepeatInterval", "OUTPOST_EMERGENCY_REPEAT_INTERVAL", "emergency-repeat-interval", "how often active emergencies are re-broadcast (1s-1h)", false, func(c *Config) any { return &c.EmergencyRepeatInterval }},
	{"certsPath", "OUTPOST_CERTS_PATH", "certs-path", "certificate directory", false, func(c *Config) any { return &c.CertsPath }},
	{"keyType", "OUTPOST_KEY_TYPE", "key-type", "key type of new certificates: rsa (2048) or ecdsa-p256", false, func(c *Config) any { return &c.KeyType }},
	{"keyDir", "OUTPOST_KEY_DIR", "", "server key file", false, func(c *Config) any { return &c.KeyDir }},
	{"pemDir", "OUTPOST_PEM_DIR", "", "server certificate file", false, func(c *Config) any { return &c.PemDir }},
	{"unencryptedKey", "OUTPOST_UNENCRYPTED_KEY", "", "server key file (unencrypted)", false, func(c *Config) any { return &c.UnencryptedKey }},
	{"p12Dir", "OUTPOST_P12_DIR", "", "server PKCS#12 file", false, func(c *Config) any { return &c.P12Dir }},
	{"CA", "OUTPOST_CA", "", "CA certificate file", false, func(c *Config) any { return &c.CA }},
	{"CAkey", "OUTPOST_CA_KEY", "", "CA key file", false, func(c *Config) any { return &c.CAKey }},
	{"CRLFile", "OUTPOST_CRL_FILE", "", "revocation list (JSON)", false, func(c *Config) any { return &c.CRLFile }},
	{"ClientPackages", "OUTPOST_CLIENT_PACKAGES", "", "directory of built client packages", false, func(c *Config) any { return &c.ClientPackages }},
	{"SecretKey", "OUTPOST_SECRET_KEY", "", "session and token signing secret (generated when empty)", true, func(c *Config) any { return &c.SecretKey }},
	{"websocketkey", "OUTPOST_WEBSOCKET_KEY", "", "socket.io channel key (generated when empty)", true, func(c *Config) any { return &c.WebsocketKey }},
	{"password", "OUTPOST_PASSWORD", "", "PKCS#12 password of client packages (generated when empty)", true, func(c *Config) any { return &c.Password }},
	{"federationKeyPassword", "OUTPOST_FEDERATION_KEY_PASSWORD", "", "federation key password", true, func(c *Config) any { return &c.FederationKeyPassword }},
	{"federationCert", "OUTPOST_FEDERATION_CERT", "", "this server's federation certificate file, PEM (empty: the server certificate)", false, func(c *Config) any { return &c.FederationCert }},
	{"federationKey", "OUTPOST_FEDERATION_KEY", "", "this server's federation key file, PEM (empty: the server key)", false, func(c *Config) any { return &c.FederationKey }},
	{"federationPort", "OUTPOST_FEDERATION_PORT", "federation-port", "federation v2 (gRPC, mutual TLS) port; the listener opens at start with federationTrust, otherwise while a managed federate has a CA (-1 turns it off)", false, func(c *Config) any { return &c.FederationPort }},
	{"federationV1Port", "OUTPOST_FEDERATION_V1_PORT", "federation-v1-port", "federation v1 (the legacy TLS stream, official port 9000) port; -1 (the default) leaves it off", false, func(c *Config) any { return &c.FederationV1Port }},
	{"federationTrust", "OUTPOST_FEDERATION_TRUST", "federation-trust", "PEM file of the certificate authorities whose federates are let in and connected to (empty: only the managed federates' CAs)", false, func(c *Config) any { return &c.FederationTrust }},
	{"federationAllow", "OUTPOST_FEDERATION_ALLOW", "federation-allow", "federates let in, by certificate common name or SHA-256 fingerprint (comma-separated; empty: any certificate of the trusted CAs)", false, func(c *Config) any { return &c.FederationAllow }},
	{"federates", "OUTPOST_FEDERATES", "federates", "federates to connect to, name=host:port, with /v1 for federation v1 (comma-separated)", false, func(c *Config) any { return &c.Federates }},
	{"federationName", "OUTPOST_FEDERATION_NAME", "", "this server's name to its federates", false, func(c *Config) any { return &c.FederationName }},
	{"federationQueueAge", "OUTPOST_FEDERATION_QUEUE_AGE", "", "an outbound federate's link down: how long its queued events are kept", false, func(c *Config) any { return &c.FederationQueueAge }},
	{"federationQueueBytes", "OUTPOST_FEDERATION_QUEUE_BYTES", "", "an outbound federate's link down: the bytes of queued events kept (oldest dropped first)", false, func(c *Config) any { return &c.FederationQueueBytes }},
	{"federationMaxHops", "OUTPOST_FEDERATION_MAX_HOPS", "", "hop limit of the events this server's clients send to federates (0: none)", false, func(c *Config) any { return &c.FederationMaxHops }},
	{"AllowedCLIIPs", "OUTPOST_ALLOWED_CLI_IPS", "", "addresses or CIDR ranges allowed to call /Clients and /metrics (comma-separated)", false, func(c *Config) any { return &c.AllowedCLIIPs }},
	{"AllowCLIIPs", "OUTPOST_ALLOW_CLI_IPS", "", "addresses or CIDR ranges allowed to use the command line interface", false, func(c *Config) any { return &c.AllowCLIIPs }},
	{"basemapPath", "OUTPOST_BASEMAP_PATH", "basemap-path", "MBTiles file served as the console's and TAK clients' offline basemap (empty: the newest data package with the keyword basemap)", false, func(c *Config) any { return &c.BasemapPath }},
	{"mesh", "OUTPOST_MESH", "mesh", "the field mesh bridge: off, xml or v1 (the TAK protocol version it sends to the mesh; it reads both)", false, func(c *Config) any { return &c.Mesh }},
	{"meshInterfaces", "OUTPOST_MESH_INTERFACES", "mesh-interfaces", "network interfaces the mesh bridge joins and sends on, e.g. wlan0,bat0 (empty: the system's default)", false, func(c *Config) any { return &c.MeshInterfaces }},
	{"meshSAGroup", "OUTPOST_MESH_SA_GROUP", "", "multicast group of position reports and markers (address:port)", false, func(c *Config) any { return &c.MeshSAGroup }},
	{"meshChatGroup", "OUTPOST_MESH_CHAT_GROUP", "", "multicast group of GeoChat (address:port)", false, func(c *Config) any { return &c.MeshChatGroup }},
	{"meshListenGroups", "OUTPOST_MESH_LISTEN_GROUPS", "", "further multicast groups the bridge only listens to (address:port, comma-separated)", false, func(c *Config) any { return &c.MeshListenGroups }},
	{"meshGroup", "OUTPOST_MESH_GROUP", "", "TAK group of mesh and UDP traffic, both ways", false, func(c *Config) any { return &c.MeshGroup }},
	{"meshTTL", "OUTPOST_MESH_TTL", "", "TTL of the datagrams the bridge sends (1: this network only)", false, func(c *Config) any { return &c.MeshTTL }},
	{"meshMaxDatagram", "OUTPOST_MESH_MAX_DATAGRAM", "", "largest datagram read or sent; larger events are not sent", false, func(c *Config) any { return &c.MeshMaxDatagram }},
	{"meshMaxSources", "OUTPOST_MESH_MAX_SOURCES", "", "mesh and UDP device addresses tracked at once, per listener", false, func(c *Config) any { return &c.MeshMaxSources }},
	{"meshIdleTimeout", "OUTPOST_MESH_IDLE_TIMEOUT", "", "a mesh or UDP device silent this long is forgotten", false, func(c *Config) any { return &c.MeshIdleTimeout }},
	{"meshDirectPort", "OUTPOST_MESH_DIRECT_PORT", "", "UDP port of a mesh device that events addressed to it are sent to (0: not sent)", false, func(c *Config) any { return &c.MeshDirectPort }},
	{"udpPort", "OUTPOST_UDP_PORT", "udp-port", "CoT over unicast UDP port, e.g. 4242 (-1 disables)", false, func(c *Config) any { return &c.UDPPort }},
}

func fieldByKey(key string) (field, bool) {
	for _, f := range fields {
		if f.key == key {
			return f, true
		}
	}
	return field{}, false
}

// set parses s into the field's value.
func (f field) set(c *Config, s string) error {
	switch p := f.ptr(c).(type) {
	case *string:
		*p = s
	case *int:
		n, err := parseSize(s)
		if err != nil || n != int64(int(n)) {
			return keyErr(f.key, fmt.Sprintf("%q is not a whole number", s))
		}
		*p = int(n)
	case *int64:
		n, err := parseSize(s)
		if err != nil {
			return keyErr(f.key, fmt.Sprintf("%q is not a whole number", s))
		}
		*p = n
	case *time.Duration:
		d, err := ParseDuration(s)
		if err != nil {
			return keyErr(f.key, err.Error())
		}
		*p = d
	case *[]string:
		*p = splitList(s)
	case *diskspace.Amount:
		a, err := diskspace.ParseAmount(s)
		if err != nil {
			return keyErr(f.key, err.Error())
		}
		*p = a
	default:
		return keyErr(f.key, "unsupported type")
	}
	return nil
}

// setList sets a list value from a YAML sequence.
func (f field) setList(c *Config, items []string) error {
	p, ok := f.ptr(c).(*[]string)
	if !ok {
		return keyErr(f.key, "takes one value, not a list")
	}
	*p = items
	return nil
}

// parseSize accepts a whole number with an optional KiB/MiB/GiB suffix.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	var mult int64 = 1
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, err
	}
	if n > math.MaxInt64/mult || n < math.MinInt64/mult {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return n * mult, nil
}

// ParseDuration accepts Go durations ("90s", "36h"), days ("7d") and plain
// numbers of seconds ("1.0", as the spec writes WRAP_SSL_TIMEOUT).
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || f > 1e9 {
			return 0, fmt.Errorf("%q is out of range", s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	if strings.HasSuffix(s, "d") {
		n, err := strconv.ParseFloat(strings.TrimSuffix(s, "d"), 64)
		if err != nil || n < 0 || n > 1e5 {
			return 0, fmt.Errorf("%q is not a duration (e.g. 7d, 36h, 90s)", s)
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (e.g. 7d, 36h, 90s)", s)
	}
	return d, nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
