package appliance

// What the listeners bound, as the rest of the appliance and the tests see
// it: addresses, ports, routes, and the lists the channel and the metrics
// read.

import (
	"net"

	"outpost/appliance/access"
	"outpost/appliance/federation"
	"outpost/appliance/marti"
	"outpost/appliance/metrics"
	"outpost/appliance/mgmt"
	"outpost/appliance/netx"
	"outpost/appliance/pki"
)

// Addrs reports the bound address of every enabled listener.
func (a *Appliance) Addrs() map[string]net.Addr {
	out := map[string]net.Addr{}
	for name, l := range a.listeners {
		if addr := l.Addr(); addr != nil {
			out[name] = addr
		}
	}
	return out
}

// boundPort is the port a listener bound (0 when it is off).
func (a *Appliance) boundPort(name string) int {
	l, ok := a.listeners[name]
	if !ok || l == nil || l.Addr() == nil {
		return 0
	}
	if ta, ok := l.Addr().(*net.TCPAddr); ok {
		return ta.Port
	}
	return 0
}

// publishBoundPorts tells the certificate authority the real ports of the
// listeners configured with port 0, so connection packages built by this
// process name the ports clients can reach.
func (a *Appliance) publishBoundPorts() {
	port := func(name string, configured int) int {
		if configured != 0 {
			return 0 // configured (or disabled): the published default stays
		}
		return a.boundPort(name)
	}
	p := pki.Ports{
		SSLCoT: port(netx.ListenerCoTTLS, a.cfg.SSLCoTPort),
		HTTPS:  port(netx.ListenerHTTPS, a.cfg.HTTPSPort),
		Enroll: port(netx.ListenerEnroll, a.cfg.EnrollPort),
	}
	if p == (pki.Ports{}) {
		return
	}
	if err := a.pki.SetPorts(p); err != nil {
		a.log.Warn("could not publish the bound ports in connection packages", "err", err)
	}
}

// Routes are the routes a listener serves, each with its rule (access.md
// "Route matrix"): netx.ListenerREST, ListenerHTTP or ListenerHTTPS (the
// same client API), ListenerEnroll. Nil for another name or a listener not
// served. After Open.
func (a *Appliance) Routes(listener string) *access.Routes {
	switch listener {
	case netx.ListenerREST:
		if a.mgmt != nil {
			return a.mgmt.Routes()
		}
	case netx.ListenerHTTP, netx.ListenerHTTPS:
		if a.marti != nil && a.listeners[listener] != nil {
			return a.marti.Routes()
		}
	case netx.ListenerEnroll:
		if a.enroll != nil {
			return a.enroll.Routes()
		}
	}
	return nil
}

// namedListeners lists the enabled listeners in order (the metrics').
func (a *Appliance) namedListeners() []metrics.Listener {
	out := make([]metrics.Listener, 0, len(a.names))
	for _, name := range a.names {
		out = append(out, metrics.Listener{Name: name, Listener: a.listeners[name]})
	}
	return out
}

// websocketStats are the CoT websockets' counters (false before the client
// API exists).
func (a *Appliance) websocketStats() (marti.WebsocketStats, bool) {
	if a.marti == nil {
		return marti.WebsocketStats{}, false
	}
	return a.marti.WebsocketStats(), true
}

// services lists the listeners as the channel's serviceInfo and
// systemStatus report them, with FreeTAKServer's names (its client API's
// ports are its data package services).
func (a *Appliance) services() []mgmt.Service {
	names := []struct{ listener, service, fts string }{
		{netx.ListenerCoTTCP, "TCP_CoT_service", ""}, {netx.ListenerCoTTLS, "SSL_CoT_service", ""},
		{netx.ListenerHTTP, "HTTP_TAK_service", "TCP_DataPackage_service"}, {netx.ListenerHTTPS, "HTTPS_TAK_service", "SSL_DataPackage_service"},
		{netx.ListenerREST, "REST_API_service", "Rest_API_service"}, {netx.ListenerEnroll, "Enrollment_service", ""},
	}
	if f := a.fed.Federation(); f != nil && f.Addr() != nil {
		// Federation when its listener is open; off, the channel reports
		// FreeTAKServer's Federation_server_service as "off" on port 0.
		names = append(names, struct{ listener, service, fts string }{federation.ListenerName, "Federation_server_service", ""})
	}
	_, httpPort := a.cfg.HTTPListen()
	ports := map[string]int{netx.ListenerCoTTCP: a.cfg.CoTPort, netx.ListenerCoTTLS: a.cfg.SSLCoTPort, netx.ListenerHTTP: httpPort,
		netx.ListenerHTTPS: a.cfg.HTTPSPort, netx.ListenerREST: a.cfg.RESTPort, netx.ListenerEnroll: a.cfg.EnrollPort,
		federation.ListenerName: a.cfg.FederationPort}
	out := make([]mgmt.Service, 0, len(names))
	for _, n := range names {
		s := mgmt.Service{Name: n.service, Port: ports[n.listener], FTSName: n.fts}
		if l, ok := a.listeners[n.listener]; ok && l.Addr() != nil {
			s.Addr = l.Addr().String()
			if ta, ok := l.Addr().(*net.TCPAddr); ok {
				s.Port = ta.Port
			}
		}
		out = append(out, s)
	}
	return out
}

// FederationStats returns each federate's counters (nil when federation is
// off).
func (a *Appliance) FederationStats() []federation.FederateStats { return a.fed.Stats() }
