package federation

import (
	"crypto/x509"

	"outpost/appliance/logx"
)

// Revoked certificates (docs/federation.md "Revoked certificates"): a
// certificate Config.Revoked reports is refused at every handshake, both
// ways, and every call of an inbound connection made before it was revoked
// is refused too (service.caller). When the revocation list grows, the
// appliance calls EndRevoked: the links whose federate's certificate is
// now revoked end, and their federates are refused when they connect
// again.

// EndRevoked ends every link whose federate's certificate Config.Revoked
// now reports (a link whose certificate is not known ends too: it
// connects again through a handshake that checks it). It returns how many
// ended.
func (f *Federation) EndRevoked() int {
	if f.cfg.Revoked == nil {
		return 0
	}
	f.mu.Lock()
	var ls []*link
	for _, l := range f.links {
		if c := l.cert.Load(); c == nil || f.cfg.Revoked(c) {
			ls = append(ls, l)
		}
	}
	f.mu.Unlock()
	for _, l := range ls {
		l.close()
		f.log.Info("federation link ended: its certificate is revoked", "federate", logx.Clip(l.name), "subject", logx.Clip(subjectOf(l.cert.Load())))
	}
	return len(ls)
}

func subjectOf(c *x509.Certificate) string {
	if c == nil {
		return "(unknown)"
	}
	return c.Subject.String()
}
