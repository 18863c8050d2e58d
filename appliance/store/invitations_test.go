package store

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestInvitationLifecycle(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	acc := s.Accounts()
	kim, err := acc.CreateUser(ctx, UserInput{Name: "kim", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	lee, err := acc.CreateUser(ctx, UserInput{Name: "lee", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	inv, err := acc.CreateEnrollInvitation(ctx, EnrollInvitationInput{UserUID: kim.UID, Device: "atak", Expires: now.Add(time.Hour), Uses: 2, CreatedBy: "admin"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Token) < 43 || strings.ContainsAny(inv.Token, "+/=") {
		t.Errorf("token %q: want 43 URL-safe characters (256 bits)", inv.Token)
	}
	if inv.User != "kim" || inv.UsesLeft != 2 || inv.Device != "atak" || inv.CreatedBy != "admin" {
		t.Errorf("created %+v", inv)
	}
	// Only the hash is stored.
	var stored string
	if err := s.r.QueryRow(`SELECT token_hash FROM enroll_invitations WHERE id = ?`, inv.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored == inv.Token || stored != tokenHash(inv.Token) {
		t.Errorf("stored %q: want the SHA-256 hex of the token", stored)
	}
	list, err := acc.EnrollInvitations(ctx, "")
	if err != nil || len(list) != 1 || list[0].Token != "" || list[0].ID != inv.ID {
		t.Fatalf("EnrollInvitations = %+v, %v: want one, without its token", list, err)
	}
	if l, _ := acc.EnrollInvitations(ctx, lee.UID); len(l) != 0 {
		t.Errorf("lee's invitations = %+v, want none", l)
	}

	// Checking does not spend; wrong user, wrong token, late are refused.
	for i := 0; i < 3; i++ {
		if _, err := acc.CheckEnrollInvitation(ctx, "kim", inv.Token, now); err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
	}
	for name, c := range map[string]struct {
		user, token string
		at          time.Time
	}{
		"wrong user":  {"lee", inv.Token, now},
		"wrong token": {"kim", inv.Token[:42] + "A", now},
		"empty token": {"kim", "", now},
		"huge token":  {"kim", strings.Repeat("a", 10000), now},
		"expired":     {"kim", inv.Token, now.Add(time.Hour)},
	} {
		if _, err := acc.CheckEnrollInvitation(ctx, c.user, c.token, c.at); !errors.Is(err, ErrBadCredentials) {
			t.Errorf("%s: err %v, want ErrBadCredentials", name, err)
		}
	}
	if err := acc.SpendEnrollInvitation(ctx, inv.ID, now.Add(time.Hour)); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("spend after expiry: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := acc.SpendEnrollInvitation(ctx, inv.ID, now); err != nil {
			t.Fatalf("spend %d: %v", i, err)
		}
	}
	if err := acc.SpendEnrollInvitation(ctx, inv.ID, now); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("third spend of a two-use invitation: %v", err)
	}
	if _, err := acc.CheckEnrollInvitation(ctx, "kim", inv.Token, now); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("check of a used-up invitation: %v", err)
	}
	got, _ := acc.EnrollInvitation(ctx, inv.ID)
	if got.State(now) != "used" || got.UsesLeft != 0 {
		t.Errorf("after two spends: %+v", got)
	}

	// Revocation.
	inv2, err := acc.CreateEnrollInvitation(ctx, EnrollInvitationInput{UserUID: kim.UID, Device: "itak", Expires: now.Add(time.Hour), Uses: 1}, now)
	if err != nil {
		t.Fatal(err)
	}
	r, err := acc.RevokeEnrollInvitation(ctx, inv2.ID, now)
	if err != nil || r.State(now) != "revoked" {
		t.Fatalf("revoke: %+v %v", r, err)
	}
	if _, err := acc.CheckEnrollInvitation(ctx, "kim", inv2.Token, now); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("check of a revoked invitation: %v", err)
	}
	if err := acc.SpendEnrollInvitation(ctx, inv2.ID, now); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("spend of a revoked invitation: %v", err)
	}
	if _, err := acc.RevokeEnrollInvitation(ctx, "nope", now); !errors.Is(err, ErrNotFound) {
		t.Errorf("revoke unknown: %v", err)
	}

	// Bad input changes nothing.
	for name, in := range map[string]EnrollInvitationInput{
		"device":   {UserUID: kim.UID, Device: "palm", Expires: now.Add(time.Hour), Uses: 1},
		"uses 0":   {UserUID: kim.UID, Device: "atak", Expires: now.Add(time.Hour), Uses: 0},
		"uses 101": {UserUID: kim.UID, Device: "atak", Expires: now.Add(time.Hour), Uses: 101},
		"past":     {UserUID: kim.UID, Device: "atak", Expires: now, Uses: 1},
	} {
		if _, err := acc.CreateEnrollInvitation(ctx, in, now); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if _, err := acc.CreateEnrollInvitation(ctx, EnrollInvitationInput{UserUID: "nobody", Device: "atak", Expires: now.Add(time.Hour), Uses: 1}, now); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown user: %v", err)
	}

	// Deleting the user deletes its invitations.
	if err := acc.DeleteUser(ctx, kim.UID); err != nil {
		t.Fatal(err)
	}
	if l, _ := acc.EnrollInvitations(ctx, ""); len(l) != 0 {
		t.Errorf("after deleting kim: %+v", l)
	}
}

// TestInvitationDoubleSpend races many spenders for the one use of an
// invitation: exactly one wins.
func TestInvitationDoubleSpend(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	acc := s.Accounts()
	u, err := acc.CreateUser(ctx, UserInput{Name: "kim", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	inv, err := acc.CreateEnrollInvitation(ctx, EnrollInvitationInput{UserUID: u.UID, Device: "atak", Expires: now.Add(time.Hour), Uses: 1}, now)
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		won  int
		errs []error
	)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			err := acc.SpendEnrollInvitation(ctx, inv.ID, now)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				won++
			} else if !errors.Is(err, ErrBadCredentials) {
				errs = append(errs, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if won != 1 || len(errs) != 0 {
		t.Fatalf("%d of %d spends won (want 1); other errors %v", won, n, errs)
	}
}

// TestInvitationCap: a user keeps at most maxInvitationsPerUser; unusable
// ones make room, usable ones never do.
func TestInvitationCap(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	acc := s.Accounts()
	u, _ := acc.CreateUser(ctx, UserInput{Name: "kim", Password: "pw"})
	now := time.Now()
	var first EnrollInvitation
	for i := 0; i < maxInvitationsPerUser; i++ {
		inv, err := acc.CreateEnrollInvitation(ctx, EnrollInvitationInput{UserUID: u.UID, Device: "atak", Expires: now.Add(time.Hour), Uses: 1}, now.Add(time.Duration(i)*time.Millisecond))
		if err != nil {
			t.Fatalf("invitation %d: %v", i, err)
		}
		if i == 0 {
			first = inv
		}
	}
	later := now.Add(time.Second)
	if _, err := acc.CreateEnrollInvitation(ctx, EnrollInvitationInput{UserUID: u.UID, Device: "atak", Expires: later.Add(time.Hour), Uses: 1}, later); !errors.Is(err, ErrConflict) {
		t.Fatalf("invitation past the cap: %v, want ErrConflict", err)
	}
	if _, err := acc.RevokeEnrollInvitation(ctx, first.ID, later); err != nil {
		t.Fatal(err)
	}
	if _, err := acc.CreateEnrollInvitation(ctx, EnrollInvitationInput{UserUID: u.UID, Device: "atak", Expires: later.Add(time.Hour), Uses: 1}, later); err != nil {
		t.Fatalf("after revoking one: %v", err)
	}
	if _, err := acc.EnrollInvitation(ctx, first.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("the revoked invitation should have made room: %v", err)
	}
	if l, _ := acc.EnrollInvitations(ctx, u.UID); len(l) != maxInvitationsPerUser {
		t.Errorf("%d invitations kept, want %d", len(l), maxInvitationsPerUser)
	}
}
