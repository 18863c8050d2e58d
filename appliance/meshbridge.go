package appliance

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"outpost/appliance/access"
	"outpost/appliance/config"
	"outpost/appliance/cot"
	"outpost/appliance/mesh"
)

// Listener names of the field mesh (docs/mesh.md).
const (
	ListenerMesh = mesh.ListenerName      // the multicast bridge
	ListenerUDP  = mesh.InputListenerName // unicast CoT over UDP
)

// buildMesh creates the mesh bridge and the UDP input when configured
// (not yet bound). Their devices are anonymous clients in meshGroup, which
// must exist.
func (a *Appliance) buildMesh(ctx context.Context) error {
	cfg := &a.cfg
	if cfg.Mesh == config.MeshOff && cfg.UDPPort < 0 {
		a.add(ListenerMesh, -1, nil)
		a.add(ListenerUDP, -1, nil)
		return nil
	}
	groups, err := a.store.Accounts().Groups(ctx)
	if err != nil {
		return err
	}
	mask := access.MaskOf(groups, []string{cfg.MeshGroup})
	if mask == 0 {
		return fmt.Errorf("config meshGroup: there is no group named %q (create it first, or use __ANON__)", cfg.MeshGroup)
	}
	src := mesh.Sources{
		In: mask, Out: mask, MaxDatagram: cfg.MeshMaxDatagram, MaxSources: cfg.MeshMaxSources, IdleTimeout: cfg.MeshIdleTimeout,
		MaxEventsPerSecond: cfg.ClientEventsPerSecond, MaxBytesPerSecond: cfg.ClientBytesPerSecond,
		ServerUID: "outpost-" + NodeID(cfg.SecretKey), Broker: a.broker, Logger: a.log,
	}
	if cfg.Mesh != config.MeshOff {
		sa, chat, listen := cfg.MeshGroups()
		proto := cot.ProtocolXML
		if cfg.Mesh == config.MeshV1 {
			proto = cot.ProtocolV1
		}
		a.add(ListenerMesh, 0, mesh.NewBridge(mesh.BridgeConfig{Sources: src, Interfaces: cfg.MeshInterfaces,
			SA: sa, Chat: chat, Listen: listen, Protocol: proto, TTL: cfg.MeshTTL, DirectPort: cfg.MeshDirectPort}))
	} else {
		a.add(ListenerMesh, -1, nil)
	}
	a.add(ListenerUDP, cfg.UDPPort, mesh.NewInput(mesh.InputConfig{Sources: src,
		Addr: net.JoinHostPort(cfg.Bind, strconv.Itoa(max(cfg.UDPPort, 0)))}))
	return nil
}
