package access

import (
	"fmt"

	"outpost/appliance/logx"
)

// UIDClaimer binds uids to certificate identities (broker.Broker.ClaimUID).
type UIDClaimer interface {
	ClaimUID(uid, identity string) error
}

// ActFor checks that p may act for uid, given in the request field field
// (access.md "Uids belong to identities"): a uid bound to another identity
// is refused (ErrForbidden); an unbound one is bound to p's certificate
// identity, if it has one. An empty uid is not checked.
func ActFor(c UIDClaimer, p Principal, field, uid string) error {
	if uid == "" || c == nil {
		return nil
	}
	if err := c.ClaimUID(uid, p.Identity()); err != nil {
		return fmt.Errorf("%w: %s: uid %q belongs to another user", ErrForbidden, field, logx.Cut(uid, 64))
	}
	return nil
}
