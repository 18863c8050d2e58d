package admin

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"outpost/appliance/config"
	"outpost/appliance/pki"
	"outpost/appliance/store"
)

// maxCAInput bounds each PEM file `outpost ca import` reads.
const maxCAInput = 1 << 20

// CAImport replaces the appliance's CA with an organisation's own
// (`outpost ca import`): certFile holds the CA certificate (optionally
// followed by its issuers), keyFile its unencrypted key, chainFiles the
// issuers up to the root when certFile does not. It refuses while a server
// runs on the data directory (ErrDatabaseInUse: the server reads its
// certificates at start and would keep the old ones), validates the CA
// before anything changes (pki.Import), reissues the server certificate
// and opens the result once to prove it loads. With trustPrevious the
// replaced CA stays trusted for client certificates
// (pki.PreviousCAFile); without it they are refused from the next start,
// and their users enroll again or get new packages.
func CAImport(cfg config.Config, log *slog.Logger, certFile, keyFile string, chainFiles []string, trustPrevious bool) (*pki.ImportResult, error) {
	var req pki.ImportRequest
	var err error
	if req.Cert, err = readInput(certFile); err != nil {
		return nil, err
	}
	if req.Key, err = readInput(keyFile); err != nil {
		return nil, err
	}
	for _, f := range chainFiles {
		b, err := readInput(f)
		if err != nil {
			return nil, err
		}
		req.Chain = append(append(req.Chain, b...), '\n')
	}
	req.TrustPrevious = trustPrevious
	if err := PrepareData(&cfg, log); err != nil {
		return nil, err
	}
	var res *pki.ImportResult
	err = store.WhileStopped(cfg.DBPath(), func() error {
		var err error
		if res, err = pki.Import(authorityConfig(&cfg, log), req); err != nil {
			return err
		}
		if err := store.MatchOwner(cfg.DataDir, res.Written...); err != nil {
			return err
		}
		a, err := OpenAuthority(&cfg, log)
		if err != nil {
			return fmt.Errorf("the imported CA was written but does not load: %w", err)
		}
		return store.MatchOwner(cfg.DataDir, a.CRLPEMFile())
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// readInput reads a file named on the command line, at most maxCAInput
// bytes.
func readInput(path string) ([]byte, error) {
	if path == "" {
		return nil, fmt.Errorf("a file name is empty")
	}
	f, err := os.Open(filepath.Clean(path))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCAInput+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxCAInput {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxCAInput)
	}
	return b, nil
}

// Trust reads the appliance's CA and revocation list as a client checks
// them (`outpost doctor`), changing nothing.
func Trust(cfg config.Config, now time.Time) (*pki.Trust, error) {
	return pki.Inspect(authorityConfig(&cfg, slog.New(slog.DiscardHandler)), now)
}
