package marti

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// wantMessage checks a JSON error answer {"message": ...}.
func wantMessage(t *testing.T, what string, res enrollResp, status int) string {
	t.Helper()
	var m map[string]string
	if res.status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, res.status, status, res.body)
	}
	if err := json.Unmarshal(res.body, &m); err != nil || m["message"] == "" || res.header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s: want a JSON {\"message\"} answer, got %q %s", what, res.header.Get("Content-Type"), res.body)
	}
	return m["message"]
}

func TestEnrollAuthErrors(t *testing.T) {
	env := newEnrollEnv(t)
	csr := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: newCSR(t, ecKey(t), enrollUser)})
	sign := "/Marti/api/tls/signClient/v2?clientUid=" + enrollUID

	res := env.do(t, env.client, enrollReq{method: http.MethodPost, path: sign, noAuth: true, body: csr})
	wantMessage(t, "no credentials", res, http.StatusUnauthorized)
	if got := res.header.Get("WWW-Authenticate"); got != `Basic realm="Outpost enrollment"` {
		t.Fatalf("WWW-Authenticate %q", got)
	}
	wrong := env.do(t, env.client, enrollReq{method: http.MethodPost, path: sign, user: enrollUser, password: "not-the-password", body: csr})
	wantMessage(t, "wrong password", wrong, http.StatusUnauthorized)
	unknown := env.do(t, env.client, enrollReq{method: http.MethodPost, path: sign, user: "nobody", password: "not-the-password", body: csr})
	wantMessage(t, "unknown user", unknown, http.StatusUnauthorized)
	if !bytes.Equal(wrong.body, unknown.body) || wrong.header.Get("WWW-Authenticate") != unknown.header.Get("WWW-Authenticate") {
		t.Fatalf("unknown user and wrong password answer differently: %s / %s", wrong.body, unknown.body)
	}
	if env.issued(t, enrollUser) != 0 {
		t.Fatal("a certificate was issued without valid credentials")
	}
	if logs := env.logs.String(); !strings.Contains(logs, `"msg":"enrollment login failed"`) || !strings.Contains(logs, `"user":"nobody"`) ||
		strings.Contains(logs, "not-the-password") || strings.Contains(logs, enrollPassword) {
		t.Fatalf("failure log (user and address, never the password):\n%s", logs)
	}
}

func TestEnrollBadRequests(t *testing.T) {
	env := newEnrollEnv(t)
	sign := "/Marti/api/tls/signClient/v2?clientUid=" + enrollUID
	good := newCSR(t, ecKey(t), enrollUser)

	badSig := bytes.Clone(good)
	badSig[len(badSig)-2] ^= 0xff // inside the ECDSA signature value
	weak, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		body   []byte
		status int
	}{
		{"empty body", nil, http.StatusBadRequest},
		{"malformed base64", []byte("MIIBxTCCAW0CAQAw==x"), http.StatusBadRequest},
		{"not a CSR", []byte("\x00\x01binary\xff\xfe junk"), http.StatusBadRequest},
		{"base64 of not a CSR", []byte(base64.StdEncoding.EncodeToString([]byte("hello, this is no CSR"))), http.StatusBadRequest},
		{"a certificate instead", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: env.auth.CACert().Raw}), http.StatusBadRequest},
		{"bad signature", badSig, http.StatusBadRequest},
		{"RSA 1024", newCSR(t, weak, enrollUser), http.StatusBadRequest},
		{"oversize body", bytes.Repeat([]byte("A"), 70<<10), http.StatusRequestEntityTooLarge},
	} {
		res := env.do(t, env.client, enrollReq{method: http.MethodPost, path: sign, body: tc.body})
		msg := wantMessage(t, tc.name, res, tc.status)
		t.Logf("%s: %d %s", tc.name, res.status, msg)
	}
	// v1 refuses the same way.
	res := env.do(t, env.client, enrollReq{method: http.MethodPost, path: "/Marti/api/tls/signClient", body: badSig})
	wantMessage(t, "v1 bad signature", res, http.StatusBadRequest)
	// An Accept no format satisfies is refused before anything is signed.
	res = env.do(t, env.client, enrollReq{method: http.MethodPost, path: sign, body: good, header: map[string]string{"Accept": "image/png"}})
	wantMessage(t, "Accept image/png", res, http.StatusNotAcceptable)
	if n := env.issued(t, enrollUser); n != 0 {
		t.Fatalf("%d certificates issued by failed requests", n)
	}
	if !strings.Contains(env.logs.String(), `"msg":"enrollment failed"`) {
		t.Fatalf("failures are not logged:\n%s", env.logs.String())
	}
}

func TestEnrollRouting(t *testing.T) {
	env := newEnrollEnv(t)
	for _, tc := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{http.MethodGet, "/Marti/api/tls/signClient/v2", http.StatusMethodNotAllowed, "POST"},
		{http.MethodPut, "/Marti/api/tls/signClient", http.StatusMethodNotAllowed, "POST"},
		{http.MethodPost, "/Marti/api/tls/config", http.StatusMethodNotAllowed, "GET, HEAD"},
		{http.MethodDelete, "/Marti/api/tls/profile/enrollment", http.StatusMethodNotAllowed, "GET, HEAD"},
		{http.MethodGet, "/Marti/api/tls/nothing", http.StatusNotFound, ""},
		{http.MethodGet, "/", http.StatusNotFound, ""},
		{http.MethodGet, "/Marti/api/version", http.StatusNotFound, ""},
	} {
		res := env.do(t, env.client, enrollReq{method: tc.method, path: tc.path})
		wantMessage(t, tc.method+" "+tc.path, res, tc.status)
		if got := res.header.Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
	}
	// A trailing slash is the same endpoint.
	if res := env.do(t, env.client, enrollReq{path: "/Marti/api/tls/profile/enrollment/"}); res.status != http.StatusNoContent {
		t.Fatalf("trailing slash: %d %s", res.status, res.body)
	}
	// Credentials are never taken over cleartext.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "http://example/Marti/api/tls/config", nil)
	req.SetBasicAuth(enrollUser, enrollPassword)
	env.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Fatalf("request without TLS: %d %s", rec.Code, rec.Body)
	}
}

// TestEnrollRateLimit: guesses from one address run out of its budget, and
// once a user has been guessed at, addresses that failed are refused (429,
// Retry-After) even with the right password; another address is not; the
// guard forgets after a minute.
func TestEnrollRateLimit(t *testing.T) {
	env := newEnrollEnv(t)
	profile := "/Marti/api/tls/profile/enrollment?clientUid=" + enrollUID

	// Twelve wrong guesses at once from one address: its budget (a burst of
	// six checks; the clock stands still) admits six at most, and once five
	// have failed the user is guarded against addresses that failed, so
	// five or six are checked and the rest refused (access.md "Password
	// guesses cost the guesser").
	var wg sync.WaitGroup
	statuses := make([]int, 12)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := env.try(env.client, enrollReq{path: profile, user: enrollUser, password: "guess"})
			if err != nil {
				t.Error(err)
				return
			}
			statuses[i] = res.status
		}()
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if n := count[http.StatusUnauthorized]; n < 5 || n > 6 || n+count[http.StatusTooManyRequests] != 12 {
		t.Fatalf("statuses of 12 parallel guesses: %v (want 5 or 6 ×401, the rest 429)", count)
	}

	res := env.do(t, env.client, enrollReq{path: profile})
	wantMessage(t, "right password from the guessing address", res, http.StatusTooManyRequests)
	if ra := res.header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Fatalf("Retry-After %q", ra)
	}
	// Without credentials there is no password to check: the usual 401.
	if res := env.do(t, env.client, enrollReq{path: profile, noAuth: true}); res.status != http.StatusUnauthorized {
		t.Fatalf("no credentials from the guessing address: %d", res.status)
	}

	// Another address (127.0.0.2 is loopback on Linux) that has not failed:
	// the rightful user still enrolls while the user is being guessed at.
	other := env.clientFrom(t, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)})
	if probe, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		t.Logf("127.0.0.2 is not usable here (%v); other-address check skipped", err)
	} else {
		probe.Close()
		if res := env.do(t, other, enrollReq{path: profile}); res.status != http.StatusNoContent {
			t.Fatalf("login from another address: %d %s", res.status, res.body)
		}
	}

	env.clock.Add(61 * time.Second)
	if res := env.do(t, env.client, enrollReq{path: profile}); res.status != http.StatusNoContent {
		t.Fatalf("after the block: %d %s", res.status, res.body)
	}
	if logs := env.logs.String(); !strings.Contains(logs, `"msg":"enrollment refused"`) || strings.Contains(logs, enrollPassword) {
		t.Fatalf("rate-limit log:\n%s", logs)
	}
}
