package appliance

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"outpost/appliance/admin"
	"outpost/appliance/atomicfile"
)

// AdminTokenFile is where the first run writes the bearer token of the API
// user "admin", inside the data directory (mode 0600).
const AdminTokenFile = admin.AdminTokenFile

// adminUser is the API user created on first run.
const adminUser = "admin"

// ensureAdminToken creates the API user "admin" when no API user exists
// (first run, or every API user was revoked) and writes its token to
// <dataDir>/admin.token. The log names the file, never the token.
func (a *Appliance) ensureAdminToken(ctx context.Context) error {
	u, created, err := a.store.Accounts().EnsureAPIUser(ctx, adminUser)
	if err != nil {
		return fmt.Errorf("first-run admin token: %w", err)
	}
	if !created {
		return nil
	}
	path := filepath.Join(a.cfg.DataDir, AdminTokenFile)
	if err := atomicfile.Write(path, []byte(u.Token+"\n"), 0o600); err != nil {
		// Without the file nobody knows the token: take the user back so
		// the next start tries again.
		if derr := a.store.Accounts().DeleteAPIUser(context.WithoutCancel(ctx), adminUser); derr != nil {
			err = errors.Join(err, derr)
		}
		return fmt.Errorf("first-run admin token: %w", err)
	}
	a.log.Info("no API user existed: created API user admin; its bearer token is in the file", "file", path)
	return nil
}
