package mesh

import (
	"log/slog"
	"net"
	"strconv"

	"outpost/appliance/broker"
	"outpost/appliance/config"
	"outpost/appliance/cot"
)

// FromConfig builds the mesh bridge and the UDP input the configuration
// asks for (nil for one that is off; neither bound yet). Their devices are
// anonymous clients in the groups of mask (meshGroup's).
func FromConfig(cfg *config.Config, mask uint64, b *broker.Broker, log *slog.Logger) (*Bridge, *Input) {
	src := Sources{
		In: mask, Out: mask, MaxDatagram: cfg.MeshMaxDatagram, MaxSources: cfg.MeshMaxSources, IdleTimeout: cfg.MeshIdleTimeout,
		MaxEventsPerSecond: cfg.ClientEventsPerSecond, MaxBytesPerSecond: cfg.ClientBytesPerSecond,
		ServerUID: config.ServerUID(cfg.SecretKey), Broker: b, Logger: log,
	}
	var bridge *Bridge
	if cfg.Mesh != config.MeshOff {
		sa, chat, listen := cfg.MeshGroups()
		proto := cot.ProtocolXML
		if cfg.Mesh == config.MeshV1 {
			proto = cot.ProtocolV1
		}
		bridge = NewBridge(BridgeConfig{Sources: src, Interfaces: cfg.MeshInterfaces,
			SA: sa, Chat: chat, Listen: listen, Protocol: proto, TTL: cfg.MeshTTL, DirectPort: cfg.MeshDirectPort})
	}
	var input *Input
	if cfg.UDPPort >= 0 {
		input = NewInput(InputConfig{Sources: src, Addr: net.JoinHostPort(cfg.Bind, strconv.Itoa(cfg.UDPPort))})
	}
	return bridge, input
}
