package config

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"time"

	"outpost/appliance/diskspace"
)

// Config is the whole configuration of one appliance. The zero value is not
// useful: start from Defaults (or Load) and call Validate.
type Config struct {
	// Data and addresses.
	DataDir    string // dataDir: where outpost.db, certs and secrets live
	Bind       string // bind: the address every listener binds to
	PublicHost string // publicHost: the address written into links and client packages
	ServerName string // serverName: the server's name in certificates and truststore file names

	// Listener ports: -1 disables a listener, 0 picks a free port (and logs it).
	RESTPort   int // restPort: management API, socket.io channel, console
	HTTPPort   int // httpPort: client API over HTTP
	HTTPSPort  int // httpsPort: client API over mutual TLS
	CoTPort    int // cotPort: CoT streaming over TCP
	SSLCoTPort int // sslCotPort: CoT streaming over mutual TLS
	EnrollPort int // enrollPort: certificate enrollment over TLS with HTTP Basic auth
	// HTTPAccess limits the client API over HTTP (httpPort), which has no
	// authentication (docs/access.md "The listeners"): HTTPAccessOpen,
	// HTTPAccessLoopback (bound to 127.0.0.1 only) or HTTPAccessOff.
	HTTPAccess string // httpAccess

	// Logging.
	LogFormat string // logFormat: text or json
	LogLevel  string // logLevel: debug, info, warn or error

	// CoT streaming limits.
	CoTIdleTimeout      time.Duration // cotIdleTimeout: a TCP CoT client silent this long is closed
	SSLSockTimeout      time.Duration // SSL_SOCK_TIMEOUT: same for TLS clients (api.md §8)
	SSLHandshakeTimeout time.Duration // WRAP_SSL_TIMEOUT: maximum TLS handshake time (api.md §8)
	WriteTimeout        time.Duration // writeTimeout: a write blocked this long closes the client as a slow consumer
	MaxMessageBytes     int           // maxMessageBytes: one CoT message larger than this disconnects its sender
	MaxConnections      int           // maxConnections: per CoT listener
	QueueSoftBytes      int           // queueSoftBytes: above this, position reports are coalesced per uid
	QueueHardBytes      int           // queueHardBytes: above this, the client is closed as a slow consumer

	// Limits per source address and on work clients can cause (hostile
	// clients on the mesh; RELIABILITY.md). 0 means no limit where noted.
	MaxConnectionsPerSource       int           // maxConnectionsPerSource: CoT connections from one address, both CoT listeners together (0: none)
	MaxPendingHandshakes          int           // maxPendingHandshakes: TLS handshakes in flight, all TLS listeners together
	MaxPendingHandshakesPerSource int           // maxPendingHandshakesPerSource: TLS handshakes in flight from one address
	HTTPMaxConnections            int           // httpMaxConnections: HTTP connections, all HTTP listeners together
	HTTPMaxConnectionsPerSource   int           // httpMaxConnectionsPerSource: HTTP connections from one address (0: none)
	HTTPBodyTimeout               time.Duration // httpBodyTimeout: a request body that sends nothing this long is cut off
	PasswordChecksPerSecond       int           // passwordChecksPerSecond: password checks (PBKDF2) per second, whoever asks
	ClientEventsPerSecond         int           // clientEventsPerSecond: CoT events one connection may send per second before it is paced (0: none)
	ClientBytesPerSecond          int           // clientBytesPerSecond: CoT bytes one connection may send per second before it is paced (0: none)

	// Storage.
	HistoryRetention   time.Duration // historyRetention: how long relayed CoT is kept (0 keeps it forever)
	HistoryMaxBytes    int           // historyMaxBytes: cap of stored CoT history; the heaviest uid's oldest events go first (0: none)
	HistoryClientRate  int           // historyClientRate: events per second one connection may add to history (0: none)
	HistoryClientBytes int           // historyClientBytes: bytes per second one connection may add to history (0: none)
	HistoryTotalRate   int           // historyTotalRate: events per second all connections may add (0: none)
	HistoryTotalBytes  int           // historyTotalBytes: bytes per second all connections may add (0: none)
	ShutdownTimeout    time.Duration // shutdownTimeout: the whole orderly shutdown
	MaxUploadBytes     int64         // maxUploadBytes: largest data package upload (413 above it)
	// diskReserve: free space kept on the data directory's filesystem; below it uploads are
	// refused (507) and the CoT history pauses. Auto: the larger of 5 % and 256 MiB, at most 10 %.
	DiskReserve diskspace.Amount
	// diskFloor: below it every write that grows the database is refused (507). Auto: 16 MiB,
	// at most half the reserve; never above the reserve.
	DiskFloor diskspace.Amount

	// Mission budgets (RELIABILITY.md "Budgets"): what one mission may hold
	// and what one client address may write to mission logs. 0: no limit.
	MissionLogEntryMaxBytes    int // missionLogEntryMaxBytes: content of one log entry (413 above)
	MissionLogMaxEntries       int // missionLogMaxEntries: log entries of one mission (413 above)
	MissionLogMaxBytes         int // missionLogMaxBytes: content bytes of one mission's log entries (413 above)
	MissionLogEntriesPerMinute int // missionLogEntriesPerMinute: log entries one address may write per minute (429 above)
	MissionLogBytesPerMinute   int // missionLogBytesPerMinute: log content bytes one address may write per minute (429 above)
	MissionMaxContents         int // missionMaxContents: files and CoT uids of one mission together (413 above)
	MissionMaxChanges          int // missionMaxChanges: change records kept per mission; the oldest go first
	MissionMaxChangeBytes      int // missionMaxChangeBytes: bytes of change records kept per mission; the oldest go first
	// Budgets of the tables clients can grow (RELIABILITY.md "Budgets").
	MaxAuditRecords     int // maxAuditRecords: audit records kept; beyond, the oldest are pruned
	MaxExCheckDocuments int // maxExCheckDocuments: ExCheck templates kept, and checklists kept (409 beyond)
	MaxExCheckBytes     int // maxExCheckBytes: XML of every ExCheck template and checklist together (409 beyond)
	MaxVideoConnections int // maxVideoConnections: video connections kept (409 beyond)
	MaxServerObjects    int // maxServerObjects: geo objects and emergencies made through the management API (409 beyond)
	MaxDataPackages     int // maxDataPackages: data packages kept (409 beyond)

	// Management API (api.md §5).
	AuditRetention     time.Duration // auditRetention: how long audit records are kept (0 keeps them forever)
	LoginTokenLifetime time.Duration // loginTokenLifetime: validity of a token from POST /api/login
	// The socket.io channel (docs/socketio.md): a socket that has not
	// authenticated with websocketkey this long after its handshake is
	// closed; one address may hold this many such sockets at once (the
	// channel has 32; authenticated sockets do not count).
	ChannelAuthTimeout              time.Duration // channelAuthTimeout
	ChannelUnauthenticatedPerSource int           // channelUnauthenticatedPerSource
	// certOfferWait: how long the certificate package of a user created
	// with Certs "true" waits for a client with the user's callsign, which
	// is then sent it (docs/api-management.md); 0: never sent.
	CertOfferWait time.Duration

	// Memory.
	MemoryLimit int // memoryLimit: soft limit of the Go heap in bytes (debug.SetMemoryLimit); 0: none
	GCPercent   int // gcPercent: the garbage collector's target (debug.SetGCPercent); 0: the Go runtime's (GOGC)
	// idleMemoryReturn: how long the server must be quiet before the free heap a burst left behind goes
	// back to the system; 0: only as the Go runtime returns it
	IdleMemoryReturn time.Duration

	// Geo objects and emergencies (api.md §2.4, §2.10).
	GeocoderURL             string        // geocoderURL: a Nominatim-compatible service for street addresses ("" none)
	RepeatInterval          time.Duration // repeatInterval: re-broadcast period of geo objects posted with repeat
	EmergencyRepeatInterval time.Duration // emergencyRepeatInterval: re-broadcast period of active emergencies

	// Certificates (api.md §5.12). Empty file locations mean the
	// spec's default names inside CertsPath.
	CertsPath      string // certsPath
	KeyType        string // keyType: rsa or ecdsa-p256
	KeyDir         string // keyDir: server.key
	PemDir         string // pemDir: server.pem
	UnencryptedKey string // unencryptedKey: server.key.unencrypted
	P12Dir         string // p12Dir: server.p12
	CA             string // CA: ca.pem
	CAKey          string // CAkey: ca.key
	CRLFile        string // CRLFile: the JSON revocation list (api.md §2.15)
	ClientPackages string // ClientPackages: directory of built client packages

	// Secrets. Empty values are generated on first run and persisted in
	// <DataDir>/secrets.yaml (see EnsureSecrets); there are no fixed defaults.
	SecretKey             string // SecretKey
	WebsocketKey          string // websocketkey
	Password              string // password: PKCS#12 password of client packages
	EnrollTokenKey        string // enrollTokenKey in secrets.yaml only: HS256 key of POST /oauth/token's tokens
	FederationKeyPassword string // federationKeyPassword
	FederationCert        string // federationCert
	FederationKey         string // federationKey

	// IP allow-lists (api.md §5.4): single addresses or CIDR ranges.
	AllowedCLIIPs []string // AllowedCLIIPs: who may call /Clients
	AllowCLIIPs   []string // AllowCLIIPs: who may use the local command-line interface

	// Web console (console.md "Web console").
	BasemapPath string // basemapPath: an MBTiles file served as the offline basemap (empty: an uploaded one)

	// The field mesh (docs/mesh.md): the multicast bridge and the unicast UDP input.
	Mesh             string        // mesh: off, xml or v1 (what the bridge sends; it reads both)
	MeshInterfaces   []string      // meshInterfaces: interfaces to join and send on (empty: the system's default)
	MeshSAGroup      string        // meshSAGroup: the SA group, address:port
	MeshChatGroup    string        // meshChatGroup: the GeoChat group, address:port
	MeshListenGroups []string      // meshListenGroups: further groups only listened to
	MeshGroup        string        // meshGroup: the TAK group of mesh and UDP traffic, both ways
	MeshTTL          int           // meshTTL: TTL of the datagrams sent
	MeshMaxDatagram  int           // meshMaxDatagram: largest datagram read or sent
	MeshMaxSources   int           // meshMaxSources: device addresses tracked at once
	MeshIdleTimeout  time.Duration // meshIdleTimeout: a device silent this long is forgotten
	MeshDirectPort   int           // meshDirectPort: port of a device that events addressed to it go to (0: none)
	UDPPort          int           // udpPort: unicast CoT over UDP (-1 disables)

	// Federation (docs/federation.md).
	FederationPort    int      // federationPort: federation v2 listener (-1: federation off; without federationTrust it opens only while a managed federate has a CA)
	FederationV1Port  int      // federationV1Port: federation v1 listener (-1, the default: none)
	FederationTrust   string   // federationTrust: PEM file of the CAs whose federates are trusted
	FederationAllow   []string // federationAllow: federates let in by certificate common name or SHA-256 fingerprint (empty: any of the trusted CAs)
	Federates         []string // federates: outbound federates, name=host:port
	FederationName    string   // federationName: this server's name to federates (default: serverName)
	FederationMaxHops int      // federationMaxHops: hop limit of events that start here (0: none)
	// The persistent outbound queue of each outbound federate while its
	// link is down (docs/federation.md "Disruption tolerance").
	FederationQueueAge   time.Duration // federationQueueAge: events older than this are dropped from it
	FederationQueueBytes int64         // federationQueueBytes: above this, its oldest events are dropped
}

// MaxChannelUnauthenticatedPerSource is the largest
// channelUnauthenticatedPerSource: half of the socket.io channel's 32
// sockets (mgmt.DefaultChannelSockets), so that no address can hold them
// all before authenticating.
const MaxChannelUnauthenticatedPerSource = 16

// MinMemoryLimit is the smallest memoryLimit accepted: below it the
// garbage collector would run nearly all the time.
const MinMemoryLimit = 32 << 20

// Defaults returns the configuration used when nothing is configured.
// PublicHost and CertsPath are derived later by Finish when left empty.
func Defaults() Config {
	return Config{
		DataDir:             "./outpost-data",
		Bind:                "0.0.0.0",
		ServerName:          "outpost",
		RESTPort:            19023,
		HTTPPort:            8080,
		HTTPSPort:           8443,
		CoTPort:             8087,
		SSLCoTPort:          8089,
		EnrollPort:          8446,
		LogFormat:           "text",
		HTTPAccess:          HTTPAccessOpen,
		LogLevel:            "info",
		CoTIdleTimeout:      60 * time.Second,
		SSLSockTimeout:      60 * time.Second,
		SSLHandshakeTimeout: time.Second,
		WriteTimeout:        15 * time.Second,
		MaxMessageBytes:     64 << 10,
		MaxConnections:      4096,
		QueueSoftBytes:      1 << 20,
		QueueHardBytes:      16 << 20,

		MaxConnectionsPerSource:       64,
		MaxPendingHandshakes:          1024,
		MaxPendingHandshakesPerSource: 16,
		HTTPMaxConnections:            1024,
		HTTPMaxConnectionsPerSource:   64,
		HTTPBodyTimeout:               30 * time.Second,
		PasswordChecksPerSecond:       10,
		ClientEventsPerSecond:         100,
		ClientBytesPerSecond:          1 << 20,

		ChannelAuthTimeout:              10 * time.Second,
		ChannelUnauthenticatedPerSource: 4,
		CertOfferWait:                   0, // off: a callsign proves nothing (api-management.md)

		HistoryRetention:           7 * 24 * time.Hour,
		HistoryMaxBytes:            1 << 30,
		HistoryClientRate:          10,
		HistoryClientBytes:         64 << 10,
		HistoryTotalRate:           1000,
		HistoryTotalBytes:          4 << 20,
		ShutdownTimeout:            10 * time.Second,
		MaxUploadBytes:             2 << 30,
		MissionLogEntryMaxBytes:    64 << 10,
		MissionLogMaxEntries:       10000,
		MissionLogMaxBytes:         16 << 20,
		MissionLogEntriesPerMinute: 60,
		MissionLogBytesPerMinute:   1 << 20,
		MissionMaxContents:         10000,
		MissionMaxChanges:          10000,
		MissionMaxChangeBytes:      32 << 20,
		AuditRetention:             90 * 24 * time.Hour,
		LoginTokenLifetime:         12 * time.Hour,
		RepeatInterval:             60 * time.Second,
		EmergencyRepeatInterval:    3 * time.Second,
		MemoryLimit:                256 << 20,
		GCPercent:                  50,
		IdleMemoryReturn:           10 * time.Second,
		KeyType:                    "rsa",
		AllowedCLIIPs:              []string{"127.0.0.1", "::1"},
		AllowCLIIPs:                []string{"127.0.0.1", "::1"},
		MaxAuditRecords:            100_000,
		MaxExCheckDocuments:        10_000,
		MaxExCheckBytes:            256 << 20,
		MaxVideoConnections:        256,
		MaxServerObjects:           1_000,
		MaxDataPackages:            10_000,
		Mesh:                       MeshOff,
		MeshSAGroup:                "239.2.3.1:6969",
		MeshChatGroup:              "224.10.10.1:17012",
		MeshGroup:                  "__ANON__",
		MeshTTL:                    1,
		MeshMaxDatagram:            8 << 10,
		MeshMaxSources:             256,
		MeshIdleTimeout:            5 * time.Minute,
		MeshDirectPort:             4242,
		UDPPort:                    -1,
		FederationPort:             9001,
		FederationV1Port:           -1,
		FederationQueueAge:         time.Hour,
		FederationQueueBytes:       64 << 20,
	}
}

// Finish fills the values derived from others: CertsPath (default
// <DataDir>/certs) and PublicHost (default: the first non-loopback address).
func (c *Config) Finish() {
	if c.CertsPath == "" && c.DataDir != "" {
		c.CertsPath = filepath.Join(c.DataDir, "certs")
	}
	if c.PublicHost == "" {
		c.PublicHost = DetectPublicHost()
	}
}

// DBPath is the single SQLite file of the appliance.
func (c *Config) DBPath() string { return filepath.Join(c.DataDir, "outpost.db") }

type portKey struct {
	key   string
	value int
}

func (c *Config) ports() []portKey {
	return []portKey{
		{"restPort", c.RESTPort}, {"httpPort", c.HTTPPort}, {"httpsPort", c.HTTPSPort},
		{"cotPort", c.CoTPort}, {"sslCotPort", c.SSLCoTPort}, {"enrollPort", c.EnrollPort},
	}
}

// The values of httpAccess.
const (
	HTTPAccessOpen     = "open"     // bound like every listener (bind)
	HTTPAccessLoopback = "loopback" // bound to 127.0.0.1: this machine's clients only
	HTTPAccessOff      = "off"      // not served, whatever httpPort says
)

// HTTPListen is where the client API over HTTP listens once httpAccess is
// applied: the address to bind and the port (-1: not served).
func (c *Config) HTTPListen() (host string, port int) {
	switch c.HTTPAccess {
	case HTTPAccessOff:
		return c.Bind, -1
	case HTTPAccessLoopback:
		return "127.0.0.1", c.HTTPPort
	}
	return c.Bind, c.HTTPPort
}

// AllowList is a parsed IP allow-list.
type AllowList []netip.Prefix

// ParseAllowList parses single addresses and CIDR ranges.
func ParseAllowList(entries []string) (AllowList, error) {
	out := make(AllowList, 0, len(entries))
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if strings.Contains(e, "/") {
			p, err := netip.ParsePrefix(e)
			if err != nil {
				return nil, fmt.Errorf("%q is not an address or CIDR range", e)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(e)
		if err != nil {
			return nil, fmt.Errorf("%q is not an address or CIDR range", e)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// Contains reports whether ip is in the list.
func (l AllowList) Contains(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range l {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
