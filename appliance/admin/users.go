package admin

// System users, roles and groups on the command line (`outpost user`,
// `outpost group`), through the same users service as the management API
// and the console (access.md): a deletion revokes the user's certificates
// before the user goes. A server running on the same data applies a change
// to its open connections within seconds (it watches the access
// generation).

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"

	"outpost/appliance/config"
	"outpost/appliance/store"
	"outpost/appliance/users"
)

// withUsers opens the database and the certificate authority for one
// operation of the users service.
func withUsers(ctx context.Context, cfg *config.Config, log *slog.Logger, fn func(*users.Service) error) error {
	a, err := authorityFor(cfg, log)
	if err != nil {
		return err
	}
	return withStore(ctx, cfg, log, func(st *store.Store) error {
		return fn(users.New(users.Options{Accounts: st.Accounts(), Files: st.Files(), Authority: a, Logger: log}))
	})
}

// NewUser is a user to add.
type NewUser struct {
	Name     string
	Password string // empty: one is generated (and returned, once)
	Groups   string // group names separated by commas (access.md "Groups")
	Role     string // "user" (default) or "admin"
}

// The users package's and the store's types the command line shows and
// reads, so that it needs no import of theirs.
type (
	User       = users.User
	Membership = store.Membership
	Group      = store.Group
)

// AnonGroupName is the group of everyone without one (access.md "Groups").
const AnonGroupName = store.AnonGroupName

// UserAdd creates a system user (api.md §2.1) who can enroll for a
// certificate with its name and password. An empty password is generated and
// returned, as is the user's bearer token; both are shown only once.
func UserAdd(ctx context.Context, cfg config.Config, log *slog.Logger, nu NewUser) (user users.User, generatedPassword string, err error) {
	if nu.Password == "" {
		b := make([]byte, 12)
		if _, err := rand.Read(b); err != nil {
			return users.User{}, "", err
		}
		nu.Password = base64.RawURLEncoding.EncodeToString(b)
		generatedPassword = nu.Password
	}
	err = withUsers(ctx, &cfg, log, func(svc *users.Service) error {
		var err error
		user, err = svc.Create(ctx, users.NewUser{UserInput: store.UserInput{Name: nu.Name, Password: nu.Password,
			Group: nu.Groups, Role: nu.Role}})
		return err
	})
	return user, generatedPassword, err
}

// UserDelete deletes a system user: its certificates are revoked first, then
// the user, its groups and its uids go (api.md: deleting a user revokes its
// certificate). It returns how many certificates it revoked.
func UserDelete(ctx context.Context, cfg config.Config, log *slog.Logger, name string) (revoked int, err error) {
	err = withUsers(ctx, &cfg, log, func(svc *users.Service) error {
		u, err := svc.ByName(ctx, name)
		if err != nil {
			return err
		}
		n, err := svc.Delete(ctx, []string{u.UID})
		revoked = n[u.UID]
		return err
	})
	return revoked, err
}

// UserList lists the system users with their roles and groups.
func UserList(ctx context.Context, cfg config.Config, log *slog.Logger) ([]users.User, error) {
	var list []users.User
	err := withUsers(ctx, &cfg, log, func(svc *users.Service) error {
		var err error
		list, err = svc.List(ctx)
		return err
	})
	return list, err
}

// UserRole gives the user name a role.
func UserRole(ctx context.Context, cfg config.Config, log *slog.Logger, name, role string) (users.User, error) {
	var out users.User
	err := withUsers(ctx, &cfg, log, func(svc *users.Service) error {
		u, err := svc.ByName(ctx, name)
		if err != nil {
			return err
		}
		out, err = svc.SetRole(ctx, u.UID, role)
		return err
	})
	return out, err
}

// UserGroups makes the user name's memberships those given.
func UserGroups(ctx context.Context, cfg config.Config, log *slog.Logger, name string, ms []store.Membership) (users.User, error) {
	var out users.User
	err := withUsers(ctx, &cfg, log, func(svc *users.Service) error {
		u, err := svc.ByName(ctx, name)
		if err != nil {
			return err
		}
		out, err = svc.SetGroups(ctx, u.UID, ms)
		return err
	})
	return out, err
}

// GroupAdd makes a group.
func GroupAdd(ctx context.Context, cfg config.Config, log *slog.Logger, name, description string) (store.Group, error) {
	var g store.Group
	err := withUsers(ctx, &cfg, log, func(svc *users.Service) error {
		var err error
		g, err = svc.CreateGroup(ctx, name, description)
		return err
	})
	return g, err
}

// GroupList lists the groups with the names of their members.
func GroupList(ctx context.Context, cfg config.Config, log *slog.Logger) ([]store.Group, map[string][]string, error) {
	var (
		groups  []store.Group
		members = map[string][]string{}
	)
	err := withUsers(ctx, &cfg, log, func(svc *users.Service) error {
		var err error
		if groups, err = svc.Groups(ctx); err != nil {
			return err
		}
		list, err := svc.List(ctx)
		if err != nil {
			return err
		}
		for _, u := range list {
			for _, m := range u.Groups {
				members[m.Group] = append(members[m.Group], u.Name)
			}
		}
		return nil
	})
	return groups, members, err
}

// GroupRemove deletes a group.
func GroupRemove(ctx context.Context, cfg config.Config, log *slog.Logger, name string) error {
	return withUsers(ctx, &cfg, log, func(svc *users.Service) error { return svc.DeleteGroup(ctx, name) })
}
