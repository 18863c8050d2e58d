package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestUpdateUsersBatch: a batch change of passwords, tokens and groups is
// all or nothing (an unknown uid or a token in use changes nobody); a new
// password ends the user's login tokens; groups replace the memberships,
// both ways, making the groups that do not exist.
func TestUpdateUsersBatch(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	a, err := s.Accounts().CreateUser(ctx, UserInput{Name: "a", Password: "pw-a", Group: "Red"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Accounts().CreateUser(ctx, UserInput{Name: "b", Password: "pw-b", Token: "token-b-0123456789abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	login, err := s.Accounts().CreateLoginToken(ctx, a.UID, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	p := func(s string) *string { return &s }
	groups := []string{"Blue", "Green"}

	for name, batch := range map[string][]UserChange{
		"unknown uid":    {{UID: a.UID, Password: p("pw-a2")}, {UID: "nobody", Token: p("token-x-0123456789abcdef")}},
		"token in use":   {{UID: a.UID, Password: p("pw-a2"), Groups: &groups}, {UID: a.UID, Token: p("token-b-0123456789abcdef")}},
		"bad group":      {{UID: a.UID, Password: p("pw-a2")}, {UID: b.UID, Groups: &[]string{"bad\x01name"}}},
		"empty password": {{UID: a.UID, Password: p("")}},
	} {
		if err := s.Accounts().UpdateUsers(ctx, batch); err == nil || !(errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) || errors.Is(err, ErrInvalid)) {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := s.Accounts().VerifyPassword(ctx, "a", "pw-a"); err != nil {
			t.Fatalf("%s: a refused batch changed a's password: %v", name, err)
		}
		if ms, _ := s.Accounts().Memberships(ctx, a.UID); len(ms) != 1 || ms[0].Group != "Red" {
			t.Fatalf("%s: a refused batch changed a's groups: %+v", name, ms)
		}
	}

	err = s.Accounts().UpdateUsers(ctx, []UserChange{{UID: a.UID, Password: p("pw-a2"), Groups: &groups}, {UID: b.UID, Token: p("token-b2-0123456789abcdef")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Accounts().VerifyPassword(ctx, "a", "pw-a2"); err != nil {
		t.Fatalf("a's new password: %v", err)
	}
	if _, err := s.Accounts().Authenticate(ctx, login, time.Now()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a's login token after a password change: %v", err)
	}
	if pr, err := s.Accounts().Authenticate(ctx, "token-b2-0123456789abcdef", time.Now()); err != nil || pr.UID != b.UID {
		t.Fatalf("b's new token: %+v %v", pr, err)
	}
	ms, _ := s.Accounts().Memberships(ctx, a.UID)
	if len(ms) != 2 || ms[0].Group != "Blue" || !ms[0].In || !ms[0].Out || ms[1].Group != "Green" {
		t.Fatalf("a's groups: %+v", ms)
	}
}
