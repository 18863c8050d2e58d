package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// uidsOf lists the uids of bindings, in order, with their identities.
func uidsOf(bs []Binding) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.UID + "=" + b.Identity
	}
	return out
}

func TestUIDBindings(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	acc := s.Accounts()
	if bs, err := acc.UIDBindings(ctx); err != nil || len(bs) != 0 {
		t.Fatalf("a new database's bindings: %+v, %v", bs, err)
	}
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	if err := acc.BindUIDs(ctx, []Binding{
		{UID: "ANDROID-b", Identity: "alice", At: t0.Add(time.Second)},
		{UID: "ANDROID-a", Identity: "alice", At: t0},
		{UID: "ANDROID-c", Identity: "bob", At: t0.Add(2 * time.Second)},
	}); err != nil {
		t.Fatal(err)
	}
	all, err := acc.UIDBindings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := uidsOf(all), []string{"ANDROID-a=alice", "ANDROID-b=alice", "ANDROID-c=bob"}; !slices.Equal(got, want) {
		t.Errorf("UIDBindings = %q, want %q (oldest first)", got, want)
	}
	if !all[0].At.Equal(t0) {
		t.Errorf("bound at %v, want %v", all[0].At, t0)
	}

	// The first identity keeps a uid; its own rebinding changes nothing.
	if err := acc.BindUIDs(ctx, []Binding{
		{UID: "ANDROID-a", Identity: "bob", At: t0.Add(time.Hour)},
		{UID: "ANDROID-b", Identity: "alice", At: t0.Add(time.Hour)},
		{UID: "ANDROID-d", Identity: "bob", At: t0.Add(3 * time.Second)},
	}); err != nil {
		t.Fatal(err)
	}
	alice, err := acc.UIDsOf(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := uidsOf(alice), []string{"ANDROID-a=alice", "ANDROID-b=alice"}; !slices.Equal(got, want) {
		t.Errorf("UIDsOf(alice) = %q, want %q", got, want)
	}
	if !alice[1].At.Equal(t0.Add(time.Second)) {
		t.Errorf("a rebinding moved the binding's time to %v", alice[1].At)
	}
	bob, err := acc.UIDsOf(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := uidsOf(bob), []string{"ANDROID-c=bob", "ANDROID-d=bob"}; !slices.Equal(got, want) {
		t.Errorf("UIDsOf(bob) = %q, want %q", got, want)
	}
	if none, err := acc.UIDsOf(ctx, "carol"); err != nil || len(none) != 0 {
		t.Errorf("UIDsOf(carol) = %+v, %v", none, err)
	}

	// A batch with an invalid uid stores none of it.
	for _, bad := range []string{"", strings.Repeat("u", 1025), "bad\x00uid", "\xff"} {
		err := acc.BindUIDs(ctx, []Binding{{UID: "ANDROID-e", Identity: "carol", At: t0}, {UID: bad, Identity: "carol", At: t0}})
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("BindUIDs with uid %q: %v, want ErrInvalid", bad, err)
		}
	}
	if carol, _ := acc.UIDsOf(ctx, "carol"); len(carol) != 0 {
		t.Errorf("a refused batch was stored in part: %+v", carol)
	}
	if err := acc.BindUIDs(ctx, nil); err != nil {
		t.Errorf("binding nothing: %v", err)
	}

	// Kept across a restart.
	path := s.Path()
	s.Close()
	again := openAt(t, path, Options{})
	if all, err := again.Accounts().UIDBindings(ctx); err != nil || len(all) != 4 {
		t.Errorf("after reopening: %q, %v", uidsOf(all), err)
	}
}

func TestDeletedUserFreesItsUIDs(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	acc := s.Accounts()
	alice := newUser(t, s, "alice")
	now := time.Now()
	if err := acc.BindUIDs(ctx, []Binding{
		{UID: "ANDROID-a1", Identity: "alice", At: now},
		{UID: "ANDROID-a2", Identity: "alice", At: now},
		{UID: "ANDROID-b1", Identity: "bob", At: now},
		{UID: "ANDROID-s1", Identity: "sensor", At: now}, // a certificate principal
	}); err != nil {
		t.Fatal(err)
	}
	// A failed deletion (an unknown uid in the batch) frees nothing.
	if err := acc.DeleteUsers(ctx, []string{alice.UID, "no-such-uid"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("DeleteUsers with an unknown uid: %v", err)
	}
	if bs, _ := acc.UIDsOf(ctx, "alice"); len(bs) != 2 {
		t.Errorf("a failed deletion freed alice's uids: %+v", bs)
	}
	if err := acc.DeleteUsers(ctx, []string{alice.UID}); err != nil {
		t.Fatal(err)
	}
	all, err := acc.UIDBindings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := uidsOf(all), []string{"ANDROID-b1=bob", "ANDROID-s1=sensor"}; !slices.Equal(got, want) {
		t.Errorf("after deleting alice: %q, want %q", got, want)
	}
	// Alice's uids are free for the next identity.
	if err := acc.BindUIDs(ctx, []Binding{{UID: "ANDROID-a1", Identity: "bob", At: now}}); err != nil {
		t.Fatal(err)
	}
	if bs, _ := acc.UIDsOf(ctx, "bob"); len(bs) != 2 {
		t.Errorf("bob could not take a freed uid: %q", uidsOf(bs))
	}
}

// openAtVersion makes a database at path migrated up to version v only (a
// database written by an older Outpost), for the caller to fill with SQL
// before Open migrates the rest.
func openAtVersion(t *testing.T, path string, v int) *sql.DB {
	t.Helper()
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		t.Fatal(err)
	}
	dsn, err := writerDSN(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := migrate(context.Background(), db, ms[:v]); err != nil {
		db.Close()
		t.Fatal(err)
	}
	return db
}

// TestAccessMigration opens a database from before groups existed:
// certificate packages become their users' alone, everything else stays
// visible to everyone, and the users' group fields become memberships.
func TestAccessMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	old := openAtVersion(t, path, 10)
	for _, q := range []string{
		`INSERT INTO system_users(uid, name, grp, password_hash, token_hash, certificate_package_name, certificate_package_hash, created_at)
			VALUES ('u-alice', 'alice', 'Red,Blue', 'x', 't-alice', 'alice.zip', 'hash-alice', 0),
			       ('u-bob', 'bob', '', 'x', 't-bob', '', '', 0)`,
		`INSERT INTO blobs(id, state, size, sha256, chunk_size, created_at) VALUES (1, 1, 0, '', 1, 0)`,
		`INSERT INTO data_packages(uid, name, hash, blob_id, keywords, size, submitted_at) VALUES
			('p-alice', 'alice.zip', 'hash-alice', 1, '["connection","alice.zip"]', 0, 0),
			('p-orphan', 'gone.zip', 'hash-gone', 1, '["connection","gone.zip"]', 0, 0),
			('p-map', 'map.zip', 'hash-map', 1, '["map","connections"]', 0, 0)`,
		`INSERT INTO cot_latest(uid, type, lat, lon, stale, received_at, event_id) VALUES ('ANDROID-1', 'a-f-G', 1, 2, 0, 0, 0)`,
		`INSERT INTO server_objects(uid, kind, origin, type, lat, lon, stale, replay, repeat, created_at, updated_at, xml)
			VALUES ('marker-1', 'geo', 'api', 'a-u-G', 1, 2, 0, 0, 0, 0, 0, x'00')`,
		`INSERT INTO excheck_templates(uid, name, created_at, updated_at, hash, xml) VALUES ('tpl-1', 'tpl', 0, 0, 'h', x'00')`,
		`INSERT INTO excheck_checklists(uid, name, created_at, updated_at, xml) VALUES ('cl-1', 'cl', 0, 0, x'00')`,
	} {
		if _, err := old.Exec(q); err != nil {
			old.Close()
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s := openAt(t, path, Options{})
	ctx := context.Background()
	acc := s.Accounts()
	// The certificate package is its user's alone; one whose user is gone
	// is an administrator's only; other packages stay everyone's.
	for _, tc := range []struct {
		hash, owner string
		groups      uint64
	}{
		{"hash-alice", "alice", 0},
		{"hash-gone", "", 0},
		{"hash-map", "", AllGroups},
	} {
		p, err := s.Files().DataPackageByHash(ctx, tc.hash)
		if err != nil {
			t.Fatal(err)
		}
		if p.Groups != tc.groups || p.Owner != tc.owner {
			t.Errorf("package %s: groups %#x, owner %q; want %#x, %q", tc.hash, p.Groups, p.Owner, tc.groups, tc.owner)
		}
	}
	for table, uid := range map[string]string{"cot_latest": "ANDROID-1", "server_objects": "marker-1",
		"excheck_templates": "tpl-1", "excheck_checklists": "cl-1"} {
		if got := stampOf(t, s, table, uid); got != AllGroups {
			t.Errorf("%s %s: groups %#x, want every group", table, uid, got)
		}
		if got := seenIn(t, s, table, AnonGroup); len(got) != 1 {
			t.Errorf("%s: __ANON__ sees %q, want the old row", table, got)
		}
	}
	var owner string
	if err := s.r.QueryRow(`SELECT owner FROM server_objects WHERE uid = 'marker-1'`).Scan(&owner); err != nil || owner != "" {
		t.Errorf("an old server object's owner: %q, %v", owner, err)
	}
	// Users are users; __ANON__ exists; nothing has moved yet.
	for _, uid := range []string{"u-alice", "u-bob"} {
		u, err := acc.UserByUID(ctx, uid)
		if err != nil || u.Role != UserRoleUser {
			t.Errorf("user %s: %+v, %v; want role user", uid, u, err)
		}
	}
	if got := groupsOf(t, s); len(got) != 1 || got[AnonGroupName] != AnonBit {
		t.Errorf("groups after the migration: %v", got)
	}
	if g := generation(t, s); g != 0 {
		t.Errorf("access generation %d after the migration, want 0", g)
	}

	// The group field becomes memberships, as the appliance does at start.
	if n, err := acc.AdoptGroupFields(ctx); err != nil || n != 1 {
		t.Fatalf("AdoptGroupFields = %d, %v; want 1", n, err)
	}
	want := []Membership{member("Blue", true, true), member("Red", true, true)}
	if got := memberships(t, s, "u-alice"); !slices.Equal(got, want) {
		t.Errorf("alice's memberships %+v, want %+v", got, want)
	}
	if got := memberships(t, s, "u-bob"); len(got) != 0 {
		t.Errorf("bob's memberships %+v, want none", got)
	}
	bits := groupsOf(t, s)
	if bits["Blue"] == AnonBit || bits["Red"] == AnonBit || bits["Blue"] == bits["Red"] || len(bits) != 3 {
		t.Errorf("groups made from the field: %v", bits)
	}
}
