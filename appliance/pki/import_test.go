package pki

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"outpost/internal/testkit"
)

// TestImportIntermediate: an intermediate signed by an organisation's root
// replaces the CA; after the next Open the server certificate chains to the
// root through the intermediate the listeners send, the truststore and the
// enrollment keystore carry the chain, the keys are 0600, the old files are
// kept aside, and client certificates of the old CA are refused.
func TestImportIntermediate(t *testing.T) {
	cfg := testConfig(t, "")
	old := openTest(t, cfg)
	oldClient := issue(t, old, "before")
	oldCA := old.CACert()

	root := testkit.MakeCA(t, "Example Root", nil, testkit.CAOptions{})
	inter := testkit.MakeCA(t, "Example Issuing CA", &root, testkit.CAOptions{})
	res, err := Import(cfg, ImportRequest{Cert: inter.CertPEM(), Key: inter.KeyPEM(t), Chain: root.CertPEM()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Chain) != 2 || !res.Chain[0].Equal(inter.Cert) || !res.Chain[1].Equal(root.Cert) || res.Previous != "" || len(res.Backups) != 2 {
		t.Fatalf("result %+v", res)
	}
	if err := res.Server.CheckSignatureFrom(inter.Cert); err != nil {
		t.Fatal(err)
	}
	for _, b := range res.Backups {
		if st, err := os.Stat(b); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("backup %s: %v %v", b, st, err)
		}
	}
	if saved, err := readCertsFile(res.Backups[0]); err != nil || !saved[0].Equal(oldCA) {
		t.Fatalf("backup of ca.pem: %v", err)
	}

	a := openTest(t, cfg)
	chain := a.CAChain()
	if len(chain) != 2 || !chain[0].Equal(inter.Cert) || !chain[1].Equal(root.Cert) {
		t.Fatalf("CAChain after reopening: %d certificates", len(chain))
	}
	for _, f := range []string{"ca.key", "server.key", "server.key.unencrypted", "server.p12"} {
		if st, err := os.Stat(filepath.Join(cfg.CertsDir, f)); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, st, err)
		}
	}
	sc := a.ServerCertificate()
	if len(sc.Certificate) != 2 || !bytes.Equal(sc.Certificate[1], inter.Cert.Raw) {
		t.Fatalf("the served chain has %d certificates, want server + intermediate", len(sc.Certificate))
	}

	// A client trusting only the root verifies the server; a new client
	// certificate is accepted, one of the old CA is refused.
	rootOnly := x509.NewCertPool()
	rootOnly.AddCert(root.Cert)
	fresh := issue(t, a, "after")
	if res := tryHandshake(t, a.ServerTLSConfig(), tlsCert(fresh), rootOnly); res.serverErr != nil || res.clientErr != nil {
		t.Fatalf("new client: server %v, client %v", res.serverErr, res.clientErr)
	}
	if res := tryHandshake(t, a.ServerTLSConfig(), tlsCert(oldClient), rootOnly); res.serverErr == nil {
		t.Fatal("a client certificate of the replaced CA was accepted without --trust-previous")
	}
	if err := fresh.Cert.CheckSignatureFrom(inter.Cert); err != nil {
		t.Fatal(err)
	}
	_, _, cas, err := pkcs12.DecodeChain(fresh.P12, testPassword)
	if err != nil || len(cas) != 2 {
		t.Fatalf("client .p12 carries %d CA certificates (%v), want 2", len(cas), err)
	}

	ts, err := a.TrustStoreP12()
	if err != nil {
		t.Fatal(err)
	}
	anchors, err := pkcs12.DecodeTrustStore(ts, testPassword)
	if err != nil || len(anchors) != 2 || !anchors[0].Equal(inter.Cert) || !anchors[1].Equal(root.Cert) {
		t.Fatalf("truststore: %d certificates, %v", len(anchors), err)
	}
	ks, err := a.KeyStoreP12(fresh.Cert, "atakatak")
	if err != nil {
		t.Fatal(err)
	}
	certs, err := pkcs12.DecodeTrustStore(ks, "atakatak")
	if err != nil || len(certs) != 3 || !certs[0].Equal(fresh.Cert) || !certs[1].Equal(inter.Cert) || !certs[2].Equal(root.Cert) {
		t.Fatalf("keystore: %d certificates, %v", len(certs), err)
	}
	out, err := exec.Command("openssl", "pkcs12", "-nokeys", "-passin", "pass:atakatak", "-in", writeTemp(t, ks)).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, alias := range []string{"friendlyName: signedCert", "friendlyName: ca0", "friendlyName: ca1"} {
		if !strings.Contains(string(out), alias) {
			t.Errorf("keystore lacks %q:\n%s", alias, out)
		}
	}
	// The revocation list is signed by the new CA once reopened.
	pemCRL, err := a.CRLPEM()
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(pemCRL)
	rl, err := x509.ParseRevocationList(block.Bytes)
	if err != nil || rl.CheckSignatureFrom(inter.Cert) != nil {
		t.Fatalf("CRL not signed by the imported CA: %v", err)
	}
}

// TestImportTrustPrevious: with TrustPrevious the replaced CA's client
// certificates keep connecting; the next import without it ends that.
func TestImportTrustPrevious(t *testing.T) {
	cfg := testConfig(t, "")
	old := openTest(t, cfg)
	oldClient := issue(t, old, "before")
	root := testkit.MakeCA(t, "Example Root", nil, testkit.CAOptions{Key: mustRSA(t, 2048)})
	res, err := Import(cfg, ImportRequest{Cert: root.CertPEM(), Key: root.KeyPEM(t), TrustPrevious: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Previous != filepath.Join(cfg.CertsDir, PreviousCAFile) {
		t.Fatalf("Previous = %q", res.Previous)
	}
	a := openTest(t, cfg)
	if len(a.CAChain()) != 1 || len(a.ServerCertificate().Certificate) != 1 {
		t.Fatal("a root CA is sent or carried as a chain")
	}
	if r := tryHandshake(t, a.ServerTLSConfig(), tlsCert(oldClient), poolOf(a)); r.serverErr != nil || r.clientErr != nil {
		t.Fatalf("old client during the transition: server %v, client %v", r.serverErr, r.clientErr)
	}
	// A second import, without TrustPrevious, ends the transition.
	again := testkit.MakeCA(t, "Example Root 2", nil, testkit.CAOptions{})
	if _, err := Import(cfg, ImportRequest{Cert: again.CertPEM(), Key: again.KeyPEM(t)}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(res.Previous); !os.IsNotExist(err) {
		t.Fatalf("%s still there: %v", res.Previous, err)
	}
	b := openTest(t, cfg)
	if r := tryHandshake(t, b.ServerTLSConfig(), tlsCert(oldClient), poolOf(b)); r.serverErr == nil {
		t.Fatal("old client accepted after the transition ended")
	}
}

func mustRSA(t testing.TB, bits int) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestImportRefuses: every unusable CA is refused with a message naming the
// problem, and the certificate directory is left as it was.
func TestImportRefuses(t *testing.T) {
	root := testkit.MakeCA(t, "Example Root", nil, testkit.CAOptions{})
	inter := testkit.MakeCA(t, "Example Issuing CA", &root, testkit.CAOptions{})
	otherRoot := testkit.MakeCA(t, "Other Root", nil, testkit.CAOptions{})
	midA := testkit.MakeCA(t, "Mid A", &root, testkit.CAOptions{})
	underA := testkit.MakeCA(t, "Under A", &midA, testkit.CAOptions{})
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	leafLike := testkit.MakeCA(t, "Not a CA", nil, testkit.CAOptions{NotCA: true, KeyUsage: x509.KeyUsageDigitalSignature})
	noSign := testkit.MakeCA(t, "No certSign", nil, testkit.CAOptions{KeyUsage: x509.KeyUsageDigitalSignature})
	expired := testkit.MakeCA(t, "Expired", nil, testkit.CAOptions{NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	future := testkit.MakeCA(t, "Future", nil, testkit.CAOptions{NotBefore: time.Now().Add(24 * time.Hour)})
	weak := testkit.MakeCA(t, "Weak RSA", nil, testkit.CAOptions{Key: mustRSA(t, 1024)})
	p521 := testkit.MakeCA(t, "P-521", nil, testkit.CAOptions{Key: func() crypto.Signer {
		k, _ := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
		return k
	}()})
	encrypted := pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1, 2, 3}})

	tests := []struct {
		name string
		req  ImportRequest
		want string
	}{
		{"no certificate", ImportRequest{Cert: []byte("hello"), Key: root.KeyPEM(t)}, "no PEM CERTIFICATE"},
		{"garbage certificate", ImportRequest{Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{0x30, 1}}), Key: root.KeyPEM(t)}, "does not parse"},
		{"no key", ImportRequest{Cert: root.CertPEM(), Key: []byte("nothing")}, "no PEM private key"},
		{"encrypted key", ImportRequest{Cert: root.CertPEM(), Key: encrypted}, "encrypted"},
		{"key of another CA", ImportRequest{Cert: root.CertPEM(), Key: otherRoot.KeyPEM(t)}, "does not belong"},
		{"not a CA", ImportRequest{Cert: leafLike.CertPEM(), Key: leafLike.KeyPEM(t)}, "not a CA certificate"},
		{"may not sign", ImportRequest{Cert: noSign.CertPEM(), Key: noSign.KeyPEM(t)}, "keyCertSign"},
		{"expired", ImportRequest{Cert: expired.CertPEM(), Key: expired.KeyPEM(t)}, "expired"},
		{"not yet valid", ImportRequest{Cert: future.CertPEM(), Key: future.KeyPEM(t)}, "not valid before"},
		{"Ed25519", ImportRequest{Cert: root.CertPEM(), Key: mustKeyPEM(t, edKey)}, "does not belong"},
		{"RSA 1024", ImportRequest{Cert: weak.CertPEM(), Key: weak.KeyPEM(t)}, "1024 bits"},
		{"P-521", ImportRequest{Cert: p521.CertPEM(), Key: p521.KeyPEM(t)}, "P-521"},
		{"intermediate without chain", ImportRequest{Cert: inter.CertPEM(), Key: inter.KeyPEM(t)}, "--chain"},
		{"chain of another root", ImportRequest{Cert: inter.CertPEM(), Key: inter.KeyPEM(t), Chain: otherRoot.CertPEM()}, "not the issuer"},
		{"chain out of order", ImportRequest{Cert: underA.CertPEM(), Key: underA.KeyPEM(t), Chain: append(root.CertPEM(), midA.CertPEM()...)}, "not the issuer"},
		{"chain without its root", ImportRequest{Cert: underA.CertPEM(), Key: underA.KeyPEM(t), Chain: midA.CertPEM()}, "not a self-signed root"},
		{"too large", ImportRequest{Cert: bytes.Repeat([]byte("x"), maxPEMFile+1), Key: root.KeyPEM(t)}, "larger than"},
	}
	cfg := testConfig(t, "")
	openTest(t, cfg)
	before := snapshotDir(t, cfg.CertsDir)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Import(cfg, tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.want)
			}
			if after := snapshotDir(t, cfg.CertsDir); after != before {
				t.Fatalf("the certificate directory changed:\n%s\n---\n%s", before, after)
			}
		})
	}
	// An Ed25519 CA (certificate and key matching) is refused by type.
	ed := testkit.MakeCA(t, "Ed CA", nil, testkit.CAOptions{Key: edKey})
	if _, err := Import(cfg, ImportRequest{Cert: ed.CertPEM(), Key: ed.KeyPEM(t)}); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Fatalf("Ed25519 CA: %v", err)
	}
	// The full chain in one file, intermediate first, is accepted.
	if _, err := Import(cfg, ImportRequest{Cert: append(underA.CertPEM(), append(midA.CertPEM(), root.CertPEM()...)...), Key: underA.KeyPEM(t)}); err != nil {
		t.Fatalf("bundle: %v", err)
	}
	if got := openTest(t, cfg).CAChain(); len(got) != 3 {
		t.Fatalf("bundle chain has %d certificates", len(got))
	}
}

func mustKeyPEM(t testing.TB, k crypto.Signer) []byte {
	t.Helper()
	b, err := keyPEM(k)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// snapshotDir lists a directory's files with their sizes and contents' hash.
func snapshotDir(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		b.WriteString(p + " " + hex.EncodeToString(sum[:]) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestServedChainVerifiesAgainstRoot: the TLS certificate an intermediate
// authority serves verifies in a Go client that trusts only the root, for
// the enrollment configuration too.
func TestServedChainVerifiesAgainstRoot(t *testing.T) {
	cfg := testConfig(t, "")
	root := testkit.MakeCA(t, "Example Root", nil, testkit.CAOptions{})
	inter := testkit.MakeCA(t, "Example Issuing CA", &root, testkit.CAOptions{})
	if _, err := Import(cfg, ImportRequest{Cert: inter.CertPEM(), Key: inter.KeyPEM(t), Chain: root.CertPEM()}); err != nil {
		t.Fatal(err)
	}
	a := openTest(t, cfg)
	rootOnly := x509.NewCertPool()
	rootOnly.AddCert(root.Cert)
	r := tryHandshake(t, a.EnrollmentTLSConfig(), nil, rootOnly)
	if r.clientErr != nil || r.serverErr != nil {
		t.Fatalf("enrollment handshake: client %v, server %v", r.clientErr, r.serverErr)
	}
	leaf := a.ServerCertificate().Leaf
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: testHost, Roots: rootOnly, Intermediates: poolOfCerts(inter.Cert)}); err != nil {
		t.Fatal(err)
	}
	if leaf.NotAfter.After(inter.Cert.NotAfter) {
		t.Fatal("the server certificate outlives its CA")
	}
}

func poolOfCerts(certs ...*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}
