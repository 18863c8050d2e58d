package access

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"time"

	"outpost/appliance/fault"
	"outpost/appliance/store"
)

// Errors of the checks; the HTTP edge answers them by their kind.
var (
	ErrUnauthorized error = fault.New(fault.Unauthorized, "access: authentication required")
	ErrForbidden    error = fault.New(fault.Forbidden, "access: forbidden")
)

// Directory resolves credentials to principals: a bearer token, a client
// certificate, a system user. It reads the store on every call (a token
// revoked, a role or a group changed from the command line, is seen at
// once); none of its answers is cached.
type Directory struct {
	Accounts *store.Accounts
	// Identify returns a TLS client certificate's common name and serial
	// (pki.Authority.Identity).
	Identify func(tls.ConnectionState) (name string, serial *big.Int, ok bool)
}

// Token resolves a management bearer token (api.md §5.2: API users, then
// system users, then login tokens). An unknown token is ErrUnauthorized.
func (d *Directory) Token(ctx context.Context, token string, now time.Time) (Principal, error) {
	sp, err := d.Accounts.Authenticate(ctx, token, now)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, fmt.Errorf("%w: unknown or expired token", ErrUnauthorized)
	}
	if err != nil {
		return Principal{}, err
	}
	if sp.Kind == store.APIUser {
		return Principal{Kind: APIUser, Name: sp.Name, In: store.AllGroups, Out: store.AllGroups}, nil
	}
	u, err := d.Accounts.UserByUID(ctx, sp.UID)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, fmt.Errorf("%w: unknown or expired token", ErrUnauthorized)
	}
	if err != nil {
		return Principal{}, err
	}
	p, err := d.User(ctx, u)
	p.Login = sp.Login
	return p, err
}

// Certificate resolves a mutual-TLS connection's client certificate: the
// system user whose name is its common name, or a certificate principal
// (access.md "Principals"). A connection without one is ErrUnauthorized.
func (d *Directory) Certificate(ctx context.Context, cs tls.ConnectionState) (Principal, error) {
	if d.Identify == nil {
		return Principal{}, fmt.Errorf("%w: no client certificate", ErrUnauthorized)
	}
	name, serial, ok := d.Identify(cs)
	if !ok || name == "" {
		return Principal{}, fmt.Errorf("%w: no client certificate with a common name", ErrUnauthorized)
	}
	return d.ByName(ctx, name, serial)
}

// ByName resolves a certificate identity: the system user name (with the
// certificate's serial), or a certificate principal when no user has it.
func (d *Directory) ByName(ctx context.Context, name string, serial *big.Int) (Principal, error) {
	u, err := d.Accounts.UserByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{Kind: Certificate, Name: name, In: store.AnonGroup, Out: store.AnonGroup, Serial: serial}, nil
	}
	if err != nil {
		return Principal{}, err
	}
	p, err := d.User(ctx, u)
	p.Serial = serial
	return p, err
}

// User is the principal of a system user: its role and its active groups.
func (d *Directory) User(ctx context.Context, u store.User) (Principal, error) {
	p := Principal{Kind: SystemUser, Name: u.Name, UID: u.UID, Role: u.Role}
	groups, err := d.Accounts.Groups(ctx)
	if err != nil {
		return Principal{}, err
	}
	ms, err := d.Accounts.Memberships(ctx, u.UID)
	if err != nil {
		return Principal{}, err
	}
	p.In, p.Out = Masks(groups, ms)
	return p, nil
}

// Masks are the active group masks of memberships (access.md "Groups"):
// no membership at all is __ANON__ both ways; memberships whose every
// direction is switched off give no group at all.
func Masks(groups []store.Group, ms []store.Membership) (in, out uint64) {
	if len(ms) == 0 {
		return store.AnonGroup, store.AnonGroup
	}
	bit := bitsOf(groups)
	for _, m := range ms {
		b, ok := bit[m.Group]
		if !ok {
			continue
		}
		if m.In && m.ActiveIn {
			in |= b
		}
		if m.Out && m.ActiveOut {
			out |= b
		}
	}
	return in, out
}

func bitsOf(groups []store.Group) map[string]uint64 {
	m := make(map[string]uint64, len(groups))
	for _, g := range groups {
		m[g.Name] = g.Mask()
	}
	return m
}

// MaskOf is the mask of the groups named: no name at all is __ANON__ (a
// mission without groups); names of groups that do not exist count for
// nothing.
func MaskOf(groups []store.Group, names []string) uint64 {
	if len(names) == 0 {
		return store.AnonGroup
	}
	bit := bitsOf(groups)
	var m uint64
	for _, n := range names {
		m |= bit[n]
	}
	return m
}

// NamesOf lists the groups of a mask, by name.
func NamesOf(groups []store.Group, mask uint64) []string {
	var out []string
	for _, g := range groups {
		if mask&g.Mask() != 0 {
			out = append(out, g.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Restrict is the mask a principal shares a new record with: the groups
// requested (names; none: the principal's default), which a user must
// hold as IN groups. An administrator's default is every group, a user's
// its IN groups (access.md "Groups"). Errors: fault.Invalid for an unknown
// group, ErrForbidden for one a user does not send to.
func Restrict(p Principal, groups []store.Group, requested []string) (uint64, error) {
	if len(requested) == 0 {
		if p.Admin() {
			return store.AllGroups, nil
		}
		return p.In, nil
	}
	bit := bitsOf(groups)
	var m uint64
	for _, n := range requested {
		b, ok := bit[n]
		if !ok {
			return 0, fmt.Errorf("%w: groups: no group %q", store.ErrInvalid, n)
		}
		if !p.Admin() && p.In&b == 0 {
			return 0, fmt.Errorf("%w: groups: you do not send to group %q", ErrForbidden, n)
		}
		m |= b
	}
	return m, nil
}
