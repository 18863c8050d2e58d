package appliance

// The listeners, wired (architecture.md "The five listeners"): which are
// enabled, on which address, with which handler and limits.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/admin"
	"outpost/appliance/broker"
	"outpost/appliance/config"
	"outpost/appliance/federation"
	"outpost/appliance/httpapi"
	"outpost/appliance/marti"
	"outpost/appliance/mesh"
	"outpost/appliance/metrics"
	"outpost/appliance/mgmt"
	"outpost/appliance/netx"
	"outpost/appliance/objects"
	"outpost/appliance/pki"
	"outpost/appliance/stream"
	"outpost/web"
)

// multipartSlack is what a request body may carry beyond maxUploadBytes
// (multipart headers and boundaries); the handlers enforce the upload limit
// itself, this bounds the body as a whole.
const multipartSlack = 1 << 20

func (a *Appliance) addr(port int) string {
	return net.JoinHostPort(a.cfg.Bind, strconv.Itoa(port))
}

// add registers a listener; a negative port (l nil) logs it as disabled.
func (a *Appliance) add(name string, port int, l listener) {
	if port < 0 {
		a.log.Info("listener disabled", "listener", name)
		return
	}
	a.names = append(a.names, name)
	a.listeners[name] = l
}

// httpListener builds an HTTP listener whose requests are counted.
func (a *Appliance) httpListener(name string, nc netx.Config, h http.Handler, lim httpapi.Limits) *httpapi.Listener {
	return httpapi.NewListener(name, nc, a.metrics.Wrap(name, h), lim, a.log)
}

// buildListeners creates every enabled listener (not yet bound). Their
// connections count against limits shared by kind (docs: RELIABILITY.md):
// the CoT listeners share a per-source cap and each has its own total; the
// HTTP listeners share a per-source and a total cap; the TLS listeners share
// the caps on handshakes in flight.
func (a *Appliance) buildListeners(ctx context.Context) error {
	cfg := &a.cfg
	serverUID := config.ServerUID(cfg.SecretKey)
	cotPerSource := netx.NewLimits(cfg.MaxConnectionsPerSource, 0)
	httpConns := netx.NewLimits(cfg.HTTPMaxConnectionsPerSource, cfg.HTTPMaxConnections)
	handshakes := netx.NewLimits(cfg.MaxPendingHandshakesPerSource, cfg.MaxPendingHandshakes)
	tlsNet := func(port int, c *tls.Config, conns ...*netx.Limits) netx.Config {
		return netx.Config{Addr: a.addr(port), Conns: conns, TLS: c, HandshakeTimeout: cfg.SSLHandshakeTimeout,
			Handshakes: handshakes, Classify: classifyHandshake}
	}
	maxBody := cfg.MaxUploadBytes + multipartSlack
	api := httpapi.Limits{Idle: 2 * time.Minute, BodyTimeout: cfg.HTTPBodyTimeout, MaxBody: maxBody}
	a.metrics = metrics.New(metrics.Sources{Broker: a.broker, Listeners: a.namedListeners, Websocket: a.websocketStats,
		History: a.history, Audit: a.store.Accounts(), Space: a.space})

	if cfg.RESTPort >= 0 {
		a.buildManagement()
		a.add(netx.ListenerREST, cfg.RESTPort, a.httpListener(netx.ListenerREST,
			netx.Config{Addr: a.addr(cfg.RESTPort), Conns: []*netx.Limits{httpConns}}, a.mgmt, api))
	} else {
		a.add(netx.ListenerREST, -1, nil)
	}
	// The client API: the same handler on 8080 and 8443 (api.md §1); its CoT
	// websockets are sessions like those of the CoT listeners, with their
	// limits.
	a.buildClientAPI(serverUID)
	// httpAccess (docs/access.md "The listeners"): 8080 asks for no
	// credential; it may be kept to this machine or not served.
	httpHost, httpPort := cfg.HTTPListen()
	a.add(netx.ListenerHTTP, httpPort, a.httpListener(netx.ListenerHTTP,
		netx.Config{Addr: net.JoinHostPort(httpHost, strconv.Itoa(httpPort)), Conns: []*netx.Limits{httpConns}}, a.marti, api))
	a.add(netx.ListenerCoTTCP, cfg.CoTPort, stream.New(stream.Config{
		Name:        netx.ListenerCoTTCP,
		Net:         netx.Config{Addr: a.addr(cfg.CoTPort), Conns: []*netx.Limits{cotPerSource, netx.NewLimits(0, cfg.MaxConnections)}},
		IdleTimeout: cfg.CoTIdleTimeout, WriteTimeout: cfg.WriteTimeout, MaxMessage: cfg.MaxMessageBytes,
		MaxEventsPerSecond: cfg.ClientEventsPerSecond, MaxBytesPerSecond: cfg.ClientBytesPerSecond,
		ServerUID: serverUID, Broker: a.broker, Logger: a.log,
	}))

	// Mutual TLS (api.md §5.8): client certificates signed by our CA, revoked
	// ones refused, handshakes bounded by WRAP_SSL_TIMEOUT in their own
	// goroutines, silent connections closed after SSL_SOCK_TIMEOUT.
	mtls := a.pki.ServerTLSConfig()
	if cfg.SSLCoTPort >= 0 {
		a.cotTLS = stream.New(stream.Config{
			Name:     netx.ListenerCoTTLS,
			Net:      tlsNet(cfg.SSLCoTPort, mtls, cotPerSource, netx.NewLimits(0, cfg.MaxConnections)),
			Identify: a.ids.IdentifyCoT, IdleTimeout: cfg.SSLSockTimeout, WriteTimeout: cfg.WriteTimeout,
			MaxMessage: cfg.MaxMessageBytes, MaxEventsPerSecond: cfg.ClientEventsPerSecond, MaxBytesPerSecond: cfg.ClientBytesPerSecond,
			ServerUID: serverUID, Broker: a.broker, Logger: a.log,
		})
		a.add(netx.ListenerCoTTLS, cfg.SSLCoTPort, a.cotTLS)
	} else {
		a.add(netx.ListenerCoTTLS, -1, nil)
	}
	if cfg.HTTPSPort >= 0 {
		a.httpsGuard = marti.NewHTTPSGuard(a.pki.IsRevoked, a.log.With("listener", netx.ListenerHTTPS))
		a.add(netx.ListenerHTTPS, cfg.HTTPSPort, a.httpListener(netx.ListenerHTTPS, tlsNet(cfg.HTTPSPort, mtls, httpConns), a.httpsGuard.Middleware(a.marti),
			httpapi.Limits{Idle: cfg.SSLSockTimeout, BodyTimeout: cfg.HTTPBodyTimeout, MaxBody: maxBody, ConnState: a.httpsGuard.ConnState}))
	} else {
		a.add(netx.ListenerHTTPS, -1, nil)
	}

	// Certificate enrollment (protocol.md §8): TLS with the server certificate, no
	// client certificate (the client has none yet), HTTP Basic auth against
	// system users. Its requests are small, so reading one may not take long.
	if cfg.EnrollPort >= 0 {
		a.enroll = marti.NewEnrollmentHandler(marti.EnrollOptions{
			Authority: a.pki, Accounts: a.store.Accounts(), Guard: a.guard, Logger: a.log,
			TokenKey: []byte(cfg.EnrollTokenKey),
		})
		a.add(netx.ListenerEnroll, cfg.EnrollPort, a.httpListener(netx.ListenerEnroll, tlsNet(cfg.EnrollPort, a.pki.EnrollmentTLSConfig(), httpConns),
			a.enroll, httpapi.Limits{Idle: cfg.SSLSockTimeout, BodyTimeout: cfg.HTTPBodyTimeout, MaxBody: 64 << 10, ReadTimeout: 30 * time.Second}))
	} else {
		a.add(netx.ListenerEnroll, -1, nil)
	}
	if err := a.addMesh(ctx); err != nil {
		return err
	}
	if f := a.fed.Federation(); f != nil {
		a.add(federation.ListenerName, 0, f)
		if v1 := f.V1(); v1 != nil {
			a.add(federation.ListenerV1Name, 0, v1)
		}
	} else {
		a.add(federation.ListenerName, -1, nil)
	}
	return nil
}

// buildManagement creates the management API and its socket.io channel.
func (a *Appliance) buildManagement() {
	cfg := &a.cfg
	a.channel = mgmt.NewChannel(mgmt.ChannelOptions{
		WebsocketKey: cfg.WebsocketKey, Clients: a.broker.Clients, Services: a.services,
		PublicHost: cfg.PublicHost, Version: Version(), StartTime: a.started, DataDir: cfg.DataDir,
		AuthTimeout: cfg.ChannelAuthTimeout, MaxUnauthenticatedPerSource: cfg.ChannelUnauthenticatedPerSource,
		Logs: a.tap, Logger: a.log,
		Addresses: config.ReachAddresses(cfg), AdminTokenFile: filepath.Join(cfg.DataDir, admin.AdminTokenFile),
	})
	a.mgmt = mgmt.New(mgmt.Options{
		Broker: a.broker, Accounts: a.store.Accounts(), Files: a.store.Files(), Missions: a.store.Missions(), Events: a.store.Events(),
		Users: a.users, Directory: a.directory, Guard: a.guard, Objects: a.objects, AllowedClientIP: a.allowedCLI.Contains,
		MaxUploadBytes: cfg.MaxUploadBytes, Space: a.space, LoginTokenLifetime: cfg.LoginTokenLifetime, AuditRetention: cfg.AuditRetention,
		Metrics: a.metrics.Handler(), Channel: a.channel, Logger: a.log,
		Console: web.FS(), BasemapPath: cfg.BasemapPath, BasemapDir: filepath.Join(cfg.DataDir, "basemaps"),
		PublicHost: cfg.PublicHost,
		CertOffer:  a.certOffer(config.ServerUID(cfg.SecretKey)),
		Federation: a.fed.View,
		Federates:  a.store.Federates(), FederatesChanged: a.fed.Changed, FederateAnnounced: a.fed.Announced,
		FederationStatus: a.fed.Status,
	})
}

// buildClientAPI creates the client API of 8080 and 8443.
func (a *Appliance) buildClientAPI(serverUID string) {
	cfg := &a.cfg
	a.marti = marti.NewHandler(marti.Options{
		Version: Version(), Hostname: cfg.PublicHost, NodeID: config.NodeID(cfg.SecretKey), Broker: a.broker,
		Missions: a.store.Missions(), Files: a.store.Files(), Checklists: a.store.Checklists(), Events: a.store.Events(),
		Videos:    a.store.Videos(),
		Directory: a.directory, Users: a.users, Guard: a.guard,
		MaxUploadBytes: cfg.MaxUploadBytes, Space: a.space, Identify: a.pki.Identity,
		MissionLogsPerMinute: cfg.MissionLogEntriesPerMinute, MissionLogBytesPerMinute: cfg.MissionLogBytesPerMinute,
		MissionChanged: a.fed.MissionChanged,
		Websocket: marti.WebsocketOptions{
			MaxSockets: cfg.MaxConnections, MaxMessage: cfg.MaxMessageBytes, IdleTimeout: cfg.SSLSockTimeout,
			WriteTimeout: cfg.WriteTimeout, MaxEventsPerSecond: cfg.ClientEventsPerSecond, MaxBytesPerSecond: cfg.ClientBytesPerSecond,
		},
		Repeater: marti.RepeaterOptions{Objects: a.store.Objects(), Period: cfg.EmergencyRepeatInterval,
			Cancel: func(ctx context.Context, uid string, p access.Principal) error {
				return a.objects.CancelEmergency(ctx, uid, objects.Caller{Name: p.Owner(), Admin: p.Admin(), Sees: p.Reads()})
			}},
		Logger: a.log,
	})
	a.fed.SetNotify(a.marti.NotifyFederated)
}

// addMesh adds the mesh bridge and the UDP input when configured (not yet
// bound). Their devices are anonymous clients in meshGroup, which must
// exist.
func (a *Appliance) addMesh(ctx context.Context) error {
	cfg := &a.cfg
	if cfg.Mesh == config.MeshOff && cfg.UDPPort < 0 {
		a.add(mesh.ListenerName, -1, nil)
		a.add(mesh.InputListenerName, -1, nil)
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
	bridge, input := mesh.FromConfig(cfg, mask, a.broker, a.log)
	if bridge != nil {
		a.add(mesh.ListenerName, 0, bridge)
	} else {
		a.add(mesh.ListenerName, -1, nil)
	}
	if input != nil {
		a.add(mesh.InputListenerName, 0, input)
	} else {
		a.add(mesh.InputListenerName, -1, nil)
	}
	return nil
}

// classifyHandshake names revocations among failed TLS handshakes (netx
// classifies the rest).
func classifyHandshake(err error) string {
	if errors.Is(err, pki.ErrRevoked) {
		return "revoked"
	}
	return ""
}

// disconnectRevoked cuts off every connected client whose certificate is
// revoked (api.md §5.11): CoT sessions on 8089, HTTPS connections and CoT
// websockets on 8443, federates.
func (a *Appliance) disconnectRevoked() {
	n := 0
	if a.cotTLS != nil {
		n += a.cotTLS.CloseWhere(a.pki.IsRevoked, broker.ReasonRevoked)
	}
	if a.httpsGuard != nil {
		n += a.httpsGuard.CloseRevoked()
	}
	if a.marti != nil {
		n += a.marti.CloseWhere(a.pki.IsRevoked, broker.ReasonRevoked)
	}
	n += a.fed.EndRevoked() // a revoked federate is refused when it connects again
	a.log.Info("revocation list grew; revoked clients disconnected", "connections", n)
}

// certOffer configures the offer of new users' certificate packages to
// their devices: over the CoT connections only, never a datagram.
func (a *Appliance) certOffer(serverUID string) mgmt.CertOfferOptions {
	wait := a.cfg.CertOfferWait
	if wait == 0 {
		wait = -1 // never sent
	}
	return mgmt.CertOfferOptions{Wait: wait, ServerUID: serverUID,
		Listeners: []string{netx.ListenerCoTTCP, netx.ListenerCoTTLS, marti.WebsocketListener}}
}
