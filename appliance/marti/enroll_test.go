package marti

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"encoding/xml"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"outpost/appliance/pki"
	"outpost/appliance/store"
	"outpost/internal/testkit"
)

const (
	enrollUser     = "alice"
	enrollPassword = "Correct-Horse-7731" // never expected in a log line
	enrollUID      = "ANDROID-0123456789abcdef"
)

// testClock is the password guard's clock; tests move it.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// enrollEnv is a real enrollment listener: a CA in a temporary directory, a
// SQLite store with one user, the handler behind TLS on 127.0.0.1 and a
// client that trusts only our CA.
type enrollEnv struct {
	auth    *pki.Authority
	store   *store.Store
	handler http.Handler
	srv     *httptest.Server
	client  *http.Client
	clock   *testClock
	logs    *testkit.Buffer
}

func newEnrollEnv(t *testing.T) *enrollEnv {
	t.Helper()
	dir := t.TempDir()
	a, err := pki.Open(pki.Config{
		CertsDir: filepath.Join(dir, "certs"), PublicHost: "127.0.0.1", Password: "package-secret",
		SSLCoTPort: 8089, EnrollPort: 8446, SANs: []string{"127.0.0.1"}, KeyType: pki.KeyTypeECDSAP256,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "outpost.db"), store.Options{Logger: slog.New(slog.DiscardHandler),
		// The process-wide password gate has its own tests (store, hostile);
		// here it must not stand between a guess and the per-address limit.
		PasswordChecksPerSecond: 1000, PasswordCheckConcurrency: 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Accounts().CreateUser(ctx, store.UserInput{Name: enrollUser, Password: enrollPassword}); err != nil {
		t.Fatal(err)
	}
	env := &enrollEnv{auth: a, store: st, clock: &testClock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}, logs: &testkit.Buffer{}}
	env.handler = NewEnrollmentHandler(EnrollOptions{
		Authority: a, Accounts: st.Accounts(), KeystorePassword: "atakatak", Now: env.clock.Now,
		Logger: slog.New(slog.NewJSONHandler(env.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	env.srv = httptest.NewUnstartedServer(env.handler)
	env.srv.TLS = a.EnrollmentTLSConfig()
	env.srv.StartTLS()
	t.Cleanup(env.srv.Close)
	env.client = env.clientFrom(t, nil)
	return env
}

// clientFrom returns an HTTPS client trusting only our CA, dialing from
// local when it is not nil.
func (e *enrollEnv) clientFrom(t *testing.T, local net.Addr) *http.Client {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(e.auth.CACert())
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		DialContext:     (&net.Dialer{LocalAddr: local, Timeout: 5 * time.Second}).DialContext,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

type enrollReq struct {
	method, path   string
	user, password string
	noAuth         bool
	header         map[string]string
	body           []byte
}

type enrollResp struct {
	status int
	header http.Header
	body   []byte
}

func (e *enrollEnv) do(t *testing.T, c *http.Client, q enrollReq) enrollResp {
	t.Helper()
	res, err := e.try(c, q)
	if err != nil {
		t.Fatalf("%s %s: %v", q.method, q.path, err)
	}
	return res
}

// try sends one request; it is safe to call from any goroutine.
func (e *enrollEnv) try(c *http.Client, q enrollReq) (enrollResp, error) {
	if q.method == "" {
		q.method = http.MethodGet
	}
	if q.user == "" && !q.noAuth {
		q.user, q.password = enrollUser, enrollPassword
	}
	req, err := http.NewRequest(q.method, e.srv.URL+q.path, bytes.NewReader(q.body))
	if err != nil {
		return enrollResp{}, err
	}
	if !q.noAuth {
		req.SetBasicAuth(q.user, q.password)
	}
	for k, v := range q.header {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		return enrollResp{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return enrollResp{}, err
	}
	return enrollResp{res.StatusCode, res.Header, b}, nil
}

// issued counts the certificates the authority has issued to name.
func (e *enrollEnv) issued(t *testing.T, name string) int {
	t.Helper()
	list, err := e.auth.Issued(name)
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

func newCSR(t *testing.T, key crypto.Signer, cn string) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn, Organization: []string{"Outpost"}, OrganizationalUnit: []string{"outpost"}},
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func ecKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// atakBody is the CSR as ATAK's commoncommo uploads it: PEM with the BEGIN
// and END lines removed (base64 in 64-column lines).
func atakBody(der []byte) []byte {
	p := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	p = bytes.Replace(p, []byte("-----BEGIN CERTIFICATE REQUEST-----\n"), nil, 1)
	return bytes.Replace(p, []byte("-----END CERTIFICATE REQUEST-----\n"), nil, 1)
}

// decodeAnswerCert decodes a certificate of a v2 answer: base64 in lines of
// at most 64 characters, no armour.
func decodeAnswerCert(t *testing.T, field, s string) *x509.Certificate {
	t.Helper()
	if strings.Contains(s, "-----") {
		t.Fatalf("%s carries PEM armour: %q", field, s)
	}
	for _, line := range strings.Split(s, "\n") {
		if len(line) > 64 {
			t.Fatalf("%s has a line of %d characters (want at most 64)", field, len(line))
		}
	}
	der, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(s, "\n", ""))
	if err != nil {
		t.Fatalf("%s: %v", field, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("%s: %v", field, err)
	}
	return cert
}

// checkClientCert: CN is the user, clientAuth, issued by our CA, and the key
// is the CSR's.
func checkClientCert(t *testing.T, a *pki.Authority, cert *x509.Certificate, pub crypto.PublicKey) {
	t.Helper()
	if cert.Subject.CommonName != enrollUser {
		t.Fatalf("CN %q, want %q", cert.Subject.CommonName, enrollUser)
	}
	roots := x509.NewCertPool()
	roots.AddCert(a.CACert())
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("signed certificate does not chain to the CA for clientAuth: %v", err)
	}
	if eq, ok := pub.(interface{ Equal(crypto.PublicKey) bool }); !ok || !eq.Equal(cert.PublicKey) {
		t.Fatal("signed certificate does not carry the CSR's public key")
	}
}

// TestEnrollSignClientV2JSON is the iTAK-style enrollment end to end: JSON
// answer, then a mutual-TLS handshake with the new certificate against the
// server configuration of 8089/8443.
func TestEnrollSignClientV2JSON(t *testing.T) {
	env := newEnrollEnv(t)
	key := ecKey(t)
	// The CSR names someone else: the CN must still be the user's.
	csr := newCSR(t, key, "mallory")
	res := env.do(t, env.client, enrollReq{method: http.MethodPost,
		path:   "/Marti/api/tls/signClient/v2?clientUid=" + enrollUID + "&version=5.2.0",
		header: map[string]string{"Content-Type": "text/plain; charset=utf-8"},
		body:   []byte(base64.StdEncoding.EncodeToString(csr))})
	if res.status != http.StatusOK {
		t.Fatalf("status %d: %s", res.status, res.body)
	}
	if ct := res.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want exactly application/json (node-tak compares it)", ct)
	}
	var ans map[string]string
	if err := json.Unmarshal(res.body, &ans); err != nil {
		t.Fatalf("answer is not a JSON object of strings: %v: %s", err, res.body)
	}
	cert := decodeAnswerCert(t, "signedCert", ans["signedCert"])
	checkClientCert(t, env.auth, cert, key.Public())
	if ca := decodeAnswerCert(t, "ca0", ans["ca0"]); !ca.Equal(env.auth.CACert()) {
		t.Fatal("ca0 is not the CA certificate")
	}
	if srv := decodeAnswerCert(t, "ca1", ans["ca1"]); !srv.Equal(env.auth.ServerCertificate().Leaf) {
		t.Fatal("ca1 is not the server certificate")
	}
	if env.issued(t, enrollUser) != 1 {
		t.Fatal("the enrollment is not in the issuance index (revocation by name would miss it)")
	}

	// The certificate opens the mutual-TLS listeners.
	clientConn, serverConn := net.Pipe()
	defer clientConn.Close()
	defer serverConn.Close()
	roots := x509.NewCertPool()
	roots.AddCert(env.auth.CACert())
	tc := tls.Client(clientConn, &tls.Config{
		RootCAs: roots, ServerName: "127.0.0.1",
		Certificates: []tls.Certificate{{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}},
	})
	ts := tls.Server(serverConn, env.auth.ServerTLSConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- tc.HandshakeContext(ctx) }()
	if err := ts.HandshakeContext(ctx); err != nil {
		t.Fatalf("server refused the enrolled certificate: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	if name, _, ok := env.auth.Identity(ts.ConnectionState()); !ok || name != enrollUser {
		t.Fatalf("identity on the mutual-TLS connection: %q %v", name, ok)
	}

	logs := env.logs.String()
	for _, want := range []string{`"msg":"client certificate enrolled"`, `"user":"alice"`, `"client_uid":"` + enrollUID + `"`,
		`"serial":"` + cert.SerialNumber.String() + `"`, `"remote":"127.0.0.1"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, enrollPassword) {
		t.Fatal("the password was logged")
	}
}

// TestEnrollSignClientV2XML is ATAK's request (commoncommo): RSA 2048, PEM
// without armour lines, Accept application/xml, octet-stream body.
func TestEnrollSignClientV2XML(t *testing.T) {
	env := newEnrollEnv(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	res := env.do(t, env.client, enrollReq{method: http.MethodPost,
		path:   "/Marti/api/tls/signClient/v2?clientUid=" + enrollUID + "&version=4.10.0",
		header: map[string]string{"Accept": "application/xml", "Content-Type": "application/octet-stream"},
		body:   atakBody(newCSR(t, key, enrollUser))})
	if res.status != http.StatusOK {
		t.Fatalf("status %d: %s", res.status, res.body)
	}
	if ct := res.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/xml") {
		t.Fatalf("Content-Type %q", ct)
	}
	// ATAK reads every child node of <enrollment> as a certificate, text
	// nodes included: no white space between elements.
	if regexp.MustCompile(`>\s+<`).Match(res.body) {
		t.Fatalf("white space between elements: %s", res.body)
	}
	var doc struct {
		XMLName    xml.Name `xml:"enrollment"`
		SignedCert string   `xml:"signedCert"`
		CA         []string `xml:"ca"`
	}
	if err := xml.Unmarshal(res.body, &doc); err != nil {
		t.Fatalf("%v: %s", err, res.body)
	}
	checkClientCert(t, env.auth, decodeAnswerCert(t, "signedCert", doc.SignedCert), key.Public())
	if len(doc.CA) != 1 || !decodeAnswerCert(t, "ca", doc.CA[0]).Equal(env.auth.CACert()) {
		t.Fatalf("want exactly the CA in <ca>, got %d entries", len(doc.CA))
	}
}

// TestEnrollSignClientV1 answers a PKCS#12 with the signed certificate and
// the CA, opened with the keystore password.
func TestEnrollSignClientV1(t *testing.T) {
	env := newEnrollEnv(t)
	key := ecKey(t)
	csrPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: newCSR(t, key, enrollUser)})
	res := env.do(t, env.client, enrollReq{method: http.MethodPost, path: "/Marti/api/tls/signClient?clientUid=" + enrollUID, body: csrPEM})
	if res.status != http.StatusOK {
		t.Fatalf("status %d: %s", res.status, res.body)
	}
	if ct := res.header.Get("Content-Type"); ct != "application/x-pkcs12" {
		t.Fatalf("Content-Type %q", ct)
	}
	if _, err := pkcs12.DecodeTrustStore(res.body, "wrong"); err == nil {
		t.Fatal("the keystore opens with a wrong password")
	}
	certs, err := pkcs12.DecodeTrustStore(res.body, "atakatak")
	if err != nil {
		t.Fatal(err)
	}
	var signed, ca int
	for _, c := range certs {
		switch {
		case c.Equal(env.auth.CACert()):
			ca++
		case c.Subject.CommonName == enrollUser:
			checkClientCert(t, env.auth, c, key.Public())
			signed++
		}
	}
	if len(certs) != 2 || signed != 1 || ca != 1 {
		t.Fatalf("keystore holds %d certificates (%d signed, %d CA); want the signed certificate and the CA", len(certs), signed, ca)
	}
}

// TestEnrollConfigAndProfile: the certificateConfig document, its content
// types, the JSON-as-text variant of v2 and the empty enrollment profile.
func TestEnrollConfigAndProfile(t *testing.T) {
	env := newEnrollEnv(t)
	res := env.do(t, env.client, enrollReq{path: "/Marti/api/tls/config"})
	if res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Type"), "text/plain") {
		t.Fatalf("config: %d %q", res.status, res.header.Get("Content-Type"))
	}
	if !bytes.Contains(res.body, []byte("<ns2:certificateConfig ")) {
		t.Fatalf("node-tak needs the literal root ns2:certificateConfig: %s", res.body)
	}
	var cfg struct {
		XMLName xml.Name `xml:"com.bbn.marti.config certificateConfig"`
		Entries []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"http://bbn.com/marti/xml/config nameEntries>nameEntry"`
	}
	if err := xml.Unmarshal(res.body, &cfg); err != nil {
		t.Fatalf("%v: %s", err, res.body)
	}
	got := map[string]string{}
	for _, e := range cfg.Entries {
		got[e.Name] = e.Value
	}
	if len(cfg.Entries) != 2 || got["O"] == "" || got["OU"] == "" {
		t.Fatalf("nameEntries %+v: want non-empty O and OU", cfg.Entries)
	}
	res = env.do(t, env.client, enrollReq{path: "/Marti/api/tls/config", header: map[string]string{"Accept": "application/xml"}})
	if res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Type"), "application/xml") {
		t.Fatalf("config with Accept xml: %d %q", res.status, res.header.Get("Content-Type"))
	}

	// Accept text/plain: the JSON body labelled text/plain (iTAK).
	res = env.do(t, env.client, enrollReq{method: http.MethodPost, path: "/Marti/api/tls/signClient/v2?clientUID=" + enrollUID,
		header: map[string]string{"Accept": "text/plain"},
		body:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: newCSR(t, ecKey(t), enrollUser)})})
	var ans map[string]string
	if res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Type"), "text/plain") || json.Unmarshal(res.body, &ans) != nil || ans["signedCert"] == "" {
		t.Fatalf("v2 as text: %d %q %s", res.status, res.header.Get("Content-Type"), res.body)
	}

	res = env.do(t, env.client, enrollReq{path: "/Marti/api/tls/profile/enrollment?clientUid=" + enrollUID})
	if res.status != http.StatusNoContent || len(res.body) != 0 {
		t.Fatalf("profile/enrollment: %d %q", res.status, res.body)
	}
	if strings.Contains(env.logs.String(), enrollPassword) {
		t.Fatal("the password was logged")
	}
}
