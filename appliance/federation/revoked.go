package federation

import "outpost/appliance/logx"

// Revoked certificates (docs/federation.md "Revoked certificates"): a
// certificate Config.Revoked reports is refused at every handshake, both
// ways, and every call of an inbound connection made before it was revoked
// is refused too (service.caller). When the revocation list grows, the
// appliance calls EndLinks: every link ends, and each federate connects
// again through a new handshake, where a revoked one is refused.

// EndLinks ends every link now (each federate connects again: outbound
// links after their back-off, inbound ones when their federate calls).
func (f *Federation) EndLinks(why string) {
	f.mu.Lock()
	ls := make([]*link, 0, len(f.links))
	for _, l := range f.links {
		ls = append(ls, l)
	}
	f.mu.Unlock()
	for _, l := range ls {
		l.close()
	}
	if len(ls) > 0 {
		f.log.Info("federation links ended", "links", len(ls), "why", logx.Clip(why))
	}
}
