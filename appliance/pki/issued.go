package pki

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"time"

	"outpost/appliance/atomicfile"
)

// The issuance index (issued.json in CertsDir) remembers which client
// certificates were issued to which name, so RevokeName can find them all
// (api.md §5.11). Server certificates are not listed: revoking a user who happens
// to share the server's name must not revoke the server.
type issuedJSON struct {
	Certificates []issuedEntry `json:"certificates"`
}

type issuedEntry struct {
	SerialNumber string `json:"serial_number"` // decimal
	Name         string `json:"name"`
	Kind         string `json:"kind"` // "client" (IssueClient) or "enrollment" (SignCSR)
	IssuedAt     string `json:"issued_at"`
	NotAfter     string `json:"not_after"`
}

// indexKeep is how long an expired certificate stays in the index.
const indexKeep = 30 * 24 * time.Hour

func parseIndex(data []byte) (issuedJSON, error) {
	var f issuedJSON
	if !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		return f, errors.New("not a JSON object")
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, err
	}
	return f, nil
}

// recordIssued appends cert to the index (lock file, re-read, atomic write).
// Entries expired for longer than indexKeep are dropped on the way.
func (a *Authority) recordIssued(cert *x509.Certificate, kind string) error {
	a.idxMu.Lock()
	defer a.idxMu.Unlock()
	unlock, err := lockFile(a.indexPath)
	if err != nil {
		return err
	}
	defer unlock()
	f, err := a.readIndex()
	if err != nil {
		return err
	}
	now := a.now().UTC()
	kept := f.Certificates[:0]
	for _, e := range f.Certificates {
		if na, ok := parseDate(e.NotAfter); ok && now.Sub(na) > indexKeep {
			continue
		}
		kept = append(kept, e)
	}
	f.Certificates = append(kept, issuedEntry{
		SerialNumber: cert.SerialNumber.String(),
		Name:         cert.Subject.CommonName,
		Kind:         kind,
		IssuedAt:     now.Format(time.RFC3339),
		NotAfter:     cert.NotAfter.UTC().Format(time.RFC3339),
	})
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", a.indexPath, err)
	}
	return atomicfile.Write(a.indexPath, append(data, '\n'), 0o600)
}

// readIndex reads the index; a missing file is an empty index, a malformed
// one is an error naming the file (it is never overwritten blindly).
func (a *Authority) readIndex() (issuedJSON, error) {
	data, err := readFileLimited(a.indexPath, maxIndexFile)
	if errors.Is(err, fs.ErrNotExist) {
		return issuedJSON{}, nil
	}
	if err != nil {
		return issuedJSON{}, err
	}
	f, err := parseIndex(data)
	if err != nil {
		return issuedJSON{}, fmt.Errorf("%s is malformed: %w", a.indexPath, err)
	}
	return f, nil
}

// issuedTo lists the serials of every certificate issued to name.
func (a *Authority) issuedTo(name string) ([]*big.Int, error) {
	f, err := a.readIndex()
	if err != nil {
		return nil, err
	}
	var out []*big.Int
	for _, e := range f.Certificates {
		if e.Name != name {
			continue
		}
		n, err := parseSerial(e.SerialNumber)
		if err != nil {
			a.log.Warn("skipping unreadable serial in the issuance index", "file", a.indexPath, "err", err)
			continue
		}
		out = append(out, n)
	}
	return out, nil
}

// IssuedCert is one entry of the issuance index.
type IssuedCert struct {
	Serial   *big.Int
	Name     string
	Kind     string
	IssuedAt time.Time
	NotAfter time.Time
	Revoked  bool
}

// Issued lists the client certificates issued to name (every name when name
// is empty), with their revocation state.
func (a *Authority) Issued(name string) ([]IssuedCert, error) {
	f, err := a.readIndex()
	if err != nil {
		return nil, err
	}
	var out []IssuedCert
	for _, e := range f.Certificates {
		if name != "" && e.Name != name {
			continue
		}
		n, err := parseSerial(e.SerialNumber)
		if err != nil {
			continue
		}
		ic := IssuedCert{Serial: n, Name: e.Name, Kind: e.Kind, Revoked: a.IsRevoked(n)}
		ic.IssuedAt, _ = parseDate(e.IssuedAt)
		ic.NotAfter, _ = parseDate(e.NotAfter)
		out = append(out, ic)
	}
	return out, nil
}
