package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// groupsOf maps every group's name to its bit.
func groupsOf(t testing.TB, s *Store) map[string]int {
	t.Helper()
	gs, err := s.Accounts().Groups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, g := range gs {
		out[g.Name] = g.Bit
	}
	return out
}

// generation reads the access generation.
func generation(t testing.TB, s *Store) int64 {
	t.Helper()
	n, err := s.Accounts().AccessGeneration(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// newUser creates a system user without groups.
func newUser(t testing.TB, s *Store, name string) User {
	t.Helper()
	u, err := s.Accounts().CreateUser(context.Background(), UserInput{Name: name, Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// memberships reads the user's memberships.
func memberships(t testing.TB, s *Store, uid string) []Membership {
	t.Helper()
	ms, err := s.Accounts().Memberships(context.Background(), uid)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// member is a membership with both directions switched on.
func member(group string, in, out bool) Membership {
	return Membership{Group: group, In: in, Out: out, ActiveIn: true, ActiveOut: true}
}

func TestCreateGroup(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	acc := s.Accounts()
	if got := groupsOf(t, s); len(got) != 1 || got[AnonGroupName] != AnonBit {
		t.Fatalf("a new database has groups %v, want __ANON__ on bit 2 alone", got)
	}
	// Lowest free bit first, never 2.
	for i, tc := range []struct {
		name string
		bit  int
	}{{"Red", 0}, {"Blue", 1}, {"Green", 3}, {"Cyan", 4}} {
		g, err := acc.CreateGroup(ctx, tc.name, "team "+tc.name)
		if err != nil {
			t.Fatalf("group %d: %v", i, err)
		}
		if g.Name != tc.name || g.Bit != tc.bit || g.Mask() != 1<<tc.bit || g.Description != "team "+tc.name || g.Created.IsZero() {
			t.Errorf("CreateGroup(%q) = %+v, want bit %d", tc.name, g, tc.bit)
		}
	}
	gs, err := acc.Groups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range gs {
		names = append(names, g.Name)
		if g.Name == "Green" && (g.Description != "team Green" || g.Created.IsZero()) {
			t.Errorf("stored %+v", g)
		}
	}
	if want := []string{"Blue", "Cyan", "Green", "Red", AnonGroupName}; !slices.Equal(names, want) {
		t.Errorf("Groups() = %q, want %q (by name)", names, want)
	}

	for _, name := range []string{"Red", AnonGroupName} {
		if _, err := acc.CreateGroup(ctx, name, ""); !errors.Is(err, ErrConflict) {
			t.Errorf("CreateGroup(%q) again: %v, want ErrConflict", name, err)
		}
	}
	for _, tc := range []struct{ name, desc string }{
		{"", ""},
		{strings.Repeat("x", MaxGroupName+1), ""},
		{"Red,Blue", ""},
		{" Red", ""},
		{"Red ", ""},
		{"Red\tTeam", ""},
		{"Red\x00", ""},
		{"\xff\xfe", ""},
		{"Fine", strings.Repeat("d", 256)},
		{"Fine", "line\nbreak"},
	} {
		if _, err := acc.CreateGroup(ctx, tc.name, tc.desc); !errors.Is(err, ErrInvalid) {
			t.Errorf("CreateGroup(%q, %d bytes of description): %v, want ErrInvalid", tc.name, len(tc.desc), err)
		}
	}
	if got := groupsOf(t, s); len(got) != 5 {
		t.Errorf("refused groups were stored: %v", got)
	}
	// The longest name, and names with inner spaces and other scripts.
	for _, name := range []string{strings.Repeat("x", MaxGroupName), "Red Team", "Équipe bleue"} {
		if _, err := acc.CreateGroup(ctx, name, ""); err != nil {
			t.Errorf("CreateGroup(%q): %v", name, err)
		}
	}
	// A deleted group's bit is free again.
	if err := acc.DeleteGroup(ctx, "Blue"); err != nil {
		t.Fatal(err)
	}
	if g, err := acc.CreateGroup(ctx, "Magenta", ""); err != nil || g.Bit != 1 {
		t.Errorf("after deleting Blue: %+v, %v; want bit 1", g, err)
	}
}

func TestGroupLimit(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	acc := s.Accounts()
	for i := range MaxGroups - 1 {
		if _, err := acc.CreateGroup(ctx, fmt.Sprintf("g%02d", i), ""); err != nil {
			t.Fatalf("group %d of %d: %v", i+1, MaxGroups-1, err)
		}
	}
	bits := groupsOf(t, s)
	if len(bits) != MaxGroups {
		t.Fatalf("%d groups, want %d", len(bits), MaxGroups)
	}
	seen := map[int]string{}
	for name, b := range bits {
		if other, dup := seen[b]; dup || b < 0 || b > 63 {
			t.Errorf("group %q on bit %d (also %q)", name, b, other)
		}
		seen[b] = name
	}
	_, err := acc.CreateGroup(ctx, "one-too-many", "")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "delete one first") {
		t.Fatalf("the 65th group: %v, want ErrInvalid saying what to do", err)
	}
	if err := acc.DeleteGroup(ctx, "g40"); err != nil {
		t.Fatal(err)
	}
	if g, err := acc.CreateGroup(ctx, "one-too-many", ""); err != nil || g.Bit != bits["g40"] {
		t.Errorf("after deleting g40 (bit %d): %+v, %v", bits["g40"], g, err)
	}
}

// stampedRow inserts a row with the given group mask into one of the tables
// whose rows carry groups, keyed by uid.
func stampedRow(t testing.TB, s *Store, table, uid string, mask uint64) {
	t.Helper()
	var err error
	switch table {
	case "cot_latest":
		_, err = s.w.Exec(`INSERT INTO cot_latest(uid, type, lat, lon, stale, received_at, event_id, groups) VALUES (?, 'a-f-G', 1, 2, 0, 0, 0, ?)`, uid, maskToDB(mask))
	case "cot_events":
		_, err = s.w.Exec(`INSERT INTO cot_events(uid, type, how, time, start, stale, lat, lon, hae, received_at, xml, groups)
			VALUES (?, 'a-f-G', 'm-g', 0, 0, 0, 1, 2, 0, 0, x'00', ?)`, uid, maskToDB(mask))
	case "cot_usage":
		_, err = s.w.Exec(`INSERT INTO cot_usage(uid, bytes, events, groups) VALUES (?, 1, 1, ?)`, uid, maskToDB(mask))
	case "server_objects":
		_, err = s.w.Exec(`INSERT INTO server_objects(uid, kind, origin, type, lat, lon, stale, replay, repeat, created_at, updated_at, xml, groups)
			VALUES (?, 'geo', 'api', 'a-u-G', 1, 2, 0, 0, 0, 0, 0, x'00', ?)`, uid, maskToDB(mask))
	case "data_packages":
		blob := putBlob(t, s, []byte(uid))
		_, err = s.w.Exec(`INSERT INTO data_packages(uid, name, hash, blob_id, size, submitted_at, groups) VALUES (?, ?, ?, ?, 1, 0, ?)`,
			uid, uid+".zip", blob.SHA256, blob.ID, maskToDB(mask))
	case "excheck_templates":
		_, err = s.w.Exec(`INSERT INTO excheck_templates(uid, name, created_at, updated_at, hash, xml, groups) VALUES (?, ?, 0, 0, ?, x'00', ?)`,
			uid, uid, uid, maskToDB(mask))
	case "excheck_checklists":
		_, err = s.w.Exec(`INSERT INTO excheck_checklists(uid, name, created_at, updated_at, xml, groups) VALUES (?, ?, 0, 0, x'00', ?)`,
			uid, uid, maskToDB(mask))
	default:
		t.Fatalf("no table %s", table)
	}
	if err != nil {
		t.Fatalf("insert into %s: %v", table, err)
	}
}

// stampOf reads the group mask of a row of table.
func stampOf(t testing.TB, s *Store, table, uid string) uint64 {
	t.Helper()
	var m int64
	if err := s.r.QueryRow(`SELECT groups FROM `+table+` WHERE uid = ?`, uid).Scan(&m); err != nil {
		t.Fatalf("%s row %s: %v", table, uid, err)
	}
	return maskFromDB(m)
}

// seenIn lists the uids of table's rows a reader of mask sees (seenBy).
func seenIn(t testing.TB, s *Store, table string, mask uint64) []string {
	t.Helper()
	cond, args := seenBy("groups", mask)
	rows, err := s.r.Query(`SELECT uid FROM `+table+` WHERE `+cond+` ORDER BY uid`, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var uid string
		if err := rows.Scan(&uid); err != nil {
			t.Fatal(err)
		}
		out = append(out, uid)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDeleteGroup(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	acc := s.Accounts()
	red, err := acc.CreateGroup(ctx, "Red", "")
	if err != nil {
		t.Fatal(err)
	}
	blue, err := acc.CreateGroup(ctx, "Blue", "")
	if err != nil {
		t.Fatal(err)
	}
	alice, bob := newUser(t, s, "alice"), newUser(t, s, "bob")
	if err := acc.SetMemberships(ctx, alice.UID, []Membership{member("Red", true, true), member("Blue", false, true)}); err != nil {
		t.Fatal(err)
	}
	if err := acc.SetMemberships(ctx, bob.UID, []Membership{member("Red", true, false)}); err != nil {
		t.Fatal(err)
	}
	// Every table whose rows carry groups holds a row of each kind.
	rows := map[string]uint64{
		"red":      red.Mask(),
		"red-blue": red.Mask() | blue.Mask(),
		"blue":     blue.Mask(),
		"anon":     AnonGroup,
		"every":    AllGroups,
		"none":     0,
	}
	after := map[string]uint64{ // once Red is gone
		"red":      0,
		"red-blue": blue.Mask(),
		"blue":     blue.Mask(),
		"anon":     AnonGroup,
		"every":    AllGroups, // still every group, the ones made later included
		"none":     0,
	}
	for _, table := range stampedTables {
		for uid, m := range rows {
			stampedRow(t, s, table, uid, m)
		}
	}

	t.Run("a failure in the middle changes nothing", func(t *testing.T) {
		// The last table refuses its update: the group, its memberships
		// and every table's stamps stay as they were.
		if _, err := s.w.Exec(`CREATE TRIGGER refuse BEFORE UPDATE ON excheck_checklists BEGIN SELECT RAISE(ABORT, 'injected'); END`); err != nil {
			t.Fatal(err)
		}
		gen := generation(t, s)
		if err := acc.DeleteGroup(ctx, "Red"); err == nil || !strings.Contains(err.Error(), "injected") {
			t.Fatalf("DeleteGroup with a failing table: %v", err)
		}
		if _, err := s.w.Exec(`DROP TRIGGER refuse`); err != nil {
			t.Fatal(err)
		}
		if _, ok := groupsOf(t, s)["Red"]; !ok {
			t.Error("the group went although its deletion failed")
		}
		if ms := memberships(t, s, bob.UID); len(ms) != 1 {
			t.Errorf("bob's memberships %+v after a failed deletion", ms)
		}
		for _, table := range stampedTables {
			for uid, m := range rows {
				if got := stampOf(t, s, table, uid); got != m {
					t.Errorf("%s %s: groups %#x after a failed deletion, want %#x", table, uid, got, m)
				}
			}
		}
		if generation(t, s) != gen {
			t.Error("a failed deletion moved the access generation")
		}
	})

	gen := generation(t, s)
	if err := acc.DeleteGroup(ctx, "Red"); err != nil {
		t.Fatal(err)
	}
	if generation(t, s) <= gen {
		t.Error("deleting a group did not move the access generation")
	}
	if _, ok := groupsOf(t, s)["Red"]; ok {
		t.Fatal("Red still exists")
	}
	if ms := memberships(t, s, alice.UID); !slices.Equal(ms, []Membership{member("Blue", false, true)}) {
		t.Errorf("alice's memberships %+v, want Blue OUT alone", ms)
	}
	if ms := memberships(t, s, bob.UID); len(ms) != 0 {
		t.Errorf("bob's memberships %+v, want none", ms)
	}
	for _, table := range stampedTables {
		for uid, want := range after {
			if got := stampOf(t, s, table, uid); got != want {
				t.Errorf("%s %s: groups %#x after deleting Red, want %#x", table, uid, got, want)
			}
		}
	}

	// A group made later on the same bit sees nothing of the old one's
	// data: only what was for every group.
	cyan, err := acc.CreateGroup(ctx, "Cyan", "")
	if err != nil {
		t.Fatal(err)
	}
	if cyan.Bit != red.Bit {
		t.Fatalf("Cyan on bit %d, want Red's %d", cyan.Bit, red.Bit)
	}
	for _, table := range stampedTables {
		if got := seenIn(t, s, table, cyan.Mask()); !slices.Equal(got, []string{"every"}) {
			t.Errorf("%s: Cyan sees %q, want [every]", table, got)
		}
		// What was Red's alone is an administrator's only.
		if got := seenIn(t, s, table, AllGroups); len(got) != len(rows) {
			t.Errorf("%s: an administrator sees %q, want all %d rows", table, got, len(rows))
		}
	}

	if err := acc.DeleteGroup(ctx, "Red"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleting Red again: %v, want ErrNotFound", err)
	}
	if err := acc.DeleteGroup(ctx, AnonGroupName); !errors.Is(err, ErrInvalid) {
		t.Errorf("deleting __ANON__: %v, want ErrInvalid", err)
	}
	if groupsOf(t, s)[AnonGroupName] != AnonBit {
		t.Error("__ANON__ is gone")
	}
}

func TestMemberships(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	acc := s.Accounts()
	for _, g := range []string{"Red", "Blue", "Green"} {
		if _, err := acc.CreateGroup(ctx, g, ""); err != nil {
			t.Fatal(err)
		}
	}
	alice, bob := newUser(t, s, "alice"), newUser(t, s, "bob")
	if ms := memberships(t, s, alice.UID); len(ms) != 0 {
		t.Fatalf("a new user's memberships %+v", ms)
	}
	set := []Membership{{Group: "Red", In: true, Out: true}, {Group: "Blue", Out: true}}
	gen := generation(t, s)
	if err := acc.SetMemberships(ctx, alice.UID, set); err != nil {
		t.Fatal(err)
	}
	if generation(t, s) <= gen {
		t.Error("SetMemberships did not move the access generation")
	}
	// By group name; both directions switched on.
	want := []Membership{member("Blue", false, true), member("Red", true, true)}
	if got := memberships(t, s, alice.UID); !slices.Equal(got, want) {
		t.Fatalf("alice's memberships %+v, want %+v", got, want)
	}
	if err := acc.SetMemberships(ctx, bob.UID, []Membership{{Group: "Green", In: true}}); err != nil {
		t.Fatal(err)
	}
	all, err := acc.MembershipsOf(ctx)
	if err != nil || len(all) != 2 || !slices.Equal(all[alice.UID], want) || !slices.Equal(all[bob.UID], []Membership{member("Green", true, false)}) {
		t.Errorf("MembershipsOf() = %+v, %v", all, err)
	}
	some, err := acc.MembershipsOf(ctx, bob.UID, "no-such-uid")
	if err != nil || len(some) != 1 || len(some[bob.UID]) != 1 {
		t.Errorf("MembershipsOf(bob, unknown) = %+v, %v", some, err)
	}

	// Refusals change nothing.
	gen = generation(t, s)
	for _, tc := range []struct {
		name string
		uid  string
		ms   []Membership
		want error
	}{
		{"no direction", alice.UID, []Membership{{Group: "Red"}}, ErrInvalid},
		{"no direction, but active flags", alice.UID, []Membership{{Group: "Red", ActiveIn: true, ActiveOut: true}}, ErrInvalid},
		{"an unknown group", alice.UID, []Membership{{Group: "Red", In: true}, {Group: "Gone", In: true}}, ErrNotFound},
		{"a group named twice", alice.UID, []Membership{{Group: "Red", In: true}, {Group: "Red", Out: true}}, ErrInvalid},
		{"an invalid name", alice.UID, []Membership{{Group: "Red,Blue", In: true}}, ErrInvalid},
		{"an unknown user", "no-such-uid", []Membership{{Group: "Red", In: true}}, ErrNotFound},
	} {
		if err := acc.SetMemberships(ctx, tc.uid, tc.ms); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	tooMany := make([]Membership, MaxGroups+1)
	for i := range tooMany {
		tooMany[i] = Membership{Group: fmt.Sprintf("g%d", i), In: true}
	}
	if err := acc.SetMemberships(ctx, alice.UID, tooMany); !errors.Is(err, ErrInvalid) {
		t.Errorf("%d memberships: %v, want ErrInvalid", len(tooMany), err)
	}
	if got := memberships(t, s, alice.UID); !slices.Equal(got, want) {
		t.Errorf("after refusals alice's memberships are %+v, want %+v", got, want)
	}
	if generation(t, s) != gen {
		t.Error("refused changes moved the access generation")
	}

	// A group the user was already in keeps its switches; a new one starts
	// switched on.
	if _, err := acc.SetActive(ctx, alice.UID, []Membership{{Group: "Red", In: true, ActiveIn: false}}); err != nil {
		t.Fatal(err)
	}
	if err := acc.SetMemberships(ctx, alice.UID, []Membership{{Group: "Red", In: true, Out: true}, {Group: "Green", In: true, Out: true}}); err != nil {
		t.Fatal(err)
	}
	want = []Membership{member("Green", true, true), {Group: "Red", In: true, Out: true, ActiveIn: false, ActiveOut: true}}
	if got := memberships(t, s, alice.UID); !slices.Equal(got, want) {
		t.Errorf("after replacing: %+v, want %+v", got, want)
	}
	if err := acc.SetMemberships(ctx, alice.UID, nil); err != nil {
		t.Fatal(err)
	}
	if got := memberships(t, s, alice.UID); len(got) != 0 {
		t.Errorf("after removing every membership: %+v", got)
	}
	// Deleting a user removes its memberships.
	if err := acc.DeleteUser(ctx, bob.UID); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, "group_members"); n != 0 {
		t.Errorf("%d memberships left after deleting their users", n)
	}
}

func TestSetActive(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	acc := s.Accounts()
	for _, g := range []string{"Red", "Blue", "Green"} {
		if _, err := acc.CreateGroup(ctx, g, ""); err != nil {
			t.Fatal(err)
		}
	}
	alice, bob := newUser(t, s, "alice"), newUser(t, s, "bob")
	if err := acc.SetMemberships(ctx, alice.UID, []Membership{{Group: "Red", In: true, Out: true}, {Group: "Blue", Out: true}}); err != nil {
		t.Fatal(err)
	}
	if err := acc.SetMemberships(ctx, bob.UID, []Membership{{Group: "Red", In: true, Out: true}}); err != nil {
		t.Fatal(err)
	}
	gen := generation(t, s)
	// Red's IN off; its OUT is not named and stays.
	got, err := acc.SetActive(ctx, alice.UID, []Membership{{Group: "Red", In: true, ActiveIn: false}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Membership{member("Blue", false, true), {Group: "Red", In: true, Out: true, ActiveIn: false, ActiveOut: true}}
	if !slices.Equal(got, want) {
		t.Fatalf("SetActive returned %+v, want %+v", got, want)
	}
	if generation(t, s) <= gen {
		t.Error("SetActive did not move the access generation")
	}
	// Only the directions the user is a member in are switched: Blue is
	// OUT only, so its IN switch is not touched; Green is none of alice's.
	got, err = acc.SetActive(ctx, alice.UID, []Membership{
		{Group: "Blue", In: true, Out: true, ActiveIn: false, ActiveOut: false},
		{Group: "Green", In: true, Out: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	want = []Membership{{Group: "Blue", Out: true, ActiveIn: true, ActiveOut: false}, {Group: "Red", In: true, Out: true, ActiveIn: false, ActiveOut: true}}
	if !slices.Equal(got, want) {
		t.Errorf("after switching Blue both ways and Green: %+v, want %+v", got, want)
	}
	if !slices.Equal(memberships(t, s, alice.UID), want) {
		t.Error("SetActive's answer is not what is stored")
	}
	// Switched back on.
	got, err = acc.SetActive(ctx, alice.UID, []Membership{{Group: "Red", In: true, ActiveIn: true}, {Group: "Blue", Out: true, ActiveOut: true}})
	if err != nil || !slices.Equal(got, []Membership{member("Blue", false, true), member("Red", true, true)}) {
		t.Errorf("switched back on: %+v, %v", got, err)
	}
	// Another user's switches are its own.
	if got := memberships(t, s, bob.UID); !slices.Equal(got, []Membership{member("Red", true, true)}) {
		t.Errorf("bob's memberships %+v", got)
	}
	if _, err := acc.SetActive(ctx, alice.UID, make([]Membership, 2*MaxGroups+1)); !errors.Is(err, ErrInvalid) {
		t.Errorf("%d items: %v, want ErrInvalid", 2*MaxGroups+1, err)
	}
}

func TestParseGroupField(t *testing.T) {
	for _, tc := range []struct {
		field string
		want  []string
		err   bool
	}{
		{"", nil, false},
		{" , ,", nil, false},
		{"Red", []string{"Red"}, false},
		{"Red,Blue", []string{"Blue", "Red"}, false},
		{" Red ,  Blue Team ,Red,", []string{"Blue Team", "Red"}, false},
		{"Red,Red", []string{"Red"}, false},
		{"Red," + strings.Repeat("x", MaxGroupName+1), nil, true},
		{"Red,Bad\x01Name", nil, true},
		{"\xff", nil, true},
	} {
		got, err := ParseGroupField(tc.field)
		if tc.err {
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("ParseGroupField(%q) = %q, %v; want ErrInvalid", tc.field, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseGroupField(%q) = %q, %v; want %q", tc.field, got, err, tc.want)
		}
	}
}

func TestJoinGroups(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	acc := s.Accounts()
	if _, err := acc.CreateGroup(ctx, "Red", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := acc.CreateGroup(ctx, "Blue", ""); err != nil {
		t.Fatal(err)
	}
	alice := newUser(t, s, "alice")
	if err := acc.SetMemberships(ctx, alice.UID, []Membership{{Group: "Red", Out: true}, {Group: "Blue", In: true}}); err != nil {
		t.Fatal(err)
	}
	gen := generation(t, s)
	if err := acc.JoinGroups(ctx, alice.UID, []string{"Red", "New"}); err != nil {
		t.Fatal(err)
	}
	if generation(t, s) <= gen {
		t.Error("JoinGroups did not move the access generation")
	}
	// New is made, Red becomes both ways, Blue is kept as it was.
	want := []Membership{member("Blue", true, false), member("New", true, true), member("Red", true, true)}
	if got := memberships(t, s, alice.UID); !slices.Equal(got, want) {
		t.Errorf("after joining: %+v, want %+v", got, want)
	}
	if _, ok := groupsOf(t, s)["New"]; !ok {
		t.Error("the group New was not made")
	}
	// An unknown user: nothing is made.
	if err := acc.JoinGroups(ctx, "no-such-uid", []string{"Other"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("JoinGroups of an unknown user: %v, want ErrNotFound", err)
	}
	if _, ok := groupsOf(t, s)["Other"]; ok {
		t.Error("a failed JoinGroups left its group behind")
	}
	if err := acc.JoinGroups(ctx, alice.UID, nil); err != nil {
		t.Errorf("joining nothing: %v", err)
	}
}

func TestAccessGeneration(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	acc := s.Accounts()
	if g := generation(t, s); g != 0 {
		t.Errorf("a new database's access generation is %d, want 0", g)
	}
	if _, err := acc.CreateGroup(ctx, "Red", ""); err != nil {
		t.Fatal(err)
	}
	alice := newUser(t, s, "alice")
	bob := newUser(t, s, "bob")
	last := generation(t, s)
	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"SetRole", func() error { return acc.SetRole(ctx, alice.UID, UserRoleAdmin) }},
		{"SetMemberships", func() error {
			return acc.SetMemberships(ctx, alice.UID, []Membership{{Group: "Red", In: true, Out: true}})
		}},
		{"SetActive", func() error {
			_, err := acc.SetActive(ctx, alice.UID, []Membership{{Group: "Red", Out: true}})
			return err
		}},
		{"JoinGroups", func() error { return acc.JoinGroups(ctx, bob.UID, []string{"Red"}) }},
		{"DeleteGroup", func() error { return acc.DeleteGroup(ctx, "Red") }},
		{"AdoptGroupFields", func() error {
			if _, err := s.w.Exec(`UPDATE system_users SET grp = 'Blue' WHERE uid = ?`, bob.UID); err != nil {
				return err
			}
			_, err := acc.AdoptGroupFields(ctx)
			return err
		}},
		{"DeleteUsers", func() error { return acc.DeleteUsers(ctx, []string{alice.UID}) }},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		g := generation(t, s)
		if g <= last {
			t.Errorf("%s: the access generation stayed at %d", step.name, g)
		}
		last = g
	}
	// Failures leave it.
	if err := acc.SetRole(ctx, bob.UID, "root"); !errors.Is(err, ErrInvalid) {
		t.Errorf("SetRole root: %v", err)
	}
	if err := acc.SetRole(ctx, alice.UID, UserRoleUser); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetRole of a deleted user: %v", err)
	}
	if err := acc.DeleteUsers(ctx, []string{bob.UID, "no-such-uid"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteUsers with an unknown uid: %v", err)
	}
	if g := generation(t, s); g != last {
		t.Errorf("failed changes moved the access generation from %d to %d", last, g)
	}
	// Another process (another Store on the same file) sees it move.
	other := openAt(t, s.Path(), Options{})
	if g, err := other.Accounts().AccessGeneration(ctx); err != nil || g != last {
		t.Errorf("another store reads %d, %v; want %d", g, err, last)
	}
}

func TestAdoptGroupFields(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	acc := s.Accounts()
	alice, bob, carol := newUser(t, s, "alice"), newUser(t, s, "bob"), newUser(t, s, "carol")
	if _, err := acc.CreateGroup(ctx, "Blue", "kept"); err != nil {
		t.Fatal(err)
	}
	// The group field as an old database has it.
	for uid, grp := range map[string]string{alice.UID: " Red, Blue ,,Red", bob.UID: "Bad\x01Name"} {
		if _, err := s.w.Exec(`UPDATE system_users SET grp = ? WHERE uid = ?`, grp, uid); err != nil {
			t.Fatal(err)
		}
	}
	gen := generation(t, s)
	n, err := acc.AdoptGroupFields(ctx)
	if err != nil || n != 2 {
		t.Fatalf("AdoptGroupFields = %d, %v; want 2 users", n, err)
	}
	want := []Membership{member("Blue", true, true), member("Red", true, true)}
	if got := memberships(t, s, alice.UID); !slices.Equal(got, want) {
		t.Errorf("alice: %+v, want %+v", got, want)
	}
	// A field naming no valid group leaves the user without groups.
	if got := memberships(t, s, bob.UID); len(got) != 0 {
		t.Errorf("bob: %+v, want none", got)
	}
	if got := memberships(t, s, carol.UID); len(got) != 0 {
		t.Errorf("carol (no group field): %+v, want none", got)
	}
	var left int
	if err := s.r.QueryRow(`SELECT COUNT(*) FROM system_users WHERE grp != ''`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d group fields left after adopting them (%v)", left, err)
	}
	gs, err := acc.Groups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 3 || gs[0].Name != "Blue" || gs[0].Description != "kept" || gs[1].Name != "Red" {
		t.Errorf("groups %+v: want Blue (as it was), Red (made), __ANON__", gs)
	}
	if generation(t, s) <= gen {
		t.Error("adopting group fields did not move the access generation")
	}

	// Once is enough: a second run finds nothing and changes nothing.
	gen = generation(t, s)
	if n, err := acc.AdoptGroupFields(ctx); err != nil || n != 0 {
		t.Errorf("a second AdoptGroupFields = %d, %v; want 0", n, err)
	}
	if got := memberships(t, s, alice.UID); !slices.Equal(got, want) {
		t.Errorf("alice after a second run: %+v", got)
	}
	if got := len(groupsOf(t, s)); got != 3 {
		t.Errorf("%d groups after a second run, want 3", got)
	}
	if generation(t, s) != gen {
		t.Error("a run that changed nothing moved the access generation")
	}
}

func TestSeen(t *testing.T) {
	const red, blue = uint64(1), uint64(2)
	for _, tc := range []struct {
		groups, sees uint64
		want         bool
	}{
		{red, red, true},
		{red | blue, blue, true},
		{red, blue, false},
		{0, red, false},
		{0, AllGroups, true}, // an administrator sees records of no group
		{red, AllGroups, true},
		{AllGroups, red, true},
		{AllGroups, 0, false},
		{AnonGroup, AnonGroup, true},
		{red, 0, false},
		{1 << 63, 1 << 63, true}, // the sign bit of SQLite's integers
	} {
		if got := Seen(tc.groups, tc.sees); got != tc.want {
			t.Errorf("Seen(%#x, %#x) = %v, want %v", tc.groups, tc.sees, got, tc.want)
		}
	}

	// seenBy is the same rule in SQL.
	s := openTest(t, Options{})
	masks := map[string]uint64{"none": 0, "red": red, "blue": blue, "every": AllGroups, "top": 1 << 63}
	for uid, m := range masks {
		stampedRow(t, s, "cot_latest", uid, m)
	}
	for _, sees := range []uint64{0, red, blue, red | blue, 1 << 63, AnonGroup, AllGroups} {
		var want []string
		for uid, m := range masks {
			if Seen(m, sees) {
				want = append(want, uid)
			}
		}
		slices.Sort(want)
		if got := seenIn(t, s, "cot_latest", sees); !slices.Equal(got, want) {
			t.Errorf("seenBy(%#x) selects %q, Seen says %q", sees, got, want)
		}
	}
}
