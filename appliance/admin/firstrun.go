package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"outpost/appliance/atomicfile"
	"outpost/appliance/config"
	"outpost/appliance/store"
)

// adminUser is the API user created on first run.
const adminUser = "admin"

// EnsureAdminToken creates the API user "admin" when no API user exists
// (first run, or every API user was revoked) and writes its token to
// <dataDir>/admin.token (mode 0600). The log names the file, never the
// token.
func EnsureAdminToken(ctx context.Context, cfg *config.Config, acc *store.Accounts, log *slog.Logger) error {
	u, created, err := acc.EnsureAPIUser(ctx, adminUser)
	if err != nil {
		return fmt.Errorf("first-run admin token: %w", err)
	}
	if !created {
		return nil
	}
	path := filepath.Join(cfg.DataDir, AdminTokenFile)
	if err := atomicfile.Write(path, []byte(u.Token+"\n"), 0o600); err != nil {
		// Without the file nobody knows the token: take the user back so
		// the next start tries again.
		if derr := acc.DeleteAPIUser(context.WithoutCancel(ctx), adminUser); derr != nil {
			err = errors.Join(err, derr)
		}
		return fmt.Errorf("first-run admin token: %w", err)
	}
	log.Info("no API user existed: created API user admin; its bearer token is in the file", "file", path)
	return nil
}
