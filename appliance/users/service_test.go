package users

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"outpost/appliance/fault"
	"outpost/appliance/pki"
	"outpost/appliance/store"
	"outpost/internal/testkit"
)

// changes records the names Options.Changed was called with.
type changes struct {
	mu    sync.Mutex
	names []string
}

func (c *changes) record(name string) {
	c.mu.Lock()
	c.names = append(c.names, name)
	c.mu.Unlock()
}

// take returns the names recorded since the last call.
func (c *changes) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.names
	c.names = nil
	return out
}

// env is a service over a real store and a real certificate authority in a
// temporary directory.
type env struct {
	st      *store.Store
	acc     *store.Accounts
	auth    *pki.Authority
	authCfg pki.Config
	svc     *Service
	changed *changes
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	cfg := pki.Config{
		CertsDir:          filepath.Join(dir, "certs"),
		CRLFile:           filepath.Join(dir, "certs", "crl.json"),
		ClientPackagesDir: filepath.Join(dir, "packages"),
		KeyType:           pki.KeyTypeECDSAP256,
		PublicHost:        "tak.example.org",
		SANs:              []string{"tak.example.org"},
		Password:          "package-secret",
		Logger:            testkit.Logger(t),
	}
	a, err := pki.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(dir, "outpost.db"), store.Options{Logger: testkit.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &env{st: st, acc: st.Accounts(), auth: a, authCfg: cfg, changed: &changes{}}
	e.svc = New(Options{Accounts: e.acc, Files: st.Files(), Authority: a, Changed: e.changed.record, Logger: testkit.Logger(t)})
	return e
}

// create makes a user through the service, with a certificate package when
// certs is set.
func (e *env) create(t *testing.T, name, groups string, certs bool) User {
	t.Helper()
	u, err := e.svc.Create(context.Background(), NewUser{
		UserInput: store.UserInput{Name: name, Password: "pw-" + name, Group: groups},
		Certs:     certs,
		Device:    pki.DeviceATAK,
	})
	if err != nil {
		t.Fatalf("Create(%q): %v", name, err)
	}
	return u
}

// certs returns the certificates issued to name.
func (e *env) certs(t *testing.T, name string) []pki.IssuedCert {
	t.Helper()
	cs, err := e.auth.Issued(name)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// crlSerials reads the CA's signed X.509 revocation list.
func (e *env) crlSerials(t *testing.T) map[string]bool {
	t.Helper()
	data, err := e.auth.CRLPEM()
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("no PEM block in the CRL %q", data)
	}
	crl, err := x509.ParseRevocationList(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := crl.CheckSignatureFrom(e.auth.CACert()); err != nil {
		t.Fatalf("the CRL is not signed by the CA: %v", err)
	}
	out := map[string]bool{}
	for _, r := range crl.RevokedCertificateEntries {
		out[r.SerialNumber.String()] = true
	}
	return out
}

func (e *env) packageFile(name string) string {
	return filepath.Join(e.authCfg.ClientPackagesDir, name)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestCreateWithCertificatePackage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	u := e.create(t, "alice", "Red, Blue", true)
	if u.UID == "" || u.Token == "" || u.Role != store.UserRoleUser {
		t.Errorf("created %+v", u.User)
	}
	if u.CertificatePackageName == "" || u.CertificatePackageHash == "" {
		t.Fatalf("no certificate package recorded: %+v", u.User)
	}
	if got := u.GroupNames(); !slices.Equal(got, []string{"Blue", "Red"}) {
		t.Errorf("groups %q, want Blue and Red", got)
	}
	for _, m := range u.Groups {
		if !m.In || !m.Out || !m.ActiveIn || !m.ActiveOut {
			t.Errorf("membership %+v: want both ways, switched on", m)
		}
	}
	stored, err := e.svc.Get(ctx, u.UID)
	if err != nil || stored.CertificatePackageHash != u.CertificatePackageHash || stored.CertificatePackageName != u.CertificatePackageName {
		t.Errorf("stored %+v, %v", stored.User, err)
	}
	// The package is the user's alone: owned by it, shared with no group.
	p, err := e.svc.CertificatePackage(ctx, stored.User)
	if err != nil {
		t.Fatal(err)
	}
	if p.Owner != "alice" || p.Groups != 0 || p.Hash != u.CertificatePackageHash || !slices.Contains(p.Keywords, store.ConnectionPackageKeyword) {
		t.Errorf("package %+v: want owner alice, no group", p)
	}
	if store.Seen(p.Groups, store.AnonGroup) || store.Seen(p.Groups, 1<<0|1<<1) {
		t.Error("a group reader sees the certificate package")
	}
	if !exists(e.packageFile(u.CertificatePackageName)) {
		t.Error("the package file was not written")
	}
	if cs := e.certs(t, "alice"); len(cs) != 1 || cs[0].Revoked {
		t.Errorf("certificates of alice: %+v, want one live", cs)
	}
	// A user without certificates has no package.
	bob := e.create(t, "bob", "", false)
	if _, err := e.svc.CertificatePackage(ctx, bob.User); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bob's package: %v, want ErrNotFound", err)
	}
	if bob.Groups != nil || len(e.certs(t, "bob")) != 0 {
		t.Errorf("bob: groups %+v, certificates %d", bob.Groups, len(e.certs(t, "bob")))
	}
}

func TestCreateIsBothOrNeither(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.create(t, "alice", "", false)

	t.Run("no authority", func(t *testing.T) {
		svc := New(Options{Accounts: e.acc, Files: e.st.Files(), Logger: testkit.Logger(t)})
		_, err := svc.Create(ctx, NewUser{UserInput: store.UserInput{Name: "nocert", Password: "pw"}, Certs: true})
		if !errors.Is(err, ErrNoAuthority) {
			t.Fatalf("Create with certificates and no authority: %v", err)
		}
		if _, err := e.svc.ByName(ctx, "nocert"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the user stayed without its package: %v", err)
		}
	})
	t.Run("a name no certificate can carry", func(t *testing.T) {
		_, err := e.svc.Create(ctx, NewUser{UserInput: store.UserInput{Name: "Zoë", Password: "pw", Group: "Red"}, Certs: true, Device: pki.DeviceATAK})
		if err == nil {
			t.Fatal("a certificate package for a name outside [A-Za-z0-9._ -] was made")
		}
		if _, err := e.svc.ByName(ctx, "Zoë"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the user stayed without its package: %v", err)
		}
	})
	t.Run("the package cannot be stored", func(t *testing.T) {
		// The data package goes to a store that is closed: the certificate
		// issued for it is revoked, its file removed, the user removed.
		closed, err := store.Open(ctx, filepath.Join(t.TempDir(), "closed.db"), store.Options{Logger: testkit.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		closed.Close()
		svc := New(Options{Accounts: e.acc, Files: closed.Files(), Authority: e.auth, Logger: testkit.Logger(t)})
		if _, err := svc.Create(ctx, NewUser{UserInput: store.UserInput{Name: "carol", Password: "pw"}, Certs: true, Device: pki.DeviceATAK}); err == nil {
			t.Fatal("Create succeeded with a closed store for its package")
		}
		if _, err := e.svc.ByName(ctx, "carol"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the user stayed without its package: %v", err)
		}
		cs := e.certs(t, "carol")
		if len(cs) != 1 || !cs[0].Revoked || !e.auth.IsRevoked(cs[0].Serial) {
			t.Errorf("carol's certificates %+v: want the one issued, revoked", cs)
		}
		left, _ := os.ReadDir(e.authCfg.ClientPackagesDir)
		for _, f := range left {
			if strings.Contains(f.Name(), "carol") {
				t.Errorf("package file %s left behind", f.Name())
			}
		}
	})
	t.Run("conflicts", func(t *testing.T) {
		_, err := e.svc.Create(ctx, NewUser{UserInput: store.UserInput{Name: "alice", Password: "pw"}, Certs: true, Device: pki.DeviceATAK})
		if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "a user with this name exists") {
			t.Errorf("a taken name: %v", err)
		}
		if len(e.certs(t, "alice")) != 0 {
			t.Error("a refused user got a certificate")
		}
		if _, err := e.svc.Create(ctx, NewUser{UserInput: store.UserInput{Name: "dave", Password: "pw", Token: "shared-token"}}); err != nil {
			t.Fatal(err)
		}
		_, err = e.svc.Create(ctx, NewUser{UserInput: store.UserInput{Name: "erin", Password: "pw", Token: "shared-token"}})
		if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "token already in use") {
			t.Errorf("a taken token: %v", err)
		}
	})
	if got := e.changed.take(); len(got) != 0 {
		t.Errorf("Changed was called for %q", got)
	}
}

func TestUpdateRename(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice := e.create(t, "alice", "", true)
	bob := e.create(t, "bob", "", false)
	name := func(s string) *string { return &s }

	_, err := e.svc.Update(ctx, alice.UID, store.UserUpdate{Name: name("alicia")})
	if !errors.Is(err, ErrCertificates) || fault.KindOf(err) != fault.Conflict {
		t.Fatalf("renaming a user with live certificates: %v, want ErrCertificates (a conflict)", err)
	}
	if u, err := e.svc.Get(ctx, alice.UID); err != nil || u.Name != "alice" {
		t.Errorf("after the refused rename: %+v, %v", u.User, err)
	}
	// What is not a rename is allowed.
	if u, err := e.svc.Update(ctx, alice.UID, store.UserUpdate{Name: name("alice"), Password: name("new-pw")}); err != nil || u.Name != "alice" {
		t.Errorf("the same name and a new password: %+v, %v", u.User, err)
	}
	if _, err := e.acc.VerifyPassword(ctx, "alice", "new-pw"); err != nil {
		t.Errorf("the new password does not work: %v", err)
	}
	// A user without certificates is renamed.
	if u, err := e.svc.Update(ctx, bob.UID, store.UserUpdate{Name: name("robert")}); err != nil || u.Name != "robert" {
		t.Errorf("renaming bob: %+v, %v", u.User, err)
	}
	// Once its certificates are revoked, so is alice.
	if _, err := e.auth.RevokeName("alice", "superseded"); err != nil {
		t.Fatal(err)
	}
	if u, err := e.svc.Update(ctx, alice.UID, store.UserUpdate{Name: name("alicia")}); err != nil || u.Name != "alicia" {
		t.Errorf("renaming alice with revoked certificates: %+v, %v", u.User, err)
	}
	if _, err := e.svc.Update(ctx, "no-such-uid", store.UserUpdate{Name: name("x")}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown user: %v, want ErrNotFound", err)
	}
	if _, err := e.svc.Update(ctx, bob.UID, store.UserUpdate{Name: name("alicia")}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a taken name: %v, want ErrConflict", err)
	}
}

func TestRotateTokens(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, bob := e.create(t, "alice", "", false), e.create(t, "bob", "", false)
	if err := e.svc.RotateTokens(ctx, []store.TokenChange{{UID: alice.UID, Token: "alice-2"}, {UID: bob.UID, Token: "bob-2"}}); err != nil {
		t.Fatal(err)
	}
	for tok, want := range map[string]string{"alice-2": "alice", "bob-2": "bob"} {
		if u, err := e.acc.UserByToken(ctx, tok); err != nil || u.Name != want {
			t.Errorf("token %s: %+v, %v; want %s", tok, u, err, want)
		}
	}
	if _, err := e.acc.UserByToken(ctx, alice.Token); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the old token still works: %v", err)
	}
	// All or none.
	err := e.svc.RotateTokens(ctx, []store.TokenChange{{UID: alice.UID, Token: "alice-3"}, {UID: "no-such-uid", Token: "x"}})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("rotating with an unknown uid: %v", err)
	}
	if u, err := e.acc.UserByToken(ctx, "alice-2"); err != nil || u.UID != alice.UID {
		t.Errorf("a failed rotation changed alice's token: %v", err)
	}
}

func TestSetRole(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice := e.create(t, "alice", "", false)
	u, err := e.svc.SetRole(ctx, alice.UID, store.UserRoleAdmin)
	if err != nil || u.Role != store.UserRoleAdmin {
		t.Fatalf("SetRole admin: %+v, %v", u.User, err)
	}
	if got := e.changed.take(); !slices.Equal(got, []string{"alice"}) {
		t.Errorf("Changed called with %q, want alice", got)
	}
	for _, role := range []string{"", "root", "Admin", "operator"} {
		if _, err := e.svc.SetRole(ctx, alice.UID, role); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("SetRole %q: %v, want ErrInvalid", role, err)
		}
	}
	if _, err := e.svc.SetRole(ctx, "no-such-uid", store.UserRoleUser); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetRole of an unknown user: %v, want ErrNotFound", err)
	}
	if got := e.changed.take(); len(got) != 0 {
		t.Errorf("refused role changes called Changed with %q", got)
	}
	if u, _ := e.svc.Get(ctx, alice.UID); u.Role != store.UserRoleAdmin {
		t.Errorf("role %q after refusals, want admin", u.Role)
	}
	if u, err := e.svc.SetRole(ctx, alice.UID, store.UserRoleUser); err != nil || u.Role != store.UserRoleUser {
		t.Errorf("SetRole user: %+v, %v", u.User, err)
	}
	if got := e.changed.take(); !slices.Equal(got, []string{"alice"}) {
		t.Errorf("Changed called with %q, want alice", got)
	}
}

func TestGroupsOfUsers(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, g := range []string{"Red", "Blue"} {
		if _, err := e.svc.CreateGroup(ctx, g, ""); err != nil {
			t.Fatal(err)
		}
	}
	alice := e.create(t, "alice", "", false)
	bob := e.create(t, "bob", "Red", false)
	carol := e.create(t, "carol", "Blue", false)
	red := store.Membership{Group: "Red", In: true, Out: true, ActiveIn: true, ActiveOut: true}

	u, err := e.svc.SetGroups(ctx, alice.UID, []store.Membership{{Group: "Red", In: true, Out: true}})
	if err != nil || !slices.Equal(u.Groups, []store.Membership{red}) {
		t.Fatalf("SetGroups: %+v, %v", u.Groups, err)
	}
	if got := e.changed.take(); !slices.Equal(got, []string{"alice"}) {
		t.Errorf("Changed called with %q, want alice", got)
	}
	// An unknown group: an error, and nothing changed.
	_, err = e.svc.SetGroups(ctx, alice.UID, []store.Membership{{Group: "Blue", In: true}, {Group: "Gone", In: true}})
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "Gone") {
		t.Errorf("SetGroups with an unknown group: %v, want ErrNotFound naming it", err)
	}
	if _, err := e.svc.SetGroups(ctx, alice.UID, []store.Membership{{Group: "Blue"}}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("SetGroups without a direction: %v, want ErrInvalid", err)
	}
	if u, _ := e.svc.Get(ctx, alice.UID); !slices.Equal(u.Groups, []store.Membership{red}) {
		t.Errorf("after refusals alice's groups are %+v", u.Groups)
	}
	if got := e.changed.take(); len(got) != 0 {
		t.Errorf("refused changes called Changed with %q", got)
	}

	// Switches.
	u, err = e.svc.SetActive(ctx, alice.UID, []store.Membership{{Group: "Red", Out: true, ActiveOut: false}})
	if err != nil || len(u.Groups) != 1 || u.Groups[0].ActiveOut || !u.Groups[0].ActiveIn {
		t.Errorf("SetActive: %+v, %v; want Red's OUT off", u.Groups, err)
	}
	if got := e.changed.take(); !slices.Equal(got, []string{"alice"}) {
		t.Errorf("Changed called with %q, want alice", got)
	}

	// List and ByName carry the groups.
	list, err := e.svc.List(ctx)
	if err != nil || len(list) != 3 {
		t.Fatalf("List: %+v, %v", list, err)
	}
	for _, u := range list {
		want := map[string]string{"alice": "Red", "bob": "Red", "carol": "Blue"}[u.Name]
		if got := u.GroupNames(); !slices.Equal(got, []string{want}) {
			t.Errorf("%s: groups %q, want %s", u.Name, got, want)
		}
	}
	if u, err := e.svc.ByName(ctx, "carol"); err != nil || u.UID != carol.UID || !slices.Equal(u.GroupNames(), []string{"Blue"}) {
		t.Errorf("ByName(carol): %+v, %v", u, err)
	}

	// Deleting a group tells its members, and only them.
	if err := e.svc.DeleteGroup(ctx, "Red"); err != nil {
		t.Fatal(err)
	}
	got := e.changed.take()
	slices.Sort(got)
	if !slices.Equal(got, []string{"alice", "bob"}) {
		t.Errorf("deleting Red called Changed with %q, want alice and bob", got)
	}
	if u, _ := e.svc.Get(ctx, bob.UID); len(u.Groups) != 0 {
		t.Errorf("bob's groups after deleting Red: %+v", u.Groups)
	}
	if err := e.svc.DeleteGroup(ctx, "Red"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting Red again: %v", err)
	}
	if err := e.svc.DeleteGroup(ctx, store.AnonGroupName); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("deleting __ANON__: %v", err)
	}
	if got := e.changed.take(); len(got) != 0 {
		t.Errorf("refused deletions called Changed with %q", got)
	}
	if gs, err := e.svc.Groups(ctx); err != nil || len(gs) != 2 {
		t.Errorf("groups left: %+v, %v; want Blue and __ANON__", gs, err)
	}
}

// doomed is a user with everything deletion must take away: two
// certificates (its package's and another device's), a certificate package,
// a group and bound uids.
type doomed struct {
	User
	serials []*big.Int
}

func (e *env) doomed(t *testing.T, name string) doomed {
	t.Helper()
	u := e.create(t, name, "Red", true)
	if _, err := e.auth.IssueClient(name); err != nil {
		t.Fatal(err)
	}
	cs := e.certs(t, name)
	if len(cs) != 2 {
		t.Fatalf("%s holds %d certificates, want 2", name, len(cs))
	}
	d := doomed{User: u}
	for _, c := range cs {
		d.serials = append(d.serials, c.Serial)
	}
	now := time.Now()
	if err := e.acc.BindUIDs(context.Background(), []store.Binding{
		{UID: "ANDROID-" + name + "-1", Identity: name, At: now}, {UID: "ANDROID-" + name + "-2", Identity: name, At: now},
	}); err != nil {
		t.Fatal(err)
	}
	return d
}

// assertIntact checks that d is a user still, with its package, groups and
// uids.
func (e *env) assertIntact(t *testing.T, d doomed) {
	t.Helper()
	ctx := context.Background()
	u, err := e.svc.Get(ctx, d.UID)
	if err != nil {
		t.Fatalf("the user is gone: %v", err)
	}
	if !slices.Equal(u.GroupNames(), []string{"Red"}) {
		t.Errorf("groups %q, want Red", u.GroupNames())
	}
	if _, err := e.svc.CertificatePackage(ctx, u.User); err != nil {
		t.Errorf("the certificate package is gone: %v", err)
	}
	if !exists(e.packageFile(d.CertificatePackageName)) {
		t.Error("the package file is gone")
	}
	if bs, err := e.acc.UIDsOf(ctx, d.Name); err != nil || len(bs) != 2 {
		t.Errorf("bound uids %+v, %v; want 2", bs, err)
	}
}

// assertGone checks that nothing of d is left.
func (e *env) assertGone(t *testing.T, d doomed) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.svc.Get(ctx, d.UID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the user is still there: %v", err)
	}
	if _, err := e.st.Files().DataPackageByHash(ctx, d.CertificatePackageHash); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the certificate package is still there: %v", err)
	}
	if exists(e.packageFile(d.CertificatePackageName)) {
		t.Error("the package file is still there")
	}
	if bs, err := e.acc.UIDsOf(ctx, d.Name); err != nil || len(bs) != 0 {
		t.Errorf("bound uids left: %+v, %v", bs, err)
	}
	if ms, err := e.acc.MembershipsOf(ctx, d.UID); err != nil || len(ms) != 0 {
		t.Errorf("memberships left: %+v, %v", ms, err)
	}
}

// assertRevoked checks that every certificate of d is revoked: in the
// authority's index, its revocation set, the signed CRL, and for an
// authority opened afresh on the same files.
func (e *env) assertRevoked(t *testing.T, d doomed, want bool) {
	t.Helper()
	for _, c := range e.certs(t, d.Name) {
		if c.Revoked != want {
			t.Errorf("certificate %v of %s: revoked %v, want %v", c.Serial, d.Name, c.Revoked, want)
		}
	}
	crl := e.crlSerials(t)
	fresh, err := pki.Open(e.authCfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range d.serials {
		if e.auth.IsRevoked(s) != want || crl[s.String()] != want || fresh.IsRevoked(s) != want {
			t.Errorf("serial %v: IsRevoked %v, in the CRL %v, for a fresh authority %v; want %v",
				s, e.auth.IsRevoked(s), crl[s.String()], fresh.IsRevoked(s), want)
		}
	}
}

// TestDeleteFailureBetweenSteps injects a failure after the certificates are
// revoked and before the user is deleted: the certificates stay revoked,
// the user stays for an administrator to retry, and the retry completes.
func TestDeleteFailureBetweenSteps(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice := e.doomed(t, "alice")
	bob := e.create(t, "bob", "Red", false)
	injected := errors.New("injected failure between revoking and deleting")
	hookRan := 0
	e.svc.beforeDelete = func() error {
		hookRan++
		// The certificates are revoked by the time the user row goes.
		for _, s := range alice.serials {
			if !e.auth.IsRevoked(s) {
				t.Errorf("serial %v not revoked when the user is about to be deleted", s)
			}
		}
		return injected
	}
	revoked, err := e.svc.Delete(ctx, []string{alice.UID})
	if !errors.Is(err, injected) {
		t.Fatalf("Delete with a failure between the steps: %v", err)
	}
	if hookRan != 1 {
		t.Fatalf("the hook ran %d times", hookRan)
	}
	if revoked[alice.UID] != 2 {
		t.Errorf("revoked %v, want 2 for alice", revoked)
	}
	e.assertRevoked(t, alice, true)
	e.assertIntact(t, alice)
	if got := e.changed.take(); len(got) != 0 {
		t.Errorf("a failed deletion called Changed with %q", got)
	}
	// The retry (an administrator's) completes.
	e.svc.beforeDelete = nil
	revoked, err = e.svc.Delete(ctx, []string{alice.UID})
	if err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if n, ok := revoked[alice.UID]; !ok || n != 0 {
		t.Errorf("the retry revoked %v, want 0 more for alice (already revoked)", revoked)
	}
	e.assertGone(t, alice)
	e.assertRevoked(t, alice, true)
	if got := e.changed.take(); !slices.Equal(got, []string{"alice"}) {
		t.Errorf("Changed called with %q, want alice", got)
	}
	// Others are untouched.
	if u, err := e.svc.Get(ctx, bob.UID); err != nil || !slices.Equal(u.GroupNames(), []string{"Red"}) {
		t.Errorf("bob: %+v, %v", u, err)
	}
	// Another deletion of the same user: not found, nothing revoked.
	if _, err := e.svc.Delete(ctx, []string{alice.UID}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting alice again: %v, want ErrNotFound", err)
	}
}

// TestDeleteRevocationFails makes the revocation itself fail (the CRL file
// is unreadable): the user is not deleted, and nothing after revocation runs.
func TestDeleteRevocationFails(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice := e.doomed(t, "alice")
	bob := e.doomed(t, "bob")
	hookRan := false
	e.svc.beforeDelete = func() error { hookRan = true; return nil }
	if err := os.WriteFile(e.authCfg.CRLFile, []byte("not a revocation list"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.Delete(ctx, []string{alice.UID, bob.UID})
	if err == nil || !strings.Contains(err.Error(), "revoking the certificates of") {
		t.Fatalf("Delete with a broken CRL: %v, want a revocation error", err)
	}
	if hookRan {
		t.Error("the steps after revocation ran")
	}
	for _, d := range []doomed{alice, bob} {
		e.assertIntact(t, d)
		for _, s := range d.serials {
			if e.auth.IsRevoked(s) {
				t.Errorf("%s: serial %v revoked although the revocation failed", d.Name, s)
			}
		}
	}
	if got := e.changed.take(); len(got) != 0 {
		t.Errorf("a failed deletion called Changed with %q", got)
	}
	// With the list readable again (an administrator removed the broken
	// file), the retry deletes both.
	if err := os.Remove(e.authCfg.CRLFile); err != nil {
		t.Fatal(err)
	}
	revoked, err := e.svc.Delete(ctx, []string{alice.UID, bob.UID, alice.UID})
	if err != nil {
		t.Fatal(err)
	}
	if revoked[alice.UID] != 2 || revoked[bob.UID] != 2 {
		t.Errorf("revoked %v, want 2 each", revoked)
	}
	for _, d := range []doomed{alice, bob} {
		e.assertGone(t, d)
		e.assertRevoked(t, d, true)
	}
	got := e.changed.take()
	slices.Sort(got)
	if !slices.Equal(got, []string{"alice", "bob"}) {
		t.Errorf("Changed called with %q, want alice and bob once each", got)
	}
}

func TestDeleteUnknownUser(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice := e.doomed(t, "alice")
	revoked, err := e.svc.Delete(ctx, []string{alice.UID, "no-such-uid"})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Delete naming an unknown uid: %v, want ErrNotFound", err)
	}
	if len(revoked) != 0 {
		t.Errorf("revoked %v before finding every user", revoked)
	}
	// Nothing changed: alice is whole, her certificates live.
	e.assertIntact(t, alice)
	e.assertRevoked(t, alice, false)
	if got := e.changed.take(); len(got) != 0 {
		t.Errorf("Changed called with %q", got)
	}
	if revoked, err := e.svc.Delete(ctx, nil); err != nil || len(revoked) != 0 {
		t.Errorf("deleting nobody: %v, %v", revoked, err)
	}
}

func TestDeleteWithoutAuthority(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	bob := e.create(t, "bob", "Red", false)
	svc := New(Options{Accounts: e.acc, Files: e.st.Files(), Changed: e.changed.record, Logger: testkit.Logger(t)})
	revoked, err := svc.Delete(ctx, []string{bob.UID})
	if err != nil || len(revoked) != 0 {
		t.Fatalf("Delete without an authority: %v, %v", revoked, err)
	}
	if _, err := svc.Get(ctx, bob.UID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bob is still there: %v", err)
	}
	if got := e.changed.take(); !slices.Equal(got, []string{"bob"}) {
		t.Errorf("Changed called with %q, want bob", got)
	}
}
