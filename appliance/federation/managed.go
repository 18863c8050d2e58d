package federation

import (
	"crypto/x509"
	"encoding/pem"
	"math"
	"slices"
	"time"

	"outpost/appliance/logx"
)

// Federates managed at run time (docs/federation.md "Managing federates"):
// the appliance hands the store's list to SetManaged after every change it
// makes and every few seconds (a change the command line made in the
// database). A federate of the configuration file keeps its name: a
// managed one of the same name is shadowed, not used.

// Managed is one federate managed at run time.
type Managed struct {
	Name    string
	Address string // host:port to connect to; "": it connects here only
	CAPEM   string // the CA certificates its certificate must chain to
	Enabled bool
	Pin     string // "" or the SHA-256 fingerprint its certificate must have (as Fingerprint writes it)
	// BackoffMin and BackoffMax bound its outbound link's reconnect delay
	// (0: Config's).
	BackoffMin, BackoffMax time.Duration
	// V1, when set, makes its outbound link federation v1 (v1.go) instead
	// of v2; a change of it starts the link again as a change of address
	// does.
	V1 bool
}

// managedFed is a managed federate in use.
type managedFed struct {
	Managed
	pool     *x509.CertPool // nil: no CA yet (it cannot connect either way)
	stop     chan struct{}  // closed when it is removed or changed; nil without a connection to make
	shadowed bool           // a configured federate has its name
}

// SetManaged makes the managed federates those of list: a new one starts
// (its outbound connection, its CA trusted at the next handshakes), a
// removed, disabled or changed one stops (its link ends; changed, it
// starts again as it now is). An unchanged one is left alone.
func (f *Federation) SetManaged(list []Managed) {
	f.manMu.Lock()
	defer f.manMu.Unlock()
	select {
	case <-f.stop:
		return
	default:
	}
	next := make(map[string]*managedFed, len(list))
	for _, m := range list {
		if old := f.managed[m.Name]; old != nil && old.Managed == m {
			next[m.Name] = old
			continue
		}
		next[m.Name] = &managedFed{Managed: m}
	}
	for name, old := range f.managed {
		if next[name] == old {
			continue
		}
		f.stopManaged(old)
		if next[name] == nil {
			f.mu.Lock()
			delete(f.stats, name)
			f.mu.Unlock()
			if f.cfg.Spool != nil {
				_ = f.cfg.Spool.Delete(name, math.MaxInt64) // its queue goes with it
			}
			f.log.Info("managed federate removed", "federate", logx.Clip(name))
		}
	}
	for name, m := range next {
		if f.managed[name] == m {
			continue
		}
		m.shadowed = slices.ContainsFunc(f.cfg.Federates, func(o Outbound) bool { return o.Name == name })
		if m.shadowed {
			f.warn.Warn("managed federate ignored: the configuration names a federate so", "federate", logx.Clip(name))
			continue
		}
		f.statsOf(name)
		if !m.Enabled {
			continue
		}
		m.pool = poolOf(m.CAPEM)
		if m.Address != "" && m.pool != nil {
			if f.cfg.Spool != nil {
				sp := f.newSpooler(name)
				f.mu.Lock()
				f.spoolers[name] = sp
				f.mu.Unlock()
				sp.open()
				sp.drain()
			}
			m.stop = make(chan struct{})
			o := Outbound{Name: name, Address: m.Address, Trusted: m.pool, Pin: m.Pin, BackoffMin: m.BackoffMin, BackoffMax: m.BackoffMax, V1: m.V1}
			f.wg.Add(1)
			go func() { defer f.wg.Done(); f.dialLoop(o, m.stop) }()
		}
		f.log.Info("managed federate started", "federate", logx.Clip(name), "address", logx.Clip(m.Address))
	}
	f.managed = next
	snap := make([]*managedFed, 0, len(next))
	for _, m := range next {
		if m.pool != nil && !m.shadowed {
			snap = append(snap, m)
		}
	}
	f.trustedManaged.Store(&snap)
	f.onDemand(len(snap) > 0)
}

// stopManaged ends what a managed federate runs: its dialler and its link.
func (f *Federation) stopManaged(m *managedFed) {
	if m.stop != nil {
		close(m.stop)
	}
	if m.shadowed {
		return
	}
	f.mu.Lock()
	sp := f.spoolers[m.Name]
	delete(f.spoolers, m.Name)
	f.mu.Unlock()
	if sp != nil {
		sp.close()
	}
	if l := f.linkOf(m.Name); l != nil {
		l.close()
	}
}

// managedFor returns the name of the enabled managed federate whose CA the
// certificate chains to, and whose pin (when it has one) is the
// certificate's fingerprint ("" when none).
func (f *Federation) managedFor(leaf *x509.Certificate, inter *x509.CertPool) string {
	p := f.trustedManaged.Load()
	if p == nil {
		return ""
	}
	fp := ""
	for _, m := range *p {
		if m.Pin != "" {
			if fp == "" {
				fp = Fingerprint(leaf.Raw)
			}
			if fp != m.Pin {
				continue
			}
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: m.pool, Intermediates: inter, CurrentTime: f.cfg.Now(),
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err == nil {
			return m.Name
		}
	}
	return ""
}

// poolOf is the pool of the PEM certificates (nil when there is none).
func poolOf(caPEM string) *x509.CertPool {
	pool := x509.NewCertPool()
	n := 0
	for rest := []byte(caPEM); ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		if c, err := x509.ParseCertificate(blk.Bytes); err == nil && blk.Type == "CERTIFICATE" {
			pool.AddCert(c)
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return pool
}

// managedState is a managed federate's part of its FederateStats (what
// SetManaged made of each; it changes none of them once made).
func (f *Federation) managedState() map[string]*managedFed {
	f.manMu.Lock()
	defer f.manMu.Unlock()
	out := make(map[string]*managedFed, len(f.managed))
	for name, m := range f.managed {
		if !m.shadowed {
			out[name] = m
		}
	}
	return out
}
