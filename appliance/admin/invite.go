package admin

// Enrollment invitations on the command line (`outpost invite`), through
// the users service (protocol.md §8 "Enrolling with an invitation"). The
// token exists in clear only in Invite's result; a server running on the
// same data accepts it at once (it reads the database).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"outpost/appliance/atomicfile"
	"outpost/appliance/config"
	"outpost/appliance/qr"
	"outpost/appliance/store"
	"outpost/appliance/users"
)

// The invitation types the command line shows.
type (
	Invitation     = users.Invitation       // a new one, with its token and codes
	InvitationInfo = store.EnrollInvitation // a listed one, never a token
)

// InviteOptions are an invitation's settings as typed; zero values take
// the defaults (24h, 1 use, atak).
type InviteOptions struct {
	Expires string // "24h", "90m", "7d"
	Uses    int
	Device  string // atak, itak or wintak
}

// Invite creates an enrollment invitation for the user named name.
func Invite(ctx context.Context, cfg config.Config, log *slog.Logger, name string, o InviteOptions) (inv users.Invitation, err error) {
	ttl, err := users.ParseExpiry(o.Expires)
	if err != nil {
		return users.Invitation{}, err
	}
	err = withUsers(ctx, &cfg, log, func(svc *users.Service) error {
		u, err := userNamed(ctx, svc, name)
		if err != nil {
			return err
		}
		inv, err = svc.Invite(ctx, u.UID, users.InviteInput{Expires: ttl, Uses: o.Uses, Device: o.Device, CreatedBy: "command line"})
		return err
	})
	return inv, err
}

// Invitations lists the invitations of the user named name (every user's
// when name is ""), newest first.
func Invitations(ctx context.Context, cfg config.Config, log *slog.Logger, name string) (list []store.EnrollInvitation, err error) {
	err = withUsers(ctx, &cfg, log, func(svc *users.Service) error {
		uid := ""
		if name != "" {
			u, err := userNamed(ctx, svc, name)
			if err != nil {
				return err
			}
			uid = u.UID
		}
		list, err = svc.Invitations(ctx, uid)
		return err
	})
	return list, err
}

// RevokeInvitation revokes the invitation id.
func RevokeInvitation(ctx context.Context, cfg config.Config, log *slog.Logger, id string) (inv store.EnrollInvitation, err error) {
	err = withUsers(ctx, &cfg, log, func(svc *users.Service) error {
		inv, err = svc.RevokeInvitation(ctx, id, "command line")
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no invitation with id %q", id)
		}
		return err
	})
	return inv, err
}

// userNamed finds a user by name, saying which name is unknown.
func userNamed(ctx context.Context, svc *users.Service, name string) (users.User, error) {
	u, err := svc.ByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return users.User{}, fmt.Errorf("no system user named %q", name)
	}
	return u, err
}

// QRTerminal draws text's QR code with Unicode half blocks.
func QRTerminal(text string) (string, error) { return qr.Terminal(text) }

// WriteQRPNG writes text's QR code as a PNG image to path, mode 0600 (an
// ATAK code holds a token).
func WriteQRPNG(path, text string) error {
	img, err := qr.PNG(text, 512)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, img, 0o600)
}
