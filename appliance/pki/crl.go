package pki

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"outpost/appliance/atomicfile"
)

// Reasons are the revocation reasons of api.md §2.15, in the spec's order.
var Reasons = []string{"unspecified", "key_compromise", "ca_compromise", "affiliation_changed", "superseded", "cessation_of_operation", "privilege_withdrawn"}

// reasonCodes maps api.md §2.15 reasons to RFC 5280 CRLReason codes.
var reasonCodes = map[string]int{
	"unspecified":            0,
	"key_compromise":         1,
	"ca_compromise":          2,
	"affiliation_changed":    3,
	"superseded":             4,
	"cessation_of_operation": 5,
	"privilege_withdrawn":    9,
}

// crlJSON is the file format of api.md §2.15. serial_number is written in
// decimal; on read a serial is hex when it starts with "0x", contains ':' or
// contains a letter a-f, and decimal otherwise (see parseSerial).
type crlJSON struct {
	Revoked []crlJSONEntry `json:"revoked_certificates"`
}

type crlJSONEntry struct {
	SerialNumber   string `json:"serial_number"`
	RevocationDate string `json:"revocation_date"` // ISO 8601 UTC
	Reason         string `json:"reason"`
}

// Revocation is one parsed entry of the revocation list.
type Revocation struct {
	Serial *big.Int
	Date   time.Time
	Reason string
}

// crlState holds the revoked set loaded from the JSON file.
type crlState struct {
	mu      sync.RWMutex          // guards revoked, hash, badHash
	revoked map[string]Revocation // key: serialKey(serial)
	hash    [32]byte              // SHA-256 of the file content revoked was loaded from
	badHash [32]byte              // last content that failed to parse (logged once)

	fileMu sync.Mutex // serialises this process's reads-and-applies and read-modify-writes of the file

	subMu   sync.Mutex        // guards subs and nextSub
	subs    map[uint64]func() // OnRevocation callbacks
	nextSub uint64
}

func (s *crlState) init() {
	s.revoked = map[string]Revocation{}
	s.subs = map[uint64]func(){}
}

func serialKey(n *big.Int) string { return n.Text(16) }

func crlPEMPathFor(crlFile string) string {
	p := filepath.Join(filepath.Dir(crlFile), "crl.pem")
	if filepath.Clean(p) == filepath.Clean(crlFile) {
		p = filepath.Join(filepath.Dir(crlFile), "crl.x509.pem")
	}
	return p
}

// parseSerial reads a serial number in decimal or hex (api.md §2.15 says only
// "string"). Hex: "0x" prefix, colon-separated bytes, or any letter a-f.
func parseSerial(s string) (*big.Int, error) {
	v := strings.TrimSpace(s)
	if v == "" || len(v) > 128 {
		return nil, fmt.Errorf("serial number %q: empty or too long", s)
	}
	base := 10
	switch {
	case strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X"):
		v, base = v[2:], 16
	case strings.Contains(v, ":"):
		v, base = strings.ReplaceAll(v, ":", ""), 16
	case strings.ContainsAny(v, "abcdefABCDEF"):
		base = 16
	}
	n, ok := new(big.Int).SetString(v, base)
	if !ok || n.Sign() <= 0 {
		return nil, fmt.Errorf("serial number %q is not a positive decimal or hex number", s)
	}
	return n, nil
}

var dateLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02"}

func parseDate(s string) (time.Time, bool) {
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, strings.TrimSpace(s)); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// parseCRL parses the JSON file. A serial that does not parse makes the whole
// file malformed (the entry could not be enforced). An unknown reason or an
// unreadable date is accepted with a warning: the revocation is still
// enforced, which is the safe side.
func parseCRL(data []byte) (map[string]Revocation, []crlJSONEntry, []string, error) {
	if !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		return nil, nil, nil, errors.New("not a JSON object")
	}
	var f crlJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, nil, nil, err
	}
	set := make(map[string]Revocation, len(f.Revoked))
	var warnings []string
	for i, e := range f.Revoked {
		n, err := parseSerial(e.SerialNumber)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("entry %d: %w", i, err)
		}
		r := Revocation{Serial: n, Reason: e.Reason}
		if _, ok := reasonCodes[e.Reason]; !ok {
			warnings = append(warnings, fmt.Sprintf("entry %d: unknown reason %q (revocation enforced anyway)", i, e.Reason))
		}
		if d, ok := parseDate(e.RevocationDate); ok {
			r.Date = d
		} else {
			warnings = append(warnings, fmt.Sprintf("entry %d: unreadable revocation_date %q", i, e.RevocationDate))
		}
		if _, dup := set[serialKey(n)]; !dup {
			set[serialKey(n)] = r
		}
	}
	return set, f.Revoked, warnings, nil
}

func encodeCRL(entries []crlJSONEntry) ([]byte, error) {
	if entries == nil {
		entries = []crlJSONEntry{}
	}
	data, err := json.MarshalIndent(crlJSON{Revoked: entries}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// openCRL loads crl.json at Open, creating an empty one on first run, and
// keeps crl.pem (keepCRLPEM). A malformed file stops Open: starting with an
// empty set would silently re-admit revoked clients.
func (a *Authority) openCRL() error {
	path := a.cfg.CRLFile
	data, err := readFileLimited(path, maxCRLFile)
	if errors.Is(err, fs.ErrNotExist) {
		data, err = encodeCRL(nil)
		if err != nil {
			return err
		}
		if err := atomicfile.Write(path, data, 0o644); err != nil {
			return err
		}
		a.log.Info("created empty revocation list", "file", path)
	} else if err != nil {
		return fmt.Errorf("load revocation list: %w", err)
	}
	set, _, warnings, err := parseCRL(data)
	if err != nil {
		return fmt.Errorf("%s is malformed: %w", path, err)
	}
	for _, w := range warnings {
		a.log.Warn("revocation list entry", "file", path, "problem", w)
	}
	a.crl.mu.Lock()
	a.crl.revoked, a.crl.hash = set, sha256.Sum256(data)
	a.crl.mu.Unlock()
	a.keepCRLPEM()
	return nil
}

// IsRevoked reports whether serial is on the revocation list.
func (a *Authority) IsRevoked(serial *big.Int) bool {
	if serial == nil {
		return false
	}
	a.crl.mu.RLock()
	_, ok := a.crl.revoked[serialKey(serial)]
	a.crl.mu.RUnlock()
	return ok
}

// Revocations returns the current revocation list, oldest first.
func (a *Authority) Revocations() []Revocation {
	a.crl.mu.RLock()
	out := make([]Revocation, 0, len(a.crl.revoked))
	for _, r := range a.crl.revoked {
		out = append(out, Revocation{Serial: new(big.Int).Set(r.Serial), Date: r.Date, Reason: r.Reason})
	}
	a.crl.mu.RUnlock()
	slices.SortFunc(out, func(x, y Revocation) int {
		if c := x.Date.Compare(y.Date); c != 0 {
			return c
		}
		return x.Serial.Cmp(y.Serial)
	})
	return out
}

func checkReason(reason string) error {
	if _, ok := reasonCodes[reason]; !ok {
		return fmt.Errorf("unknown revocation reason %q (want one of %s)", reason, strings.Join(Reasons, ", "))
	}
	return nil
}

// Revoke adds serial to the revocation list (api.md §2.15, §5.11). Revoking an
// already revoked serial changes nothing and is not an error.
func (a *Authority) Revoke(serial *big.Int, reason string) error {
	if serial == nil || serial.Sign() <= 0 {
		return errors.New("revoke: serial number must be positive")
	}
	if err := checkReason(reason); err != nil {
		return fmt.Errorf("revoke: %w", err)
	}
	_, err := a.modifyCRL([]*big.Int{serial}, reason)
	return err
}

// RevokeName revokes every unrevoked certificate issued to name (api.md §5.11)
// and returns how many were added to the list.
func (a *Authority) RevokeName(name, reason string) (n int, err error) {
	if err := checkReason(reason); err != nil {
		return 0, fmt.Errorf("revoke %q: %w", name, err)
	}
	serials, err := a.issuedTo(name)
	if err != nil {
		return 0, fmt.Errorf("revoke %q: %w", name, err)
	}
	if len(serials) == 0 {
		return 0, nil
	}
	return a.modifyCRL(serials, reason)
}

// modifyCRL re-reads the file under both locks, appends the serials not
// already listed, writes it atomically, applies the result and fires the
// OnRevocation callbacks when the set grew.
func (a *Authority) modifyCRL(serials []*big.Int, reason string) (added int, err error) {
	path := a.cfg.CRLFile
	a.crl.fileMu.Lock()
	grew, err := func() (bool, error) {
		defer a.crl.fileMu.Unlock()
		unlock, err := lockFile(path)
		if err != nil {
			return false, err
		}
		defer unlock()
		data, err := readFileLimited(path, maxCRLFile)
		if errors.Is(err, fs.ErrNotExist) {
			data, err = encodeCRL(nil)
		}
		if err != nil {
			return false, fmt.Errorf("revoke: %w", err)
		}
		set, entries, _, err := parseCRL(data)
		if err != nil {
			return false, fmt.Errorf("revoke: refusing to rewrite malformed %s: %w", path, err)
		}
		now := a.now().UTC()
		for _, s := range serials {
			if _, ok := set[serialKey(s)]; ok {
				continue
			}
			set[serialKey(s)] = Revocation{Serial: new(big.Int).Set(s), Date: now, Reason: reason}
			entries = append(entries, crlJSONEntry{SerialNumber: s.String(), RevocationDate: now.Format(time.RFC3339), Reason: reason})
			added++
			a.log.Info("revoked certificate", "serial", s.String(), "reason", reason, "file", path)
		}
		if added > 0 {
			if data, err = encodeCRL(entries); err != nil {
				return false, err
			}
			if err := atomicfile.Write(path, data, 0o644); err != nil {
				return false, err
			}
		}
		_, grew := a.applyCRL(set, sha256.Sum256(data))
		if added > 0 || grew {
			if err := a.writeCRLPEM(); err != nil {
				a.log.Error("could not write the X.509 CRL", "file", a.crlPEMPath, "err", err)
			}
		}
		return grew, nil
	}()
	if err != nil {
		return 0, err
	}
	if grew {
		a.fireRevocation()
	}
	return added, nil
}

// applyCRL replaces the in-memory set and reports whether it changed and
// whether it gained a serial.
func (a *Authority) applyCRL(set map[string]Revocation, hash [32]byte) (changed, grew bool) {
	a.crl.mu.Lock()
	defer a.crl.mu.Unlock()
	for k := range set {
		if _, ok := a.crl.revoked[k]; !ok {
			grew = true
			break
		}
	}
	changed = grew || len(set) != len(a.crl.revoked)
	a.crl.revoked, a.crl.hash = set, hash
	return changed, grew
}

// ReloadCRL re-reads the JSON file. A file that is missing, too large or
// malformed leaves the previous set in force; the error is logged (once per
// distinct content) and returned.
func (a *Authority) ReloadCRL() (changed bool, err error) {
	path := a.cfg.CRLFile
	a.crl.fileMu.Lock()
	changed, grew, err := func() (bool, bool, error) {
		defer a.crl.fileMu.Unlock()
		data, err := readFileLimited(path, maxCRLFile)
		if err != nil {
			a.log.Error("could not read the revocation list; keeping the previous one", "file", path, "err", err)
			return false, false, fmt.Errorf("reload revocation list: %w", err)
		}
		hash := sha256.Sum256(data)
		a.crl.mu.RLock()
		same, knownBad := hash == a.crl.hash, hash == a.crl.badHash
		a.crl.mu.RUnlock()
		if same {
			return false, false, nil
		}
		set, _, warnings, err := parseCRL(data)
		if err != nil {
			if !knownBad {
				a.log.Error("revocation list is malformed; keeping the previous one", "file", path, "err", err)
				a.crl.mu.Lock()
				a.crl.badHash = hash
				a.crl.mu.Unlock()
			}
			return false, false, fmt.Errorf("reload %s: malformed: %w", path, err)
		}
		for _, w := range warnings {
			a.log.Warn("revocation list entry", "file", path, "problem", w)
		}
		changed, grew := a.applyCRL(set, hash)
		if changed {
			a.log.Info("revocation list reloaded", "file", path, "revoked", len(set))
			if err := a.writeCRLPEM(); err != nil {
				a.log.Error("could not write the X.509 CRL", "file", a.crlPEMPath, "err", err)
			}
		}
		return changed, grew, nil
	}()
	if grew {
		a.fireRevocation()
	}
	return changed, err
}

// OnRevocation registers fn to be called, on the goroutine that noticed it,
// after the revoked set grew (Revoke, RevokeName, or a reload that picked up
// another process's revocation). cancel unregisters it.
func (a *Authority) OnRevocation(fn func()) (cancel func()) {
	if fn == nil {
		return func() {}
	}
	a.crl.subMu.Lock()
	id := a.crl.nextSub
	a.crl.nextSub++
	a.crl.subs[id] = fn
	a.crl.subMu.Unlock()
	return func() {
		a.crl.subMu.Lock()
		delete(a.crl.subs, id)
		a.crl.subMu.Unlock()
	}
}

func (a *Authority) fireRevocation() {
	a.crl.subMu.Lock()
	fns := make([]func(), 0, len(a.crl.subs))
	for _, fn := range a.crl.subs {
		fns = append(fns, fn)
	}
	a.crl.subMu.Unlock()
	for _, fn := range fns {
		fn()
	}
}
