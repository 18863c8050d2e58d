package mesh

import (
	"log/slog"
	"net/netip"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
)

// Sources configures how datagrams from devices are received: the part
// Bridge and Input share.
type Sources struct {
	// In and Out are the group masks of mesh traffic (access.md "Groups"):
	// what devices send goes to In; the bridge sends what is for Out to the
	// mesh, and a device reads what is addressed to it within Out. Both
	// zero: __ANON__.
	In, Out uint64

	// MaxDatagram is the largest datagram read or sent (DefaultMaxDatagram).
	// A larger one in is dropped; an event that encodes larger is not sent
	// (never fragmented).
	MaxDatagram int
	// MaxSources is how many device addresses are tracked at once
	// (DefaultMaxSources), MaxSourcesPerHost how many of them may share one
	// IP address (DefaultMaxSourcesPerHost). Datagrams from further ones
	// are dropped as over budget until a place frees.
	MaxSources, MaxSourcesPerHost int
	// IdleTimeout: a device silent this long is forgotten (its markers get
	// a departure, as a TCP client's do). DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxEventsPerSecond and MaxBytesPerSecond are each device's budget,
	// with bursts of cotsession.PaceBurst; datagrams over it are dropped.
	// 0: no limit.
	MaxEventsPerSecond, MaxBytesPerSecond int

	ServerUID string
	Broker    *broker.Broker
	Logger    *slog.Logger
	Now       func() time.Time
}

// Defaults of Sources.
const (
	DefaultMaxDatagram       = 8 << 10
	DefaultMaxSources        = 256
	DefaultMaxSourcesPerHost = 8
	DefaultIdleTimeout       = 5 * time.Minute
	// MaxDatagramLimit is the largest UDP payload over IPv4.
	MaxDatagramLimit = 65507
)

func (s *Sources) fill() {
	if s.MaxDatagram <= 0 {
		s.MaxDatagram = DefaultMaxDatagram
	}
	s.MaxDatagram = min(s.MaxDatagram, MaxDatagramLimit)
	if s.MaxSources <= 0 {
		s.MaxSources = DefaultMaxSources
	}
	if s.MaxSourcesPerHost <= 0 {
		s.MaxSourcesPerHost = DefaultMaxSourcesPerHost
	}
	if s.IdleTimeout <= 0 {
		s.IdleTimeout = DefaultIdleTimeout
	}
	if s.In == 0 && s.Out == 0 {
		s.In, s.Out = broker.AnonGroup, broker.AnonGroup
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if s.Now == nil {
		s.Now = time.Now
	}
}

// BridgeConfig configures the multicast bridge.
type BridgeConfig struct {
	Sources

	// Interfaces are the network interfaces to join the groups on and send
	// from (by name, e.g. "wlan0", "bat0"); none: the system's default
	// multicast interface.
	Interfaces []string
	// SA and Chat are the groups the bridge joins and sends to: GeoChat
	// (types b-t-f...) goes to Chat, everything else to SA.
	SA, Chat netip.AddrPort
	// Listen are further groups only listened to (e.g. 239.5.5.55:7171).
	Listen []netip.AddrPort
	// Protocol is what the bridge sends: cot.ProtocolXML or
	// cot.ProtocolV1 (ATAK's mesh "TAK protocol version" 1). It reads both.
	Protocol cot.Protocol
	// TTL of the datagrams sent (DefaultTTL: the local network only).
	TTL int
	// DirectPort: an event a server client addresses to a mesh device
	// (<dest>) goes by unicast to the device's address on this port
	// (ATAK's default UDP input, 4242); 0: such events are not sent.
	DirectPort int
}

// Defaults of BridgeConfig.
var (
	DefaultSA   = netip.MustParseAddrPort("239.2.3.1:6969")
	DefaultChat = netip.MustParseAddrPort("224.10.10.1:17012")
)

const (
	DefaultTTL        = 1
	DefaultDirectPort = 4242
)

// InputConfig configures the unicast UDP input.
type InputConfig struct {
	Sources
	Addr string // host:port to bind, e.g. "0.0.0.0:4242"
}
