package marti_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"outpost/appliance/admin"
	"outpost/appliance/netx"
	"outpost/internal/testkit"
)

// clientFromAddr is an HTTP client whose connections come from the loopback
// address local (127.0.0.2: Linux routes all of 127.0.0.0/8 to loopback),
// presenting tlsCfg when it is not nil.
func clientFromAddr(local string, tlsCfg *tls.Config) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: tlsCfg,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return testkit.DialFrom(local, addr)
		},
	}}
}

// TestGuessingCostsOnlyTheGuesser: a guesser of a mission's password, from
// 127.0.0.1, runs out of its budget after five wrong passwords: its
// threads, and then the right password from there, are answered 429 with
// Retry-After. The rightful user, from 127.0.0.2, subscribes with the
// password (8080 and 8443), logs in on the management API and enrolls. No
// wall-clock rate is involved: five failures guard the mission for a
// minute against the addresses that failed, and only against those.
func TestGuessingCostsOnlyTheGuesser(t *testing.T) {
	if probe, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		t.Skipf("127.0.0.2 is not usable here: %v", err)
	} else {
		probe.Close()
	}
	e := start(t, nil)
	const m = "/Marti/api/missions/"
	const password = "rightful-password-1"
	// The rightful user: a system user with a password and a certificate.
	tok, err := os.ReadFile(filepath.Join(e.Cfg.DataDir, admin.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "create the user", testkit.Do(t, nil, "POST", e.URL(t, netx.ListenerREST, "/ManageSystemUser/postSystemUser"),
		map[string]string{"username": "ruth", "password": password}, "Authorization", "Bearer "+strings.TrimSpace(string(tok))), 201)
	wantStatus(t, "create den", e.doAs(t, nil, netx.ListenerHTTP, "PUT", m+"den?creatorUid=den-owner&password="+password, nil), 201)

	// The guesser, from 127.0.0.1: five wrong passwords are checked (its
	// address's burst is six), then the mission is guarded against
	// addresses that failed (access.md "Password guesses cost the
	// guesser"). One after the other, so that no check waits for another's
	// slot: the count does not depend on how fast the hash runs.
	guess := func(pw string) testkit.Response {
		return e.doAs(t, nil, netx.ListenerHTTP, "PUT", m+"den/subscription?uid=guesser&password="+pw, nil)
	}
	for i := range 5 {
		wantRefusal(t, fmt.Sprintf("guess %d", i+1), guess(fmt.Sprintf("guess-%d", i+1)), http.StatusForbidden, "wrong mission password")
	}
	// Now twelve threads guess at once: each is refused before any hash
	// runs, with Retry-After.
	var wg sync.WaitGroup
	answers := make([]testkit.Response, 12)
	subscribe := e.URL(t, netx.ListenerHTTP, m+"den/subscription?uid=guesser&password=")
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("PUT", subscribe+fmt.Sprintf("thread-%d", i), nil)
			resp, err := testkit.Client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			answers[i] = testkit.Response{Status: resp.StatusCode, Header: resp.Header}
		}()
	}
	wg.Wait()
	for i, r := range answers {
		if ra := r.Header.Get("Retry-After"); r.Status != http.StatusTooManyRequests || ra == "" || ra == "0" {
			t.Errorf("thread %d: %d with Retry-After %q, want 429 with a wait", i, r.Status, ra)
		}
	}
	// The guesser's address is refused whatever it sends, the right
	// password too.
	r := guess(password)
	wantRefusal(t, "the right password from the guesser's address", r, http.StatusTooManyRequests, "too many failed password checks against this target")
	if ra := r.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("Retry-After %q", ra)
	}

	// The rightful user from 127.0.0.2.
	anon := clientFromAddr("127.0.0.2", nil)
	ruth := e.Issue(t, "ruth")
	ruthTLS := clientFromAddr("127.0.0.2", e.ClientTLS(ruth))
	q := "&password=" + password
	wantStatus(t, "subscribe on 8080 from 127.0.0.2", e.doAs(t, anon, netx.ListenerHTTP, "PUT", m+"den/subscription?uid=ruth-anon"+q, nil), 201)
	wantStatus(t, "subscribe on 8443 from 127.0.0.2", e.doAs(t, ruthTLS, netx.ListenerHTTPS, "PUT", m+"den/subscription?uid=ruth-1"+q, nil), 201)
	var subs []string
	var env envelopeOf
	wantStatus(t, "den's subscriptions", e.doAs(t, ruthTLS, netx.ListenerHTTPS, "GET", m+"den/subscriptions", nil), 200).JSON(t, &env)
	json.Unmarshal(env.Data, &subs)
	if strings.Join(subs, ",") != "den-owner,ruth-anon,ruth-1" {
		t.Fatalf("den's subscriptions: %v (the guesser must not be among them)", subs)
	}
	var login struct{ Token, Username string }
	wantStatus(t, "login from 127.0.0.2", testkit.Do(t, anon, "POST", e.URL(t, netx.ListenerREST, "/api/login"),
		map[string]string{"username": "ruth", "password": password}), 200).JSON(t, &login)
	if login.Token == "" || login.Username != "ruth" {
		t.Fatalf("login: %+v", login)
	}
	// Enrollment (HTTP Basic) from 127.0.0.2: the configuration, then a
	// certificate for a new key.
	enroll := clientFromAddr("127.0.0.2", e.ClientTLS(nil))
	basic := func(method, path string, body []byte) testkit.Response {
		t.Helper()
		auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("ruth:"+password))
		return testkit.Do(t, enroll, method, e.URL(t, netx.ListenerEnroll, path), body, "Authorization", auth)
	}
	wantStatus(t, "enrollment config from 127.0.0.2", basic("GET", "/Marti/api/tls/config", nil), 200)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "ruth"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	var signed struct {
		SignedCert string `json:"signedCert"`
	}
	wantStatus(t, "enrollment from 127.0.0.2", basic("POST", "/Marti/api/tls/signClient/v2?clientUid=ruth-2",
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})), 200).JSON(t, &signed)
	if signed.SignedCert == "" {
		t.Fatal("enrollment answered no certificate")
	}
}
