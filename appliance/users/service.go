package users

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"outpost/appliance/fault"
	"outpost/appliance/logx"
	"outpost/appliance/pki"
	"outpost/appliance/store"
)

// Errors of the service beyond the store's.
var (
	// ErrCertificates: the user holds certificates issued to its name, so
	// it cannot be renamed (its certificates would name someone else).
	ErrCertificates error = fault.New(fault.Conflict, "users: holds certificates")
	// ErrNoAuthority: certificates were asked for, and there is no
	// certificate authority.
	ErrNoAuthority = errors.New("users: no certificate authority is configured")
)

// Options configure the service.
type Options struct {
	Accounts  *store.Accounts
	Files     *store.Files   // where certificate packages are kept
	Authority *pki.Authority // certificates; nil: users without certificates only
	// Changed, when set, is called with a user's name after its role or
	// groups changed, or after it was deleted, so the connections it has
	// open follow (the appliance re-resolves them). It must not block.
	Changed func(name string)
	Logger  *slog.Logger
	// Now is the clock of invitations (tests); default time.Now.
	Now func() time.Time
}

// Service manages system users and groups.
type Service struct {
	opts Options
	log  *slog.Logger

	// beforeDelete, set by tests, runs between revoking a deleted user's
	// certificates and deleting the user: a failure there must leave the
	// user in place and its certificates revoked.
	beforeDelete func() error
}

// New returns the service.
func New(opts Options) *Service {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Service{opts: opts, log: opts.Logger.With("component", "users")}
}

// User is a system user with its groups.
type User struct {
	store.User
	Groups []store.Membership
}

// GroupNames lists the groups the user is a member of, by name.
func (u User) GroupNames() []string {
	out := make([]string, len(u.Groups))
	for i, m := range u.Groups {
		out[i] = m.Group
	}
	return out
}

func (s *Service) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}

func (s *Service) changed(name string) {
	if s.opts.Changed != nil && name != "" {
		s.opts.Changed(name)
	}
}

// NewUser is a user to create.
type NewUser struct {
	store.UserInput
	// Certs asks for a client certificate and the connection package of
	// Device, kept as the user's certificate package (api.md §5.10).
	Certs  bool
	Device pki.Device
}

// Create makes a user (in the groups its Group field names, created when
// needed) and, when asked, its certificate package. If the package fails,
// the user is removed again: both or neither. Errors: the store's
// (ErrInvalid, ErrConflict: "a user with this name exists", "token already
// in use").
func (s *Service) Create(ctx context.Context, nu NewUser) (User, error) {
	u, err := s.opts.Accounts.CreateUser(ctx, nu.UserInput)
	if err != nil {
		if errors.Is(err, store.ErrConflict) && strings.Contains(err.Error(), "token") {
			return User{}, fmt.Errorf("%w: token already in use", store.ErrConflict)
		}
		if errors.Is(err, store.ErrConflict) {
			return User{}, fmt.Errorf("%w: a user with this name exists", store.ErrConflict)
		}
		return User{}, err
	}
	if nu.Certs {
		name, hash, err := s.issuePackage(ctx, u, nu.Device)
		if err != nil {
			if derr := s.opts.Accounts.DeleteUser(context.WithoutCancel(ctx), u.UID); derr != nil {
				s.log.Error("could not remove a user whose certificate package failed", "user", logx.Clip(u.Name), "uid", u.UID, "err", derr)
			}
			return User{}, err
		}
		u.CertificatePackageName, u.CertificatePackageHash = name, hash
	}
	s.log.Info("system user created", "user", logx.Clip(u.Name), "uid", u.UID, "role", u.Role,
		"groups", logx.Clip(nu.Group), "certificate_package", u.CertificatePackageName)
	return s.withGroups(ctx, u)
}

// issuePackage builds and keeps u's certificate package and records it on
// the user. On failure nothing usable is left behind: the certificate is
// revoked and the package removed.
func (s *Service) issuePackage(ctx context.Context, u store.User, d pki.Device) (name, hash string, err error) {
	a := s.opts.Authority
	if a == nil {
		return "", "", ErrNoAuthority
	}
	up, err := a.IssueUserPackage(ctx, u.Name, d, s.opts.Files)
	if err != nil {
		return "", "", fmt.Errorf("certificate package for %q: %w", u.Name, err)
	}
	if err := s.opts.Accounts.SetUserCertificatePackage(ctx, u.UID, up.FileName, up.Hash); err != nil {
		bg := context.WithoutCancel(ctx)
		if rerr := a.Revoke(up.Cert.Cert.SerialNumber, "cessation_of_operation"); rerr != nil {
			s.log.Error("could not revoke the certificate of a failed user package", "user", logx.Clip(u.Name), "err", rerr)
		}
		if derr := s.opts.Files.DeleteDataPackageByHash(bg, up.Hash); derr != nil {
			s.log.Error("could not remove a failed user package", "user", logx.Clip(u.Name), "err", derr)
		}
		a.RemoveUserPackageFile(up.FileName)
		return "", "", fmt.Errorf("certificate package for %q: %w", u.Name, err)
	}
	return up.FileName, up.Hash, nil
}

func (s *Service) withGroups(ctx context.Context, u store.User) (User, error) {
	ms, err := s.opts.Accounts.Memberships(ctx, u.UID)
	if err != nil {
		return User{}, err
	}
	return User{User: u, Groups: ms}, nil
}

// Get returns the user uid. Errors: store.ErrNotFound.
func (s *Service) Get(ctx context.Context, uid string) (User, error) {
	u, err := s.opts.Accounts.UserByUID(ctx, uid)
	if err != nil {
		return User{}, err
	}
	return s.withGroups(ctx, u)
}

// ByName returns the user named name. Errors: store.ErrNotFound.
func (s *Service) ByName(ctx context.Context, name string) (User, error) {
	u, err := s.opts.Accounts.UserByName(ctx, name)
	if err != nil {
		return User{}, err
	}
	return s.withGroups(ctx, u)
}

// List returns every user with its groups, by name.
func (s *Service) List(ctx context.Context) ([]User, error) {
	list, err := s.opts.Accounts.Users(ctx)
	if err != nil {
		return nil, err
	}
	ms, err := s.opts.Accounts.MembershipsOf(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]User, len(list))
	for i, u := range list {
		out[i] = User{User: u, Groups: ms[u.UID]}
	}
	return out, nil
}

// Update changes a user's name, password or token. A user holding
// certificates issued to its name that are not revoked cannot be renamed
// (ErrCertificates). Errors: the store's.
func (s *Service) Update(ctx context.Context, uid string, up store.UserUpdate) (User, error) {
	old, err := s.opts.Accounts.UserByUID(ctx, uid)
	if err != nil {
		return User{}, err
	}
	if up.Name != nil && *up.Name != old.Name && s.opts.Authority != nil {
		certs, err := s.opts.Authority.Issued(old.Name)
		if err != nil {
			return User{}, err
		}
		for _, c := range certs {
			if !c.Revoked {
				return User{}, fmt.Errorf("%w: %q holds certificates issued to its name; delete and re-create the user to rename it",
					ErrCertificates, logx.Cut(old.Name, 64))
			}
		}
	}
	u, err := s.opts.Accounts.UpdateUser(ctx, uid, up)
	if err != nil {
		return User{}, err
	}
	s.log.Info("system user updated", "user", logx.Clip(u.Name), "uid", u.UID,
		"renamed", up.Name != nil && *up.Name != old.Name, "password_changed", up.Password != nil, "token_changed", up.Token != nil)
	return s.withGroups(ctx, u)
}

// RotateTokens gives each user its new token, all or none.
func (s *Service) RotateTokens(ctx context.Context, changes []store.TokenChange) error {
	if err := s.opts.Accounts.SetUserTokens(ctx, changes); err != nil {
		return err
	}
	s.log.Info("system user tokens rotated", "users", len(changes))
	return nil
}

// SetRole gives the user uid a role (access.md "Roles").
func (s *Service) SetRole(ctx context.Context, uid, role string) (User, error) {
	if err := s.opts.Accounts.SetRole(ctx, uid, role); err != nil {
		return User{}, err
	}
	u, err := s.Get(ctx, uid)
	if err != nil {
		return User{}, err
	}
	s.log.Info("system user role set", "user", logx.Clip(u.Name), "uid", u.UID, "role", role)
	s.changed(u.Name)
	return u, nil
}

// SetGroups replaces the user's memberships (access.md "Groups").
func (s *Service) SetGroups(ctx context.Context, uid string, ms []store.Membership) (User, error) {
	if err := s.opts.Accounts.SetMemberships(ctx, uid, ms); err != nil {
		return User{}, err
	}
	u, err := s.Get(ctx, uid)
	if err != nil {
		return User{}, err
	}
	s.log.Info("system user groups set", "user", logx.Clip(u.Name), "uid", u.UID, "groups", len(ms))
	s.changed(u.Name)
	return u, nil
}

// SetActive switches directions of the user's memberships on or off (its
// client's channel toggles) and returns them as stored.
func (s *Service) SetActive(ctx context.Context, uid string, changes []store.Membership) (User, error) {
	if _, err := s.opts.Accounts.SetActive(ctx, uid, changes); err != nil {
		return User{}, err
	}
	u, err := s.Get(ctx, uid)
	if err != nil {
		return User{}, err
	}
	s.changed(u.Name)
	return u, nil
}

// Delete deletes users and everything that made them users: their
// certificates are revoked first (connected clients holding them are cut
// off, a failure leaves the users in place), then the users, their
// memberships and the uids bound to them go in one transaction (all of them
// or none), then their certificate packages. It returns how many
// certificates it revoked per user uid. Errors: store.ErrNotFound (naming
// an unknown uid; nothing changed).
func (s *Service) Delete(ctx context.Context, uids []string) (map[string]int, error) {
	users := make([]store.User, 0, len(uids))
	seen := map[string]bool{}
	for _, uid := range uids {
		if seen[uid] {
			continue
		}
		seen[uid] = true
		u, err := s.opts.Accounts.UserByUID(ctx, uid)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("%w: no system user with uid %q", store.ErrNotFound, logx.Cut(uid, 64))
		}
		if err != nil {
			return nil, err
		}
		users = append(users, u)
	}
	revoked := map[string]int{}
	if a := s.opts.Authority; a != nil {
		for _, u := range users {
			n, err := a.RevokeName(u.Name, "cessation_of_operation")
			if err != nil {
				return revoked, fmt.Errorf("revoking the certificates of %q: %w", logx.Cut(u.Name, 64), err)
			}
			revoked[u.UID] = n
		}
	}
	if s.beforeDelete != nil {
		if err := s.beforeDelete(); err != nil {
			return revoked, err
		}
	}
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = u.UID
	}
	if err := s.opts.Accounts.DeleteUsers(ctx, ids); err != nil {
		return revoked, err
	}
	for _, u := range users {
		s.removePackage(u)
		s.log.Info("system user deleted", "user", logx.Clip(u.Name), "uid", u.UID, "certificates_revoked", revoked[u.UID])
		s.changed(u.Name)
	}
	return revoked, nil
}

// removePackage deletes a deleted user's certificate package (data package
// and file); failures are logged.
func (s *Service) removePackage(u store.User) {
	if u.CertificatePackageHash == "" {
		return
	}
	err := s.opts.Files.DeleteDataPackageByHash(context.Background(), u.CertificatePackageHash)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Error("could not remove a deleted user's certificate package", "user", logx.Clip(u.Name), "err", err)
	}
	if u.CertificatePackageName != "" && s.opts.Authority != nil {
		if err := s.opts.Authority.RemoveUserPackageFile(u.CertificatePackageName); err != nil {
			s.log.Error("could not remove a deleted user's certificate package file", "user", logx.Clip(u.Name), "err", err)
		}
	}
}

// CertificatePackage returns the user's certificate package (the data
// package holding its .p12). Errors: store.ErrNotFound when it has none.
func (s *Service) CertificatePackage(ctx context.Context, u store.User) (store.DataPackage, error) {
	if u.CertificatePackageHash == "" {
		return store.DataPackage{}, fmt.Errorf("%w: this user has no certificate package", store.ErrNotFound)
	}
	p, err := s.opts.Files.DataPackageByHash(ctx, u.CertificatePackageHash)
	if errors.Is(err, store.ErrNotFound) {
		return store.DataPackage{}, fmt.Errorf("%w: this user's certificate package is gone", store.ErrNotFound)
	}
	return p, err
}
