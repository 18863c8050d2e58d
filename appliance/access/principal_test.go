package access

import (
	"errors"
	"math/big"
	"slices"
	"testing"

	"outpost/appliance/store"
)

// testGroups is a server with three groups besides __ANON__: Red on bit 0,
// Blue on bit 1, Green on bit 5.
var testGroups = []store.Group{
	{Name: "Blue", Bit: 1},
	{Name: "Green", Bit: 5},
	{Name: "Red", Bit: 0},
	{Name: store.AnonGroupName, Bit: store.AnonBit},
}

const (
	red   uint64 = 1 << 0
	blue  uint64 = 1 << 1
	green uint64 = 1 << 5
)

// both is a membership in group, both ways, both directions active.
func both(group string) store.Membership {
	return store.Membership{Group: group, In: true, Out: true, ActiveIn: true, ActiveOut: true}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{Anonymous: "anonymous", APIUser: "api user", SystemUser: "system user",
		Certificate: "certificate", ChannelKey: "channel key", Kind(99): "unknown"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

func TestMasks(t *testing.T) {
	inOnly := store.Membership{Group: "Red", In: true, ActiveIn: true, ActiveOut: true}
	outOnly := store.Membership{Group: "Blue", Out: true, ActiveIn: true, ActiveOut: true}
	for _, tc := range []struct {
		name    string
		ms      []store.Membership
		in, out uint64
	}{
		{"no membership is __ANON__ both ways", nil, store.AnonGroup, store.AnonGroup},
		{"one group both ways", []store.Membership{both("Red")}, red, red},
		{"several groups", []store.Membership{both("Red"), both("Green")}, red | green, red | green},
		{"IN and OUT memberships", []store.Membership{inOnly, outOnly}, red, blue},
		{"an active flag of a direction the user is not a member in gives nothing",
			[]store.Membership{{Group: "Red", In: true, ActiveIn: false, ActiveOut: true}}, 0, 0},
		{"inactive IN drops out of IN only",
			[]store.Membership{{Group: "Red", In: true, Out: true, ActiveIn: false, ActiveOut: true}}, 0, red},
		{"inactive OUT drops out of OUT only",
			[]store.Membership{{Group: "Red", In: true, Out: true, ActiveIn: true, ActiveOut: false}, both("Blue")}, red | blue, blue},
		{"every direction switched off is no group at all, not __ANON__",
			[]store.Membership{{Group: "Red", In: true, Out: true}}, 0, 0},
		{"unknown group names are ignored", []store.Membership{both("Gone"), both("Blue")}, blue, blue},
		{"membership in __ANON__ itself", []store.Membership{both(store.AnonGroupName)}, store.AnonGroup, store.AnonGroup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, out := Masks(testGroups, tc.ms)
			if in != tc.in || out != tc.out {
				t.Errorf("Masks = in %#x, out %#x; want in %#x, out %#x", in, out, tc.in, tc.out)
			}
		})
	}
}

func TestMaskOfAndNamesOf(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  uint64
	}{
		{nil, store.AnonGroup}, // a mission without groups is in __ANON__
		{[]string{}, store.AnonGroup},
		{[]string{"Red"}, red},
		{[]string{"Red", "Green", "Red"}, red | green},
		{[]string{"Gone"}, 0}, // only deleted groups: no group at all
		{[]string{"Gone", "Blue"}, blue},
	} {
		if got := MaskOf(testGroups, tc.names); got != tc.want {
			t.Errorf("MaskOf(%q) = %#x, want %#x", tc.names, got, tc.want)
		}
	}
	for _, tc := range []struct {
		mask uint64
		want []string
	}{
		{0, nil},
		{red, []string{"Red"}},
		{green | red | store.AnonGroup, []string{"Green", "Red", store.AnonGroupName}},
		{store.AllGroups, []string{"Blue", "Green", "Red", store.AnonGroupName}},
		{1 << 40, nil}, // a bit no group holds
	} {
		if got := NamesOf(testGroups, tc.mask); !slices.Equal(got, tc.want) {
			t.Errorf("NamesOf(%#x) = %q, want %q", tc.mask, got, tc.want)
		}
	}
	// The two are inverse for names of existing groups.
	names := []string{"Blue", "Green"}
	if got := NamesOf(testGroups, MaskOf(testGroups, names)); !slices.Equal(got, names) {
		t.Errorf("NamesOf(MaskOf(%q)) = %q", names, got)
	}
}

func TestRestrict(t *testing.T) {
	admin := Principal{Kind: SystemUser, Name: "boss", UID: "u-boss", Role: store.UserRoleAdmin, In: red, Out: red}
	api := Principal{Kind: APIUser, Name: "ops", In: store.AllGroups, Out: store.AllGroups}
	user := Principal{Kind: SystemUser, Name: "alice", UID: "u-alice", Role: store.UserRoleUser, In: red | blue, Out: green}
	anon := Anon()
	for _, tc := range []struct {
		name      string
		p         Principal
		requested []string
		want      uint64
		err       error
	}{
		{"an administrator's default is every group", admin, nil, store.AllGroups, nil},
		{"an API user's default is every group", api, nil, store.AllGroups, nil},
		{"a user's default is its IN groups", user, nil, red | blue, nil},
		{"an anonymous client's default is __ANON__", anon, nil, store.AnonGroup, nil},
		{"a user may name a subset of its IN groups", user, []string{"Blue"}, blue, nil},
		{"a user may not name a group it only receives from", user, []string{"Red", "Green"}, 0, ErrForbidden},
		{"a user may not name a group it is not in", user, []string{"Green"}, 0, ErrForbidden},
		{"an administrator may name any group", admin, []string{"Green", "Blue"}, green | blue, nil},
		{"an unknown group is invalid, for an administrator", admin, []string{"Gone"}, 0, store.ErrInvalid},
		{"an unknown group is invalid, for a user", user, []string{"Red", "Gone"}, 0, store.ErrInvalid},
		{"anonymous may name __ANON__", anon, []string{store.AnonGroupName}, store.AnonGroup, nil},
		{"anonymous may not name another group", anon, []string{"Red"}, 0, ErrForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Restrict(tc.p, testGroups, tc.requested)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Restrict = %#x, %v; want %v", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Restrict = %#x, %v; want %#x", got, err, tc.want)
			}
		})
	}
}

func TestPrincipalAdmin(t *testing.T) {
	for _, tc := range []struct {
		p    Principal
		want bool
	}{
		{Anon(), false},
		{Principal{Kind: APIUser, Name: "ops"}, true},
		{Principal{Kind: ChannelKey}, true},
		{Principal{Kind: SystemUser, Name: "boss", Role: store.UserRoleAdmin}, true},
		{Principal{Kind: SystemUser, Name: "alice", Role: store.UserRoleUser}, false},
		{Principal{Kind: SystemUser, Name: "nobody"}, false}, // no role is no administrator
		{Principal{Kind: Certificate, Name: "cert", Role: store.UserRoleAdmin}, false},
		{Principal{Kind: Anonymous, Role: store.UserRoleAdmin}, false},
	} {
		if got := tc.p.Admin(); got != tc.want {
			t.Errorf("%v %q role %q: Admin() = %v, want %v", tc.p.Kind, tc.p.Name, tc.p.Role, got, tc.want)
		}
	}
	if Anon().Authenticated() {
		t.Error("an anonymous principal is authenticated")
	}
	if a := Anon(); a.In != store.AnonGroup || a.Out != store.AnonGroup || a.Owner() != "" {
		t.Errorf("Anon() = %+v, want __ANON__ both ways and no owner", a)
	}
	if !(Principal{Kind: Certificate, Name: "c"}).Authenticated() {
		t.Error("a certificate principal is not authenticated")
	}
}

func TestPrincipalOwnerAndIdentity(t *testing.T) {
	serial := big.NewInt(42)
	for _, tc := range []struct {
		p               Principal
		owner, identity string
	}{
		{Anon(), "", ""},
		{Principal{Kind: APIUser, Name: "ops"}, "api:ops", ""},
		{Principal{Kind: ChannelKey, Name: "key"}, "", ""},
		{Principal{Kind: SystemUser, Name: "alice", UID: "u1"}, "alice", ""},
		{Principal{Kind: SystemUser, Name: "alice", UID: "u1", Serial: serial}, "alice", "alice"},
		{Principal{Kind: Certificate, Name: "sensor-7", Serial: serial}, "sensor-7", "sensor-7"},
	} {
		if got := tc.p.Owner(); got != tc.owner {
			t.Errorf("%v %q: Owner() = %q, want %q", tc.p.Kind, tc.p.Name, got, tc.owner)
		}
		if got := tc.p.Identity(); got != tc.identity {
			t.Errorf("%v %q: Identity() = %q, want %q", tc.p.Kind, tc.p.Name, got, tc.identity)
		}
	}
	u := Principal{Kind: SystemUser, Name: "alice", UID: "u1"}
	if !u.IsUser("u1") || u.IsUser("u2") || u.IsUser("") {
		t.Error("IsUser: want true for its own uid only")
	}
	if (Principal{Kind: SystemUser}).IsUser("") {
		t.Error("a principal without a uid is the user with an empty uid")
	}
	if (Principal{Kind: APIUser, UID: "u1"}).IsUser("u1") {
		t.Error("an API user is a system user")
	}
}

func TestPrincipalReadsAndChanges(t *testing.T) {
	alice := Principal{Kind: SystemUser, Name: "alice", UID: "u1", Role: store.UserRoleUser, In: red, Out: red | blue}
	boss := Principal{Kind: SystemUser, Name: "boss", UID: "u2", Role: store.UserRoleAdmin, In: green, Out: green}
	bossAll := boss
	bossAll.SeesAll = true
	cert := Principal{Kind: Certificate, Name: "sensor", Serial: big.NewInt(7), In: store.AnonGroup, Out: store.AnonGroup}
	api := Principal{Kind: APIUser, Name: "ops", In: store.AllGroups, Out: store.AllGroups}
	anon := Anon()

	if alice.Reads() != red|blue || bossAll.Reads() != store.AllGroups || boss.Reads() != green {
		t.Errorf("Reads: alice %#x, boss %#x, boss seeing all %#x", alice.Reads(), boss.Reads(), bossAll.Reads())
	}
	for _, tc := range []struct {
		name   string
		p      Principal
		groups uint64
		owner  string
		read   bool
	}{
		{"a shared OUT group", alice, blue | green, "", true},
		{"no shared group", alice, green, "", false},
		{"its own record shared with no group", alice, 0, "alice", true},
		{"another's record shared with no group", alice, 0, "bob", false},
		{"an administrator reads by its OUT groups on the client API", boss, red, "", false},
		{"an administrator seeing all reads everything", bossAll, red, "", true},
		{"seeing all includes records of no group", bossAll, 0, "alice", true},
		{"an API user's every group", api, red, "", true},
		{"a reader of every group sees even records of no group", api, 0, "alice", true},
		{"its owner name is api:NAME", api, 0, "api:ops", true},
		{"anonymous sees __ANON__", anon, store.AnonGroup, "", true},
		{"anonymous does not see Red", anon, red, "", false},
		{"anonymous owns nothing", anon, 0, "", false},
		{"a certificate's own record", cert, 0, "sensor", true},
		{"a record for every group", cert, store.AllGroups, "", true},
	} {
		if got := tc.p.CanRead(tc.groups, tc.owner); got != tc.read {
			t.Errorf("%s: CanRead(%#x, %q) = %v, want %v", tc.name, tc.groups, tc.owner, got, tc.read)
		}
	}
	for _, tc := range []struct {
		name   string
		p      Principal
		owner  string
		change bool
	}{
		{"an owner its own record", alice, "alice", true},
		{"a user another's record", alice, "bob", false},
		{"a user an anonymous record", alice, "", true},
		{"a user an API user's record", alice, "api:ops", false},
		{"an administrator another's record", boss, "alice", true},
		{"an API user another's record", api, "alice", true},
		{"anonymous an anonymous record", anon, "", true},
		{"anonymous a user's record", anon, "alice", false},
		{"a certificate its own record", cert, "sensor", true},
		{"a certificate a user's record", cert, "alice", false},
	} {
		if got := tc.p.CanChange(tc.owner); got != tc.change {
			t.Errorf("%s: CanChange(%q) = %v, want %v", tc.name, tc.owner, got, tc.change)
		}
	}
}
