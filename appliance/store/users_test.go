package store

import (
	"context"
	"errors"
	"strings"
	"testing"

	"outpost/internal/testkit"
)

func TestUsersLifecycle(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	u, err := s.Accounts().CreateUser(ctx, UserInput{Name: "Bravo 2", Group: "Cyan", Password: "s3cret", DeviceType: "mobile",
		CertificatePackageName: "Bravo2.zip"})
	if err != nil {
		t.Fatal(err)
	}
	if len(u.UID) != 36 || u.Token == "" || len(u.Token) < 40 || u.CreatedAt.IsZero() {
		t.Fatalf("created %+v: want a UUID, a generated token and a time", u)
	}
	given, err := s.Accounts().CreateUser(ctx, UserInput{Name: "Alpha", Password: "pw", Token: "my-own-token"})
	if err != nil {
		t.Fatal(err)
	}
	if given.Token != "my-own-token" {
		t.Errorf("token %q, want the given one", given.Token)
	}

	byName, err := s.Accounts().UserByName(ctx, "Bravo 2")
	if err != nil {
		t.Fatal(err)
	}
	if byName.UID != u.UID || byName.Role != UserRoleUser || byName.DeviceType != "mobile" ||
		byName.CertificatePackageName != "Bravo2.zip" || !byName.CreatedAt.Equal(u.CreatedAt) || byName.Token != "" {
		t.Errorf("by name %+v, want %+v without token", byName, u)
	}
	// The group field made the user a member of Cyan, both ways.
	if ms, err := s.Accounts().Memberships(ctx, u.UID); err != nil || len(ms) != 1 ||
		ms[0] != (Membership{Group: "Cyan", In: true, Out: true, ActiveIn: true, ActiveOut: true}) {
		t.Errorf("memberships %+v, %v", ms, err)
	}
	byToken, err := s.Accounts().UserByToken(ctx, u.Token)
	if err != nil || byToken.UID != u.UID {
		t.Errorf("by token: %+v, %v", byToken, err)
	}
	if got, err := s.Accounts().UserByToken(ctx, "my-own-token"); err != nil || got.UID != given.UID {
		t.Errorf("by given token: %+v, %v", got, err)
	}
	if got, err := s.Accounts().VerifyPassword(ctx, "Bravo 2", "s3cret"); err != nil || got.UID != u.UID {
		t.Errorf("VerifyPassword: %+v, %v", got, err)
	}
	list, err := s.Accounts().Users(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "Alpha" || list[1].Name != "Bravo 2" {
		t.Fatalf("Users = %+v, %v", list, err)
	}

	// Nothing secret is stored in clear.
	var ph, th string
	s.r.QueryRow(`SELECT password_hash, token_hash FROM system_users WHERE uid = ?`, u.UID).Scan(&ph, &th)
	if strings.Contains(ph, "s3cret") || th == u.Token || th != tokenHash(u.Token) || !strings.HasPrefix(ph, "pbkdf2-sha256$") {
		t.Errorf("stored password_hash %q token_hash %q", ph, th)
	}

	if err := s.Accounts().DeleteUser(ctx, u.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Accounts().UserByToken(ctx, u.Token); !errors.Is(err, ErrNotFound) {
		t.Errorf("token of a deleted user: %v, want ErrNotFound", err)
	}
}

func TestUserErrors(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	if _, err := s.Accounts().CreateUser(ctx, UserInput{Name: "taken", Password: "right", Token: "taken-token"}); err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	create := func(in UserInput) error { _, err := s.Accounts().CreateUser(ctx, in); return err }
	tests := []struct {
		name string
		err  error
		is   error
	}{
		{"empty name", create(UserInput{Password: "p"}), ErrInvalid},
		{"name 65 chars", create(UserInput{Name: strings.Repeat("a", 65), Password: "p"}), ErrInvalid},
		{"name with newline", create(UserInput{Name: "a\nb", Password: "p"}), ErrInvalid},
		{"name with trailing space", create(UserInput{Name: "ab ", Password: "p"}), ErrInvalid},
		{"name not UTF-8", create(UserInput{Name: "a\xff", Password: "p"}), ErrInvalid},
		{"empty password", create(UserInput{Name: "x"}), ErrInvalid},
		{"password 257 bytes", create(UserInput{Name: "x", Password: strings.Repeat("p", 257)}), ErrInvalid},
		{"token 257 bytes", create(UserInput{Name: "x", Password: "p", Token: strings.Repeat("t", 257)}), ErrInvalid},
		{"group too long", create(UserInput{Name: "x", Password: "p", Group: strings.Repeat("g", 256)}), ErrInvalid},
		{"duplicate name", create(UserInput{Name: "taken", Password: "p"}), ErrConflict},
		{"duplicate token", create(UserInput{Name: "other", Password: "p", Token: "taken-token"}), ErrConflict},
		{"create canceled", second(s.Accounts().CreateUser(canceled, UserInput{Name: "y", Password: "p"})), context.Canceled},
		{"by name missing", second(s.Accounts().UserByName(ctx, "nobody")), ErrNotFound},
		{"by token missing", second(s.Accounts().UserByToken(ctx, "no-such-token")), ErrNotFound},
		{"by token empty", second(s.Accounts().UserByToken(ctx, "")), ErrNotFound},
		{"by token oversized", second(s.Accounts().UserByToken(ctx, strings.Repeat("t", 300))), ErrNotFound},
		{"delete missing", s.Accounts().DeleteUser(ctx, "no-such-uid"), ErrNotFound},
		{"verify unknown user", second(s.Accounts().VerifyPassword(ctx, "nobody", "right")), ErrBadCredentials},
		{"verify wrong password", second(s.Accounts().VerifyPassword(ctx, "taken", "wrong")), ErrBadCredentials},
		{"verify empty password", second(s.Accounts().VerifyPassword(ctx, "taken", "")), ErrBadCredentials},
		{"verify oversized password", second(s.Accounts().VerifyPassword(ctx, "taken", strings.Repeat("p", 1000))), ErrBadCredentials},
		{"verify canceled", second(s.Accounts().VerifyPassword(canceled, "taken", "right")), context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, tt.is) {
				t.Errorf("err = %v, want %v", tt.err, tt.is)
			}
		})
	}
	if n := countRows(t, s, "system_users"); n != 1 {
		t.Errorf("%d users after failed creations, want 1", n)
	}
	t.Run("64 characters of multi-byte text is allowed", func(t *testing.T) {
		if err := create(UserInput{Name: strings.Repeat("é", 64), Password: "p"}); err != nil {
			t.Error(err)
		}
	})
}

func TestPasswordHashFormat(t *testing.T) {
	enc, err := hashPassword("correct horse", pbkdf2Iterations)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(enc, "$")
	if len(parts) != 4 || parts[0] != "pbkdf2-sha256" || parts[1] != "210000" {
		t.Fatalf("hash %q: want pbkdf2-sha256$210000$<salt>$<hash>", enc)
	}
	if salt, err := b64.DecodeString(parts[2]); err != nil || len(salt) != 16 {
		t.Errorf("salt %q: %v", parts[2], err)
	}
	again, _ := hashPassword("correct horse", pbkdf2Iterations)
	if again == enc {
		t.Error("two hashes of one password are equal: salt is not random")
	}
	tests := []struct {
		name     string
		stored   string
		password string
		ok       bool
		bad      bool
	}{
		{"right", enc, "correct horse", true, false},
		{"wrong", enc, "correct horsE", false, false},
		{"empty", enc, "", false, false},
		{"other scheme", "bcrypt$10$x$y", "x", false, true},
		{"too few parts", "pbkdf2-sha256$1000$abc", "x", false, true},
		{"iterations not a number", "pbkdf2-sha256$lots$" + parts[2] + "$" + parts[3], "x", false, true},
		{"iterations absurd", "pbkdf2-sha256$999999999$" + parts[2] + "$" + parts[3], "x", false, true},
		{"iterations zero", "pbkdf2-sha256$0$" + parts[2] + "$" + parts[3], "x", false, true},
		{"salt not base64", "pbkdf2-sha256$1000$!!$" + parts[3], "x", false, true},
		{"empty key", "pbkdf2-sha256$1000$" + parts[2] + "$", "x", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := checkPassword(tt.stored, tt.password)
			if ok != tt.ok || (err != nil) != tt.bad {
				t.Errorf("checkPassword = %v, %v; want %v, error %v", ok, err, tt.ok, tt.bad)
			}
		})
	}
}

// TestCreateUserUsesDefaultIterations: a store opened normally hashes with
// 210000 iterations (the tests' helper lowers it for speed).
func TestCreateUserUsesDefaultIterations(t *testing.T) {
	s := openTest(t, Options{})
	s.passwordIter = pbkdf2Iterations
	ctx := context.Background()
	u, err := s.Accounts().CreateUser(ctx, UserInput{Name: "n", Password: "p"})
	if err != nil {
		t.Fatal(err)
	}
	var ph string
	s.r.QueryRow(`SELECT password_hash FROM system_users WHERE uid = ?`, u.UID).Scan(&ph)
	if !strings.HasPrefix(ph, "pbkdf2-sha256$210000$") {
		t.Errorf("stored %q", ph)
	}
	if _, err := s.Accounts().VerifyPassword(ctx, "n", "p"); err != nil {
		t.Error(err)
	}
	fresh, err := Open(ctx, s.path+"2", Options{Logger: testkit.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if fresh.passwordIter != pbkdf2Iterations {
		t.Errorf("Open sets %d iterations, want %d", fresh.passwordIter, pbkdf2Iterations)
	}
}
