package users

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"outpost/appliance/pki"
	"outpost/appliance/store"
)

func TestInvite(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	e.svc.opts.Now = func() time.Time { return now }
	if err := e.auth.SetPorts(pki.Ports{SSLCoT: 8089, HTTPS: 8443, Enroll: 8446}); err != nil {
		t.Fatal(err)
	}
	u, err := e.svc.Create(ctx, NewUser{UserInput: store.UserInput{Name: "kim lee", Password: "pw"}})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := e.svc.Invite(ctx, u.UID, InviteInput{CreatedBy: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if inv.Device != "atak" || inv.Uses != 1 || !inv.Expires.Equal(now.Add(24*time.Hour)) || inv.Token == "" {
		t.Errorf("defaults: %+v", inv.EnrollInvitation)
	}
	want := "tak://com.atakmap.app/enroll?host=tak.example.org&username=kim+lee&token=" + inv.Token
	if inv.Codes.ATAK != want {
		t.Errorf("ATAK code %q, want %q", inv.Codes.ATAK, want)
	}
	if inv.Codes.ITAK != "outpost,tak.example.org,8089,SSL" || strings.Contains(inv.Codes.ITAK, inv.Token) {
		t.Errorf("iTAK code %q", inv.Codes.ITAK)
	}
	if inv.Codes.WinTAK != "https://tak.example.org:8446/Marti/api/tls/enrollment-package?device=wintak" || strings.Contains(inv.Codes.WinTAK, inv.Token) {
		t.Errorf("WinTAK link %q", inv.Codes.WinTAK)
	}
	if _, err := url.Parse(inv.Codes.ATAK); err != nil {
		t.Error(err)
	}
	if _, err := e.acc.CheckEnrollInvitation(ctx, "kim lee", inv.Token, now); err != nil {
		t.Errorf("the token does not check: %v", err)
	}
	list, err := e.svc.Invitations(ctx, u.UID)
	if err != nil || len(list) != 1 || list[0].Token != "" {
		t.Errorf("Invitations = %+v, %v", list, err)
	}
	if _, err := e.svc.Invitations(ctx, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Invitations of an unknown user: %v", err)
	}
	r, err := e.svc.RevokeInvitation(ctx, inv.ID, "admin")
	if err != nil || r.State(now) != "revoked" {
		t.Errorf("revoke: %+v %v", r, err)
	}

	w, err := e.svc.Invite(ctx, u.UID, InviteInput{Expires: time.Hour, Uses: 3, Device: "WinTAK"})
	if err != nil || w.Device != "wintak" || w.Uses != 3 || !w.Expires.Equal(now.Add(time.Hour)) || !strings.HasSuffix(w.Codes.WinTAK, "device=wintak") {
		t.Errorf("wintak invitation: %+v %v", w, err)
	}

	for name, in := range map[string]InviteInput{
		"device":   {Device: "palm"},
		"uses":     {Uses: MaxInviteUses + 1},
		"negative": {Uses: -1},
		"expires":  {Expires: MaxInviteExpiry + time.Second},
		"short":    {Expires: time.Millisecond},
	} {
		if _, err := e.svc.Invite(ctx, u.UID, in); !errors.Is(err, ErrInvite) {
			t.Errorf("%s: %v, want ErrInvite", name, err)
		}
	}
	if _, err := e.svc.Invite(ctx, "nobody", InviteInput{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown user: %v", err)
	}
	// Deleting the user takes its invitations.
	if _, err := e.svc.Delete(ctx, []string{u.UID}); err != nil {
		t.Fatal(err)
	}
	if l, _ := e.svc.Invitations(ctx, ""); len(l) != 0 {
		t.Errorf("after delete: %+v", l)
	}
}

func TestParseExpiry(t *testing.T) {
	for in, want := range map[string]time.Duration{"": DefaultInviteExpiry, "90m": 90 * time.Minute, "7d": 7 * 24 * time.Hour, " 24h ": 24 * time.Hour, "30d": MaxInviteExpiry} {
		if got, err := ParseExpiry(in); err != nil || got != want {
			t.Errorf("ParseExpiry(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"31d", "0s", "-1h", "soon", "d", "1e9d", "721h"} {
		if _, err := ParseExpiry(in); !errors.Is(err, ErrInvite) {
			t.Errorf("ParseExpiry(%q): %v, want ErrInvite", in, err)
		}
	}
}
