package admin

// API users and the audit log on the command line (`outpost token`,
// `outpost audit`). They open the appliance's database like the other
// subcommands, so they work while the server runs: it looks tokens up on
// every request and sees a new or revoked token at once.

import (
	"context"
	"log/slog"
	"time"

	"outpost/appliance/config"
	"outpost/appliance/store"
)

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
