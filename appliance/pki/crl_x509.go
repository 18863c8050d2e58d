package pki

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"time"

	"outpost/appliance/atomicfile"
)

// crlNextUpdate is the nextUpdate distance written into X.509 CRLs. CRLPEM
// signs a fresh list on every call; crl.pem on disk is rewritten on every
// change and at Open.
const crlNextUpdate = 7 * 24 * time.Hour

// CRLPEM returns the revocation list as a standard X.509 CRL signed by the CA
// (PEM "X509 CRL"). The JSON file stays the source of truth (api.md §2.15).
func (a *Authority) CRLPEM() ([]byte, error) {
	revs := a.Revocations()
	now := a.now()
	entries := make([]x509.RevocationListEntry, 0, len(revs))
	for _, r := range revs {
		when := r.Date
		if when.IsZero() {
			when = now
		}
		entries = append(entries, x509.RevocationListEntry{
			SerialNumber:   r.Serial,
			RevocationTime: when.UTC(),
			ReasonCode:     reasonCodes[r.Reason], // unknown reasons map to 0 (unspecified)
		})
	}
	tmpl := &x509.RevocationList{
		RevokedCertificateEntries: entries,
		// The CRL number must grow with every list; milliseconds since the
		// epoch do, also across the CLI and the server process.
		Number:     big.NewInt(now.UnixMilli()),
		ThisUpdate: now.UTC(),
		NextUpdate: now.Add(crlNextUpdate).UTC(),
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, a.caCert, a.caKey)
	if err != nil {
		return nil, fmt.Errorf("sign X.509 CRL: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der}), nil
}

// writeCRLPEM refreshes crl.pem next to the JSON file.
func (a *Authority) writeCRLPEM() error {
	data, err := a.CRLPEM()
	if err != nil {
		return err
	}
	return atomicfile.Write(a.crlPEMPath, data, 0o644)
}

// CRLPEMFile returns the path of the X.509 CRL written next to the JSON file.
func (a *Authority) CRLPEMFile() string { return a.crlPEMPath }

// WatchCRL polls the JSON file every interval (default 5 s) until ctx ends and
// reloads it when its size or modification time changed, and in any case
// every tenth poll (content hash compared), so a rewrite within the file
// system's timestamp granularity is not missed. Run it in its own goroutine.
func (a *Authority) WatchCRL(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = 5 * time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var lastSize int64 = -1
	var lastMod time.Time
	statFailed := false
	for tick := 1; ; tick++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := os.Stat(a.cfg.CRLFile)
		if err != nil {
			if !statFailed {
				a.log.Error("cannot see the revocation list; keeping the previous one", "file", a.cfg.CRLFile, "err", err)
				statFailed = true
			}
			continue
		}
		statFailed = false
		if st.Size() == lastSize && st.ModTime().Equal(lastMod) && tick%10 != 0 {
			continue
		}
		lastSize, lastMod = st.Size(), st.ModTime()
		_, _ = a.ReloadCRL() // errors are logged by ReloadCRL; the previous set stays
	}
}
