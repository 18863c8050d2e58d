package access

import (
	"context"
	"crypto/tls"
	"errors"
	"math/big"
	"path/filepath"
	"testing"
	"time"

	"outpost/appliance/store"
	"outpost/internal/testkit"
)

func TestDirectory(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "outpost.db"), store.Options{Logger: testkit.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	acc := st.Accounts()
	alice, err := acc.CreateUser(ctx, store.UserInput{Name: "alice", Password: "pw", Group: "Red"})
	if err != nil {
		t.Fatal(err)
	}
	boss, err := acc.CreateUser(ctx, store.UserInput{Name: "boss", Password: "pw", Role: store.UserRoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := acc.CreateAPIUser(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	groups, err := acc.Groups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	red := MaskOf(groups, []string{"Red"})
	if red == 0 || red == store.AnonGroup {
		t.Fatalf("Red's mask %#x", red)
	}
	serial := big.NewInt(77)
	identify := map[string]string{} // by server name of the connection
	d := &Directory{Accounts: acc, Identify: func(cs tls.ConnectionState) (string, *big.Int, bool) {
		name, ok := identify[cs.ServerName]
		return name, serial, ok
	}}
	now := time.Now()

	t.Run("tokens", func(t *testing.T) {
		p, err := d.Token(ctx, ops.Token, now)
		if err != nil || p.Kind != APIUser || p.Name != "ops" || p.In != store.AllGroups || p.Out != store.AllGroups || !p.Admin() {
			t.Errorf("API user's token: %+v, %v", p, err)
		}
		p, err = d.Token(ctx, alice.Token, now)
		if err != nil || p.Kind != SystemUser || p.Name != "alice" || p.UID != alice.UID || p.Role != store.UserRoleUser ||
			p.In != red || p.Out != red || p.Login || p.Admin() || p.Serial != nil {
			t.Errorf("alice's token: %+v, %v", p, err)
		}
		p, err = d.Token(ctx, boss.Token, now)
		if err != nil || p.Name != "boss" || !p.Admin() || p.In != store.AnonGroup || p.Out != store.AnonGroup {
			t.Errorf("boss's token (an administrator without groups is in __ANON__ on the client side): %+v, %v", p, err)
		}
		login, err := acc.CreateLoginToken(ctx, alice.UID, now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if p, err := d.Token(ctx, login, now); err != nil || p.Name != "alice" || !p.Login {
			t.Errorf("alice's login token: %+v, %v", p, err)
		}
		for _, bad := range []string{"", "no-such-token", login + "x"} {
			if p, err := d.Token(ctx, bad, now); !errors.Is(err, ErrUnauthorized) {
				t.Errorf("token %q: %+v, %v; want ErrUnauthorized", bad, p, err)
			}
		}
		if _, err := d.Token(ctx, login, now.Add(2*time.Hour)); !errors.Is(err, ErrUnauthorized) {
			t.Errorf("an expired login token: %v, want ErrUnauthorized", err)
		}
	})

	t.Run("certificates", func(t *testing.T) {
		identify["alice.example"] = "alice"
		identify["sensor.example"] = "sensor-7"
		identify["blank.example"] = ""
		p, err := d.Certificate(ctx, tls.ConnectionState{ServerName: "alice.example"})
		if err != nil || p.Kind != SystemUser || p.UID != alice.UID || p.Serial.Cmp(serial) != 0 || p.Identity() != "alice" || p.In != red {
			t.Errorf("alice's certificate: %+v, %v", p, err)
		}
		p, err = d.Certificate(ctx, tls.ConnectionState{ServerName: "sensor.example"})
		if err != nil || p.Kind != Certificate || p.Name != "sensor-7" || p.UID != "" || p.Admin() ||
			p.In != store.AnonGroup || p.Out != store.AnonGroup || p.Identity() != "sensor-7" || p.Owner() != "sensor-7" {
			t.Errorf("a certificate of no user: %+v, %v", p, err)
		}
		for _, host := range []string{"blank.example", "none.example"} {
			if p, err := d.Certificate(ctx, tls.ConnectionState{ServerName: host}); !errors.Is(err, ErrUnauthorized) {
				t.Errorf("%s: %+v, %v; want ErrUnauthorized", host, p, err)
			}
		}
		if _, err := (&Directory{Accounts: acc}).Certificate(ctx, tls.ConnectionState{}); !errors.Is(err, ErrUnauthorized) {
			t.Errorf("a directory without Identify: %v, want ErrUnauthorized", err)
		}
	})

	t.Run("every call reads the store", func(t *testing.T) {
		if _, err := acc.SetActive(ctx, alice.UID, []store.Membership{{Group: "Red", In: true, ActiveIn: false}}); err != nil {
			t.Fatal(err)
		}
		p, err := d.ByName(ctx, "alice", serial)
		if err != nil || p.In != 0 || p.Out != red {
			t.Errorf("after switching Red's IN off: in %#x, out %#x, %v; want 0, %#x", p.In, p.Out, err, red)
		}
		if err := acc.SetRole(ctx, alice.UID, store.UserRoleAdmin); err != nil {
			t.Fatal(err)
		}
		if p, err := d.Token(ctx, alice.Token, now); err != nil || !p.Admin() {
			t.Errorf("after making alice an administrator: %+v, %v", p, err)
		}
		if err := acc.SetMemberships(ctx, alice.UID, nil); err != nil {
			t.Fatal(err)
		}
		if p, err := d.ByName(ctx, "alice", nil); err != nil || p.In != store.AnonGroup || p.Out != store.AnonGroup {
			t.Errorf("after removing every membership: %+v, %v; want __ANON__ both ways", p, err)
		}
		if err := acc.DeleteUser(ctx, alice.UID); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Token(ctx, alice.Token, now); !errors.Is(err, ErrUnauthorized) {
			t.Errorf("a deleted user's token: %v, want ErrUnauthorized", err)
		}
		// Its certificate (revoked by users.Delete in practice) names no
		// user any more: a certificate principal, no longer an administrator.
		if p, err := d.ByName(ctx, "alice", serial); err != nil || p.Kind != Certificate || p.Admin() {
			t.Errorf("a deleted user's name: %+v, %v", p, err)
		}
	})
}
