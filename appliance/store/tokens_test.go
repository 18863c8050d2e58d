package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestAPIUsersAndAuthenticate(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	now := time.Now()

	admin, created, err := s.Accounts().EnsureAPIUser(ctx, "admin")
	if err != nil || !created || len(admin.Token) != 43 {
		t.Fatalf("EnsureAPIUser: %+v %v %v", admin, created, err)
	}
	if _, created, err := s.Accounts().EnsureAPIUser(ctx, "other"); err != nil || created {
		t.Fatalf("second EnsureAPIUser created=%v err=%v; want nothing (an API user exists)", created, err)
	}
	ops, err := s.Accounts().CreateAPIUser(ctx, "ops-1")
	if err != nil || ops.Token == "" || ops.Token == admin.Token {
		t.Fatalf("CreateAPIUser: %+v %v", ops, err)
	}
	if _, err := s.Accounts().CreateAPIUser(ctx, "ops-1"); !errors.Is(err, ErrConflict) {
		t.Fatalf("duplicate API user: %v", err)
	}
	for _, bad := range []string{"", "has space", strings.Repeat("x", 65), "ünï"} {
		if _, err := s.Accounts().CreateAPIUser(ctx, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("API user name %q: %v", bad, err)
		}
	}
	list, err := s.Accounts().APIUsers(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "admin" || list[1].Name != "ops-1" || list[0].Token != "" {
		t.Fatalf("APIUsers: %+v %v", list, err)
	}

	u, err := s.Accounts().CreateUser(ctx, UserInput{Name: "kim", Password: "pw", Token: "kims-own-token-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	login, err := s.Accounts().CreateLoginToken(ctx, u.UID, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	expired, err := s.Accounts().CreateLoginToken(ctx, u.UID, now.Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Accounts().CreateLoginToken(ctx, "no-such-uid", now.Add(time.Hour)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("login token for an unknown user: %v", err)
	}

	cases := []struct {
		token string
		want  Principal
		ok    bool
	}{
		{admin.Token, Principal{Kind: APIUser, Name: "admin"}, true},
		{ops.Token, Principal{Kind: APIUser, Name: "ops-1"}, true},
		{u.Token, Principal{Kind: SystemUser, Name: "kim", UID: u.UID}, true},
		{login, Principal{Kind: SystemUser, Name: "kim", UID: u.UID, Login: true}, true},
		{expired, Principal{}, false},
		{"", Principal{}, false},
		{"nope", Principal{}, false},
		{strings.Repeat("a", 300), Principal{}, false},
	}
	for _, tc := range cases {
		p, err := s.Accounts().Authenticate(ctx, tc.token, now)
		if tc.ok && (err != nil || p != tc.want) {
			t.Errorf("Authenticate(%.8q) = %+v, %v; want %+v", tc.token, p, err, tc.want)
		}
		if !tc.ok && !errors.Is(err, ErrNotFound) {
			t.Errorf("Authenticate(%.8q) = %+v, %v; want ErrNotFound", tc.token, p, err)
		}
	}
	// API users come first (api.md §5.2) when a system user has the same token.
	if _, err := s.Accounts().CreateUser(ctx, UserInput{Name: "twin", Password: "pw", Token: ops.Token}); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.Accounts().Authenticate(ctx, ops.Token, now); p.Kind != APIUser {
		t.Fatalf("shared token resolved to %+v, want the API user", p)
	}

	if n, err := s.Accounts().PruneLoginTokens(ctx, now); err != nil || n != 1 {
		t.Fatalf("PruneLoginTokens = %d, %v; want the expired one", n, err)
	}
	// A new password ends login sessions; deleting the user ends them too.
	pw := "new password"
	if _, err := s.Accounts().UpdateUser(ctx, u.UID, UserUpdate{Password: &pw}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Accounts().Authenticate(ctx, login, now); !errors.Is(err, ErrNotFound) {
		t.Fatalf("login token after a password change: %v", err)
	}
	if err := s.Accounts().DeleteAPIUser(ctx, "ops-1"); err != nil {
		t.Fatal(err)
	}
	if p, err := s.Accounts().Authenticate(ctx, ops.Token, now); err != nil || p.Name != "twin" {
		t.Fatalf("after revoking the API user the token is the system user's: %+v %v", p, err)
	}
	if err := s.Accounts().DeleteAPIUser(ctx, "ops-1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestUpdateUsers(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	a, _ := s.Accounts().CreateUser(ctx, UserInput{Name: "a", Password: "pw"})
	b, _ := s.Accounts().CreateUser(ctx, UserInput{Name: "b", Password: "pw"})

	name, token := "a2", "fresh-token-for-a-0123456789"
	got, err := s.Accounts().UpdateUser(ctx, a.UID, UserUpdate{Name: &name, Token: &token})
	if err != nil || got.Name != "a2" {
		t.Fatalf("%+v %v", got, err)
	}
	if p, err := s.Accounts().Authenticate(ctx, token, time.Now()); err != nil || p.UID != a.UID {
		t.Fatalf("new token: %+v %v", p, err)
	}
	taken := "b"
	if _, err := s.Accounts().UpdateUser(ctx, a.UID, UserUpdate{Name: &taken}); !errors.Is(err, ErrConflict) {
		t.Fatalf("rename onto an existing name: %v", err)
	}
	if _, err := s.Accounts().UpdateUser(ctx, "nobody", UserUpdate{Name: &name}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown uid: %v", err)
	}
	if _, err := s.Accounts().VerifyPassword(ctx, "a2", "pw"); err != nil {
		t.Fatalf("password changed by a rename: %v", err)
	}

	// Batch token rotation is all or nothing.
	err = s.Accounts().SetUserTokens(ctx, []TokenChange{{a.UID, "rotated-a-0123456789abcdef"}, {"nobody", "rotated-x-0123456789abcdef"}})
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("batch with an unknown uid: %v", err)
	}
	if p, err := s.Accounts().Authenticate(ctx, token, time.Now()); err != nil || p.UID != a.UID {
		t.Fatalf("a failed batch changed a token: %+v %v", p, err)
	}
	if err := s.Accounts().SetUserTokens(ctx, []TokenChange{{a.UID, "rotated-a-0123456789abcdef"}, {b.UID, "rotated-b-0123456789abcdef"}}); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.Accounts().Authenticate(ctx, "rotated-b-0123456789abcdef", time.Now()); p.UID != b.UID {
		t.Fatalf("rotated token of b: %+v", p)
	}
	if err := s.Accounts().SetUserCertificatePackage(ctx, b.UID, "pkg.zip", "ABCDEF"); err != nil {
		t.Fatal(err)
	}
	if u, _ := s.Accounts().UserByUID(ctx, b.UID); u.CertificatePackageName != "pkg.zip" || u.CertificatePackageHash != "abcdef" {
		t.Fatalf("certificate package: %+v", u)
	}
	if err := s.Accounts().DeleteUsers(ctx, []string{a.UID, "nobody"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("batch delete with an unknown uid: %v", err)
	}
	if users, _ := s.Accounts().Users(ctx); len(users) != 2 {
		t.Fatalf("a failed batch delete removed users: %d left", len(users))
	}
	if err := s.Accounts().DeleteUsers(ctx, []string{a.UID, b.UID}); err != nil {
		t.Fatal(err)
	}
	if users, _ := s.Accounts().Users(ctx); len(users) != 0 {
		t.Fatalf("%d users left", len(users))
	}
}
