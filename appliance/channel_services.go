package appliance

import (
	"net"

	"outpost/appliance/marti"
	"outpost/appliance/mgmt"
)

// What the management channel reports of the appliance and offers to
// devices.

// certOffer configures the offer of new users' certificate packages to
// their devices: over the CoT connections only, never a datagram.
func (a *Appliance) certOffer(nodeID string) mgmt.CertOfferOptions {
	wait := a.cfg.CertOfferWait
	if wait == 0 {
		wait = -1 // never sent
	}
	return mgmt.CertOfferOptions{Wait: wait, ServerUID: "outpost-" + nodeID,
		Listeners: []string{ListenerCoTTCP, ListenerCoTTLS, marti.WebsocketListener}}
}

// services lists the listeners as the channel's serviceInfo and
// systemStatus report them, with FreeTAKServer's names (its client API's
// ports are its data package services).
func (a *Appliance) services() []mgmt.Service {
	names := []struct{ listener, service, fts string }{
		{ListenerCoTTCP, "TCP_CoT_service", ""}, {ListenerCoTTLS, "SSL_CoT_service", ""},
		{ListenerHTTP, "HTTP_TAK_service", "TCP_DataPackage_service"}, {ListenerHTTPS, "HTTPS_TAK_service", "SSL_DataPackage_service"},
		{ListenerREST, "REST_API_service", "Rest_API_service"}, {ListenerEnroll, "Enrollment_service", ""},
	}
	if a.fed != nil && a.fed.Addr() != nil {
		// Federation when its listener is open; off, the channel reports
		// FreeTAKServer's Federation_server_service as "off" on port 0.
		names = append(names, struct{ listener, service, fts string }{ListenerFederation, "Federation_server_service", ""})
	}
	_, httpPort := a.cfg.HTTPListen()
	ports := map[string]int{ListenerCoTTCP: a.cfg.CoTPort, ListenerCoTTLS: a.cfg.SSLCoTPort, ListenerHTTP: httpPort,
		ListenerHTTPS: a.cfg.HTTPSPort, ListenerREST: a.cfg.RESTPort, ListenerEnroll: a.cfg.EnrollPort,
		ListenerFederation: a.cfg.FederationPort}
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
