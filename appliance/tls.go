package appliance

import (
	"net"

	"outpost/appliance/pki"
)

// publishBoundPorts tells the certificate authority the real ports of the
// listeners configured with port 0, so connection packages built by this
// process name the ports clients can reach.
func (a *Appliance) publishBoundPorts() {
	port := func(name string, configured int) int {
		if configured != 0 {
			return 0 // configured (or disabled): the published default stays
		}
		if l, ok := a.listeners[name]; ok && l.Addr() != nil {
			if ta, ok := l.Addr().(*net.TCPAddr); ok {
				return ta.Port
			}
		}
		return 0
	}
	p := pki.Ports{
		SSLCoT: port(ListenerCoTTLS, a.cfg.SSLCoTPort),
		HTTPS:  port(ListenerHTTPS, a.cfg.HTTPSPort),
		Enroll: port(ListenerEnroll, a.cfg.EnrollPort),
	}
	if p == (pki.Ports{}) {
		return
	}
	if err := a.pki.SetPorts(p); err != nil {
		a.log.Warn("could not publish the bound ports in connection packages", "err", err)
	}
}
