package users

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"outpost/appliance/fault"
	"outpost/appliance/logx"
	"outpost/appliance/qr"
	"outpost/appliance/store"
)

// Limits and defaults of invitations (protocol.md §8 "Enrolling with an
// invitation").
const (
	DefaultInviteExpiry = 24 * time.Hour
	MaxInviteExpiry     = 30 * 24 * time.Hour
	DefaultInviteUses   = 1
	MaxInviteUses       = store.MaxEnrollInvitationUses
	DefaultInviteDevice = "atak"
)

var (
	// ErrInvite: an invitation's expiry, uses or device is out of range.
	ErrInvite error = fault.New(fault.Invalid, "invitation")
	// ErrNoCodes: the server cannot make the codes a device scans (no
	// certificate authority, no usable public host); nothing was stored.
	ErrNoCodes error = fault.New(fault.Conflict, "invitation codes")
)

// InviteInput is what an invitation is made of; zero values take the
// defaults.
type InviteInput struct {
	Expires   time.Duration // 1 s .. MaxInviteExpiry; 0: DefaultInviteExpiry
	Uses      int           // 1 .. MaxInviteUses; 0: DefaultInviteUses
	Device    string        // atak, itak or wintak; "": atak
	CreatedBy string        // who asked (kept for the listing and the log)
}

// Codes are what a device is shown to join: ATAK's enrollment code (it
// holds the token), iTAK's server code (no credential: iTAK then asks for
// the user name and, as password, the token) and the link of the
// enrollment-only package WinTAK imports (no credential either).
type Codes struct {
	ATAK   string
	ITAK   string
	WinTAK string
}

// Invitation is a new invitation with its token and codes, which exist
// only in this value: the store keeps the token's hash.
type Invitation struct {
	store.EnrollInvitation
	Codes Codes
}

// ParseExpiry reads an invitation lifetime: a Go duration ("90m", "24h") or
// a number of days ("7d"). "" is the default.
func ParseExpiry(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultInviteExpiry, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 365 {
			return 0, fmt.Errorf("%w: expires %q is not a duration (24h, 90m, 7d)", ErrInvite, logx.Cut(s, 32))
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%w: expires %q is not a duration (24h, 90m, 7d)", ErrInvite, logx.Cut(s, 32))
		}
	}
	if d < time.Second || d > MaxInviteExpiry {
		return 0, fmt.Errorf("%w: expires must be between 1s and %s (30 days)", ErrInvite, MaxInviteExpiry)
	}
	return d, nil
}

func (in *InviteInput) check() error {
	if in.Expires == 0 {
		in.Expires = DefaultInviteExpiry
	}
	if in.Uses == 0 {
		in.Uses = DefaultInviteUses
	}
	in.Device = strings.ToLower(strings.TrimSpace(in.Device))
	if in.Device == "" {
		in.Device = DefaultInviteDevice
	}
	switch {
	case in.Expires < time.Second || in.Expires > MaxInviteExpiry:
		return fmt.Errorf("%w: expires must be between 1s and %s (30 days)", ErrInvite, MaxInviteExpiry)
	case in.Uses < 1 || in.Uses > MaxInviteUses:
		return fmt.Errorf("%w: uses must be between 1 and %d", ErrInvite, MaxInviteUses)
	case in.Device != "atak" && in.Device != "itak" && in.Device != "wintak":
		return fmt.Errorf("%w: device must be atak, itak or wintak", ErrInvite)
	}
	return nil
}

// Invite creates an enrollment invitation for the user uid: a random token
// that, with the user's name, enrolls a device for a certificate on the
// enrollment port in place of the password, Uses times until it expires or
// is revoked. The token is in the result only. Errors: ErrInvite,
// store.ErrNotFound (no such user), ErrNoCodes (no authority or public
// host), store.ErrConflict (too many invitations).
func (s *Service) Invite(ctx context.Context, uid string, in InviteInput) (Invitation, error) {
	if err := in.check(); err != nil {
		return Invitation{}, err
	}
	// Codes need the authority and the public host: refuse before
	// anything is stored.
	if s.opts.Authority == nil {
		return Invitation{}, fmt.Errorf("%w: %v", ErrNoCodes, ErrNoAuthority)
	}
	if _, err := s.opts.Authority.ConnectHost(); err != nil {
		return Invitation{}, fmt.Errorf("%w: %v", ErrNoCodes, err)
	}
	now := s.now()
	inv, err := s.opts.Accounts.CreateEnrollInvitation(ctx, store.EnrollInvitationInput{
		UserUID: uid, Device: in.Device, Expires: now.Add(in.Expires), Uses: in.Uses, CreatedBy: in.CreatedBy,
	}, now)
	if err != nil {
		return Invitation{}, err
	}
	codes, err := s.Codes(inv.User, inv.Token)
	if err != nil {
		return Invitation{}, err
	}
	s.log.Info("enrollment invitation created", "user", logx.Clip(inv.User), "invitation", inv.ID,
		"device", inv.Device, "uses", inv.Uses, "expires", inv.Expires, "by", logx.Clip(in.CreatedBy))
	return Invitation{EnrollInvitation: inv, Codes: codes}, nil
}

// Codes builds the codes of an invitation of user with token. Every
// invitation gets all three (the device decides which one the command line
// draws); the WinTAK link is always WinTAK's package.
func (s *Service) Codes(user, token string) (Codes, error) {
	a := s.opts.Authority
	if a == nil {
		return Codes{}, ErrNoAuthority
	}
	host, err := a.ConnectHost()
	if err != nil {
		return Codes{}, err
	}
	p := a.Ports()
	return Codes{
		ATAK:   qr.ATAKEnroll(host, p.SSLCoT, user, token),
		ITAK:   qr.ITAKQuickConnect(a.ServerName(), host, p.SSLCoT),
		WinTAK: qr.PackageLink(host, p.Enroll, "wintak"),
	}, nil
}

// Invitations lists invitations without their tokens, newest first: every
// user's when uid is "", else that user's (store.ErrNotFound when there is
// no such user).
func (s *Service) Invitations(ctx context.Context, uid string) ([]store.EnrollInvitation, error) {
	if uid != "" {
		if _, err := s.opts.Accounts.UserByUID(ctx, uid); err != nil {
			return nil, err
		}
	}
	return s.opts.Accounts.EnrollInvitations(ctx, uid)
}

// RevokeInvitation revokes the invitation id: it enrolls nothing from now
// on (certificates it already brought stay valid). Errors:
// store.ErrNotFound.
func (s *Service) RevokeInvitation(ctx context.Context, id, by string) (store.EnrollInvitation, error) {
	inv, err := s.opts.Accounts.RevokeEnrollInvitation(ctx, id, s.now())
	if err != nil {
		return store.EnrollInvitation{}, err
	}
	s.log.Info("enrollment invitation revoked", "user", logx.Clip(inv.User), "invitation", inv.ID, "by", logx.Clip(by))
	return inv, nil
}
