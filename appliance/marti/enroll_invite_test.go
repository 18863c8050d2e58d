package marti

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"outpost/appliance/store"
	"outpost/internal/testkit"
)

// invite creates an invitation for the enrollment user at the handler's clock.
func (e *enrollEnv) invite(t *testing.T, uses int, ttl time.Duration) store.EnrollInvitation {
	t.Helper()
	ctx := context.Background()
	u, err := e.store.Accounts().UserByName(ctx, enrollUser)
	if err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now()
	inv, err := e.store.Accounts().CreateEnrollInvitation(ctx, store.EnrollInvitationInput{UserUID: u.UID, Device: "atak", Expires: now.Add(ttl), Uses: uses}, now)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// signWith posts a fresh CSR to signClient/v2 with name and secret.
func (e *enrollEnv) signWith(t *testing.T, c *http.Client, name, secret string) enrollResp {
	t.Helper()
	res, err := e.trySign(c, name, secret, newCSR(t, ecKey(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (e *enrollEnv) trySign(c *http.Client, name, secret string, csr []byte) (enrollResp, error) {
	return e.try(c, enrollReq{method: http.MethodPost, path: "/Marti/api/tls/signClient/v2?clientUid=" + enrollUID,
		user: name, password: secret, header: map[string]string{"Accept": "application/json"}, body: atakBody(csr)})
}

func usesLeft(t *testing.T, e *enrollEnv, id string) int {
	t.Helper()
	inv, err := e.store.Accounts().EnrollInvitation(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return inv.UsesLeft
}

// TestEnrollWithInvitation: a token works like the password; the config
// call does not spend it, signing does, and a spent one-use token is 401.
func TestEnrollWithInvitation(t *testing.T) {
	env := newEnrollEnv(t)
	inv := env.invite(t, 1, time.Hour)
	for i := 0; i < 2; i++ {
		res := env.do(t, env.client, enrollReq{path: "/Marti/api/tls/config", user: enrollUser, password: inv.Token})
		if res.status != http.StatusOK || !bytes.Contains(res.body, []byte("certificateConfig")) {
			t.Fatalf("config with the token: %d %s", res.status, res.body)
		}
	}
	if n := usesLeft(t, env, inv.ID); n != 1 {
		t.Fatalf("the config call spent the invitation: %d uses left", n)
	}
	key := ecKey(t)
	res := env.do(t, env.client, enrollReq{method: http.MethodPost, path: "/Marti/api/tls/signClient/v2?clientUid=" + enrollUID,
		user: enrollUser, password: inv.Token, header: map[string]string{"Accept": "application/json"}, body: atakBody(newCSR(t, key, enrollUser))})
	if res.status != http.StatusOK {
		t.Fatalf("signClient/v2 with the token: %d %s", res.status, res.body)
	}
	var answer map[string]string
	if err := json.Unmarshal(res.body, &answer); err != nil {
		t.Fatal(err)
	}
	checkClientCert(t, env.auth, decodeAnswerCert(t, "signedCert", answer["signedCert"]), key.Public())
	if n := usesLeft(t, env, inv.ID); n != 0 {
		t.Fatalf("after signing: %d uses left, want 0", n)
	}
	// Reuse: a second enrollment (and any other call) with the spent token.
	if res := env.signWith(t, env.client, enrollUser, inv.Token); res.status != http.StatusUnauthorized {
		t.Fatalf("second enrollment with a spent one-use token: %d %s", res.status, res.body)
	}
	wantMessage(t, "config with a spent token", env.do(t, env.client, enrollReq{path: "/Marti/api/tls/config", user: enrollUser, password: inv.Token}), http.StatusUnauthorized)
	// The password still works.
	if res := env.signWith(t, env.client, enrollUser, enrollPassword); res.status != http.StatusOK {
		t.Fatalf("password after the token: %d %s", res.status, res.body)
	}
	if n := env.issued(t, enrollUser); n != 2 {
		t.Fatalf("%d certificates issued, want 2", n)
	}
	// v1 (PKCS#12) spends too.
	inv2 := env.invite(t, 1, time.Hour)
	res = env.do(t, env.client, enrollReq{method: http.MethodPost, path: "/Marti/api/tls/signClient", user: enrollUser, password: inv2.Token, body: atakBody(newCSR(t, ecKey(t), enrollUser))})
	if res.status != http.StatusOK || usesLeft(t, env, inv2.ID) != 0 {
		t.Fatalf("signClient v1 with a token: %d, %d uses left", res.status, usesLeft(t, env, inv2.ID))
	}
	logs := env.logs.String()
	for _, secret := range []string{inv.Token, inv2.Token, enrollPassword} {
		if strings.Contains(logs, secret) {
			t.Fatalf("a secret is in the log:\n%s", logs)
		}
	}
	if !strings.Contains(logs, `"invitation":"`+inv.ID+`"`) {
		t.Errorf("the enrollment log line does not name the invitation %s:\n%s", inv.ID, logs)
	}
}

// TestEnrollInvitationRefusals: expired, revoked, another user's, a
// mangled token: all 401 like a wrong password, and nothing is spent.
func TestEnrollInvitationRefusals(t *testing.T) {
	env := newEnrollEnv(t)
	ctx := context.Background()
	if _, err := env.store.Accounts().CreateUser(ctx, store.UserInput{Name: "bob", Password: "bobs-password-1"}); err != nil {
		t.Fatal(err)
	}
	expired := env.invite(t, 5, time.Minute)
	revoked := env.invite(t, 5, time.Hour)
	if _, err := env.store.Accounts().RevokeEnrollInvitation(ctx, revoked.ID, env.clock.Now()); err != nil {
		t.Fatal(err)
	}
	good := env.invite(t, 5, time.Hour)
	env.clock.Add(2 * time.Minute)
	for name, c := range map[string]struct{ user, secret string }{
		"expired":    {enrollUser, expired.Token},
		"revoked":    {enrollUser, revoked.Token},
		"wrong user": {"bob", good.Token},
		"mangled":    {enrollUser, good.Token[:len(good.Token)-1]},
	} {
		res := env.signWith(t, env.client, c.user, c.secret)
		wantMessage(t, name, res, http.StatusUnauthorized)
		if res.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: no WWW-Authenticate", name)
		}
	}
	if n := usesLeft(t, env, good.ID); n != 5 {
		t.Fatalf("refusals spent the good invitation: %d uses left", n)
	}
	if n := env.issued(t, "bob") + env.issued(t, enrollUser); n != 0 {
		t.Fatalf("%d certificates issued by refused requests", n)
	}
}

// TestEnrollInvitationBruteForce: guessing tokens ends in 429 from the
// password guard, as guessing passwords does.
func TestEnrollInvitationBruteForce(t *testing.T) {
	env := newEnrollEnv(t)
	inv := env.invite(t, 1, time.Hour)
	statuses := map[int]int{}
	for i := 0; i < 20; i++ {
		guess := base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{byte(i)}, 32))
		res := env.do(t, env.client, enrollReq{path: "/Marti/api/tls/config", user: enrollUser, password: guess})
		statuses[res.status]++
	}
	if statuses[http.StatusTooManyRequests] == 0 || statuses[http.StatusUnauthorized] == 0 || statuses[http.StatusOK] != 0 {
		t.Fatalf("statuses of 20 token guesses: %v (want 401s, then 429s)", statuses)
	}
	// The right token from the guessing address is refused too while it is
	// blocked: the guard decides before anything is checked.
	if res := env.do(t, env.client, enrollReq{path: "/Marti/api/tls/config", user: enrollUser, password: inv.Token}); res.status != http.StatusTooManyRequests {
		t.Fatalf("the right token from a blocked address: %d", res.status)
	}
	if usesLeft(t, env, inv.ID) != 1 {
		t.Fatal("the invitation was spent")
	}
}

// TestEnrollInvitationDoubleSpend: many enrollments race for one use; one
// certificate comes out.
func TestEnrollInvitationDoubleSpend(t *testing.T) {
	env := newEnrollEnv(t)
	inv := env.invite(t, 1, time.Hour)
	const n = 8
	csrs := make([][]byte, n)
	for i := range csrs {
		csrs[i] = newCSR(t, ecKey(t), enrollUser)
	}
	var wg sync.WaitGroup
	statuses := make([]int, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res, err := env.trySign(env.client, enrollUser, inv.Token, csrs[i])
			if err != nil {
				t.Error(err)
				return
			}
			statuses[i] = res.status
		}()
	}
	close(start)
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[http.StatusOK] != 1 || count[http.StatusOK]+count[http.StatusUnauthorized]+count[http.StatusTooManyRequests] != n {
		t.Fatalf("statuses of %d racing enrollments with a one-use token: %v (want exactly one 200)", n, count)
	}
	if got := env.issued(t, enrollUser); got != 1 {
		t.Fatalf("%d certificates issued, want 1", got)
	}
}

// TestEnrollQRAndPackage: the iTAK code image and the enrollment-only
// package, with a token that is not spent by them.
func TestEnrollQRAndPackage(t *testing.T) {
	env := newEnrollEnv(t)
	inv := env.invite(t, 1, time.Hour)
	res := env.do(t, env.client, enrollReq{path: "/Marti/api/tls/config/qr?clientUid=x", user: enrollUser, password: inv.Token})
	if res.status != http.StatusOK || res.header.Get("Content-Type") != "image/png" {
		t.Fatalf("config/qr: %d %s %q", res.status, res.header.Get("Content-Type"), res.body)
	}
	if got := testkit.DecodeQR(t, res.body); got != "outpost,127.0.0.1,8089,SSL" {
		t.Errorf("the iTAK code reads %q", got)
	}
	res = env.do(t, env.client, enrollReq{path: "/Marti/api/tls/enrollment-package", user: enrollUser, password: inv.Token})
	if res.status != http.StatusOK || res.header.Get("Content-Type") != "application/zip" || !strings.Contains(res.header.Get("Content-Disposition"), "wintak") {
		t.Fatalf("enrollment-package: %d %v", res.status, res.header)
	}
	zr, err := zip.NewReader(bytes.NewReader(res.body), int64(len(res.body)))
	if err != nil {
		t.Fatal(err)
	}
	p12s := 0
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, ".p12") {
			p12s++
		}
	}
	if p12s != 1 {
		t.Errorf("the enrollment package holds %d .p12 files, want the truststore alone", p12s)
	}
	if bytes.Contains(res.body, []byte(inv.Token)) || bytes.Contains(res.body, []byte("PRIVATE KEY")) {
		t.Error("the enrollment package carries the token or a private key")
	}
	if res := env.do(t, env.client, enrollReq{path: "/Marti/api/tls/enrollment-package?device=itak"}); res.status != http.StatusOK || !strings.Contains(res.header.Get("Content-Disposition"), "itak") {
		t.Fatalf("itak package with the password: %d %v", res.status, res.header)
	}
	wantMessage(t, "bad device", env.do(t, env.client, enrollReq{path: "/Marti/api/tls/enrollment-package?device=palm"}), http.StatusBadRequest)
	wantMessage(t, "package without credentials", env.do(t, env.client, enrollReq{path: "/Marti/api/tls/enrollment-package", noAuth: true}), http.StatusUnauthorized)
	wantMessage(t, "qr without credentials", env.do(t, env.client, enrollReq{path: "/Marti/api/tls/config/qr", noAuth: true}), http.StatusUnauthorized)
	if usesLeft(t, env, inv.ID) != 1 {
		t.Fatal("the code or the package spent the invitation")
	}
}
