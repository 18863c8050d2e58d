package appliance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"outpost/appliance/atomicfile"
	"outpost/appliance/config"
	"outpost/appliance/store"
)

// AdminTokenFile is where the first run writes the bearer token of the API
// user "admin", inside the data directory (mode 0600).
const AdminTokenFile = "admin.token"

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

// The functions below are what `outpost token` and `outpost audit` do. They
// open the appliance's database like the other subcommands (ops.go), so they
// work while the server runs: it looks tokens up on every request and sees
// a new or revoked token at once.

// TokenCreate creates the API user name and returns it with its token
// (shown once; only its hash is stored).
func TokenCreate(ctx context.Context, cfg config.Config, log *slog.Logger, name string) (store.APIUserInfo, error) {
	var u store.APIUserInfo
	err := withStore(ctx, &cfg, log, func(st *store.Store) error {
		var err error
		u, err = st.Accounts().CreateAPIUser(ctx, name)
		return err
	})
	return u, err
}

// TokenList lists the API users (names and creation times, never tokens).
func TokenList(ctx context.Context, cfg config.Config, log *slog.Logger) ([]store.APIUserInfo, error) {
	var users []store.APIUserInfo
	err := withStore(ctx, &cfg, log, func(st *store.Store) error {
		var err error
		users, err = st.Accounts().APIUsers(ctx)
		return err
	})
	return users, err
}

// TokenRevoke deletes the API user name; its token stops working at once.
func TokenRevoke(ctx context.Context, cfg config.Config, log *slog.Logger, name string) error {
	return withStore(ctx, &cfg, log, func(st *store.Store) error {
		return st.Accounts().DeleteAPIUser(ctx, name)
	})
}

// AuditList lists the audit records since the given time (zero: all) of
// user (a name or uid; empty: everyone), oldest first, at most limit of the
// newest (0: no limit).
func AuditList(ctx context.Context, cfg config.Config, log *slog.Logger, since time.Time, user string, limit int) ([]store.AuditEntry, error) {
	var entries []store.AuditEntry
	err := withStore(ctx, &cfg, log, func(st *store.Store) error {
		var err error
		entries, err = st.Accounts().AuditEntries(ctx, store.AuditFilter{Since: since, User: user, Limit: limit})
		return err
	})
	return entries, err
}
