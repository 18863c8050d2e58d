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

// AuditEntry is one audit record (the command line's name for it).
type AuditEntry = store.AuditEntry

// AuditList calls fn with each audit record since the given time (zero:
// all) of user (a name or uid; empty: everyone), oldest first, at most
// limit of the newest (0: no limit), as they are read.
func AuditList(ctx context.Context, cfg config.Config, log *slog.Logger, since time.Time, user string, limit int, fn func(AuditEntry) error) error {
	return withStore(ctx, &cfg, log, func(st *store.Store) error {
		return st.Accounts().EachAuditEntry(ctx, store.AuditFilter{Since: since, User: user, Limit: limit}, fn)
	})
}
