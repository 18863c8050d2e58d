package pki

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"time"

	"outpost/appliance/atomicfile"
)

// crlNextUpdate is the nextUpdate distance written into X.509 CRLs. CRLPEM
// signs a fresh list on every call; crl.pem on disk is rewritten on every
// change, and at Open when it is not current (keepCRLPEM).
const crlNextUpdate = 7 * 24 * time.Hour

// crlRenewBefore is how close to its nextUpdate crl.pem is signed again at
// Open.
const crlRenewBefore = crlNextUpdate / 2

// crlRenewCheck is how often WatchCRL looks at crl.pem's nextUpdate (a
// variable for tests).
var crlRenewCheck = time.Hour

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

// keepCRLPEM is crl.pem at Open: the file is read, and signed and written
// again only when it is not current (crlPEMCurrent says why), so a start
// on a full disk writes nothing here. A failed write never stops the
// start: the server enforces crl.json, which it holds in memory, and
// crl.pem is for other tools, which keep reading the previous file (the
// log says until when it is valid) until a change or the next start
// rewrites it.
func (a *Authority) keepCRLPEM() {
	why, until := a.crlPEMCurrent()
	if why == "" {
		return
	}
	if err := a.writeCRLPEM(); err != nil {
		if until.IsZero() {
			a.log.Error("could not write the X.509 CRL; other tools have none until it is written (the server enforces the JSON list)",
				"file", a.crlPEMPath, "why", why, "err", err)
		} else {
			a.log.Error("could not write the X.509 CRL; other tools read the previous one (the server enforces the JSON list)",
				"file", a.crlPEMPath, "why", why, "previous_valid_until", until, "err", err)
		}
		return
	}
	a.log.Info("wrote the X.509 CRL", "file", a.crlPEMPath, "why", why)
}

// crlPEMCurrent reads crl.pem and says why it must be written again: ""
// when it is a CRL signed by this CA, lists exactly the revocations held
// (serial, date to the second, reason) and is valid for more than
// crlRenewBefore. until is the nextUpdate of a parsed file signed by this
// CA that has not passed (zero otherwise).
func (a *Authority) crlPEMCurrent() (why string, until time.Time) {
	data, err := readFileLimited(a.crlPEMPath, maxCRLFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "missing", time.Time{}
	}
	if err != nil {
		return "unreadable", time.Time{}
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "X509 CRL" {
		return "not a PEM X509 CRL", time.Time{}
	}
	crl, err := x509.ParseRevocationList(block.Bytes)
	if err != nil {
		return "does not parse", time.Time{}
	}
	if crl.CheckSignatureFrom(a.caCert) != nil {
		return "not signed by this CA", time.Time{}
	}
	now := a.now()
	if now.Before(crl.NextUpdate) {
		until = crl.NextUpdate
	}
	if crl.NextUpdate.Sub(now) < crlRenewBefore {
		return "due to expire", until
	}
	if !sameRevocations(crl.RevokedCertificateEntries, a.Revocations()) {
		return "differs from the JSON list", until
	}
	return "", until
}

// sameRevocations reports whether a parsed CRL's entries are what CRLPEM
// would write for revs (dates compared to the second, as the CRL holds
// them; an undated revocation matches any date).
func sameRevocations(entries []x509.RevocationListEntry, revs []Revocation) bool {
	if len(entries) != len(revs) {
		return false
	}
	byKey := make(map[string]x509.RevocationListEntry, len(entries))
	for _, e := range entries {
		byKey[serialKey(e.SerialNumber)] = e
	}
	for _, r := range revs {
		e, ok := byKey[serialKey(r.Serial)]
		if !ok || e.ReasonCode != reasonCodes[r.Reason] {
			return false
		}
		if !r.Date.IsZero() && !e.RevocationTime.Equal(r.Date.UTC().Truncate(time.Second)) {
			return false
		}
	}
	return true
}

// CRLPEMFile returns the path of the X.509 CRL written next to the JSON file.
func (a *Authority) CRLPEMFile() string { return a.crlPEMPath }

// WatchCRL polls the JSON file every interval (default 5 s) until ctx ends and
// reloads it when its size or modification time changed, and in any case
// every tenth poll (content hash compared), so a rewrite within the file
// system's timestamp granularity is not missed. About every hour it also
// signs crl.pem again when its nextUpdate comes near (keepCRLPEM), so the
// X.509 list of a server that runs for weeks without a revocation does not
// expire. Run it in its own goroutine.
func (a *Authority) WatchCRL(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = 5 * time.Second
	}
	renewEvery := int(crlRenewCheck / interval)
	if renewEvery < 1 {
		renewEvery = 1
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
		if tick%renewEvery == 0 {
			a.crl.fileMu.Lock() // not between a revocation's list and its crl.pem
			a.keepCRLPEM()
			a.crl.fileMu.Unlock()
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
