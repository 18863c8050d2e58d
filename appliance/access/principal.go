package access

import (
	"math/big"

	"outpost/appliance/store"
)

// Kind is what kind of principal a caller is (access.md "Principals").
type Kind uint8

// The kinds of principals.
const (
	Anonymous   Kind = iota // no credential: 8080, 8087
	APIUser                 // a management bearer token of an API user
	SystemUser              // a system user, by token, login, password or certificate
	Certificate             // a client certificate whose common name is no system user's
	ChannelKey              // the socket.io channel's websocket key
)

var kindNames = [...]string{"anonymous", "api user", "system user", "certificate", "channel key"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Principal is the caller of one request or the owner of one connection.
type Principal struct {
	Kind Kind
	Name string // API user name, system user name, or certificate common name
	UID  string // system user uid ("" for the others)
	Role string // store.UserRoleAdmin or store.UserRoleUser for system users; "" for the others
	// In and Out are the active group masks: what the principal sends goes
	// to In; it sees what was sent to Out.
	In, Out uint64
	// SeesAll is set by the management API for administrators: there they
	// read every group's records (access.md "Groups"). On the client API
	// and the CoT streams a principal sees its OUT groups, whatever its
	// role.
	SeesAll bool
	// Login is true for a login token (POST /api/login).
	Login bool
	// Serial is the client certificate's serial when the principal is known
	// by a certificate (8443, 8089): its uids are bound to it.
	Serial *big.Int
}

// Anon is an anonymous client: __ANON__ both ways.
func Anon() Principal {
	return Principal{Kind: Anonymous, In: store.AnonGroup, Out: store.AnonGroup}
}

// Admin reports whether the principal is an administrator (access.md
// "Roles"): every API user and the channel key, and system users given the
// role.
func (p Principal) Admin() bool {
	switch p.Kind {
	case APIUser, ChannelKey:
		return true
	case SystemUser:
		return p.Role == store.UserRoleAdmin
	}
	return false
}

// Authenticated reports whether the principal presented a credential.
func (p Principal) Authenticated() bool { return p.Kind != Anonymous }

// Sees reports whether a record sent to groups (a mask) is visible to the
// principal.
func (p Principal) Sees(groups uint64) bool { return store.Seen(groups, p.Reads()) }

// Reads is the mask the principal's reads are filtered with: its OUT
// groups, or every group (SeesAll).
func (p Principal) Reads() uint64 {
	if p.SeesAll {
		return store.AllGroups
	}
	return p.Out
}

// Identity is the certificate identity the principal's uids are bound to
// (access.md "Uids belong to identities"): the certificate's common name
// when it is known by a certificate, "" otherwise.
func (p Principal) Identity() string {
	if p.Serial != nil {
		return p.Name
	}
	return ""
}

// IsUser reports whether the principal is the system user uid.
func (p Principal) IsUser(uid string) bool { return p.Kind == SystemUser && uid != "" && p.UID == uid }

// CanRead reports whether p may read a record shared with groups (a mask)
// and owned by owner (Owner; "" for none): its owner, or a principal who
// sees one of the record's groups.
func (p Principal) CanRead(groups uint64, owner string) bool {
	return p.Sees(groups) || p.owns(owner)
}

// CanChange reports whether p may change or remove a record owned by owner
// (access.md "Roles"): an administrator, its owner, or, for what an
// anonymous client made (no owner), anyone who may read it.
func (p Principal) CanChange(owner string) bool { return p.Admin() || owner == "" || p.owns(owner) }

func (p Principal) owns(owner string) bool { return owner != "" && owner == p.Owner() }

// Owner is the name what p makes is recorded under: a system user's or a
// certificate's name, "api:NAME" for an API user (so no user can be named
// like it), "" for an anonymous client.
func (p Principal) Owner() string {
	switch p.Kind {
	case SystemUser, Certificate:
		return p.Name
	case APIUser:
		return "api:" + p.Name
	}
	return ""
}
