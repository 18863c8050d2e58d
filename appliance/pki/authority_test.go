package pki

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestOpenFirstRunCreatesFilesAndReloads(t *testing.T) {
	for _, keyType := range []string{KeyTypeRSA, KeyTypeECDSAP256} {
		t.Run(keyType, func(t *testing.T) {
			cfg := testConfig(t, "")
			cfg.KeyType = keyType
			a := openTest(t, cfg)
			dir := cfg.CertsDir

			modes := map[string]os.FileMode{
				"server.key": 0o600, "server.key.unencrypted": 0o600, "server.p12": 0o600, "ca.key": 0o600,
				"server.pem": 0o644, "ca.pem": 0o644, "crl.json": 0o644, "crl.pem": 0o644,
			}
			for name, want := range modes {
				st, err := os.Stat(filepath.Join(dir, name))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if runtime.GOOS != "windows" && st.Mode().Perm() != want {
					t.Errorf("%s mode %v, want %v", name, st.Mode().Perm(), want)
				}
			}
			for _, d := range []string{dir, filepath.Join(dir, "clientpackages")} {
				st, err := os.Stat(d)
				if err != nil || !st.IsDir() {
					t.Fatalf("%s: not a directory (%v)", d, err)
				}
				if runtime.GOOS != "windows" && st.Mode().Perm() != 0o700 {
					t.Errorf("%s mode %v, want 0700", d, st.Mode().Perm())
				}
			}

			ca := a.CACert()
			if ca.Subject.CommonName != "Outpost CA outpost-test" || !ca.IsCA || !ca.MaxPathLenZero || ca.MaxPathLen != 0 {
				t.Errorf("CA subject %q IsCA %v MaxPathLen %d zero %v", ca.Subject.CommonName, ca.IsCA, ca.MaxPathLen, ca.MaxPathLenZero)
			}
			if ca.KeyUsage != x509.KeyUsageCertSign|x509.KeyUsageCRLSign {
				t.Errorf("CA key usage %v", ca.KeyUsage)
			}
			switch keyType {
			case KeyTypeRSA:
				if k, ok := ca.PublicKey.(*rsa.PublicKey); !ok || k.N.BitLen() != 2048 {
					t.Errorf("CA key is %T, want RSA 2048", ca.PublicKey)
				}
			case KeyTypeECDSAP256:
				if _, ok := ca.PublicKey.(*ecdsa.PublicKey); !ok {
					t.Errorf("CA key is %T, want ECDSA", ca.PublicKey)
				}
			}
			srv := a.ServerCertificate().Leaf
			if srv.Subject.CommonName != "outpost-test" || !slices.Equal(srv.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
				t.Errorf("server subject %q EKU %v", srv.Subject.CommonName, srv.ExtKeyUsage)
			}
			if _, err := srv.Verify(x509.VerifyOptions{DNSName: testHost, Roots: poolOf(a)}); err != nil {
				t.Errorf("server cert does not verify for %s: %v", testHost, err)
			}
			if err := srv.VerifyHostname("127.0.0.1"); err != nil {
				t.Errorf("server cert lacks 127.0.0.1: %v", err)
			}
			key1, _ := os.ReadFile(filepath.Join(dir, "server.key"))
			key2, _ := os.ReadFile(filepath.Join(dir, "server.key.unencrypted"))
			if !bytes.Equal(key1, key2) || !bytes.Contains(key1, []byte("BEGIN PRIVATE KEY")) {
				t.Error("server.key and server.key.unencrypted differ or are not unencrypted PKCS#8")
			}

			b := openTest(t, cfg)
			if !bytes.Equal(b.CACert().Raw, ca.Raw) || !bytes.Equal(b.ServerCertificate().Leaf.Raw, srv.Raw) {
				t.Error("second Open did not load the same CA and server certificate")
			}
		})
	}
}

func TestOpenRejectsBadFiles(t *testing.T) {
	other := newTestAuthority(t) // a different CA whose files we borrow
	otherDir := other.cfg.CertsDir
	copyFrom := func(src, dst string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			data, err := os.ReadFile(filepath.Join(otherDir, src))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, dst), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	write := func(name, content string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	remove := func(name string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name    string
		break_  func(t *testing.T, dir string)
		wantSub []string // every substring must be in the error
	}{
		{"garbage CA certificate", write("ca.pem", "not a certificate"), []string{"ca.pem"}},
		{"CA key of another CA", copyFrom("ca.key", "ca.key"), []string{"ca.key", "does not belong"}},
		{"CA key missing", remove("ca.key"), []string{"ca.key", "missing"}},
		{"CA certificate missing, key present", remove("ca.pem"), []string{"ca.pem", "refusing"}},
		{"server cert from another CA", copyFrom("server.pem", "server.pem"), []string{"server.key", "does not belong"}},
		{"server cert and key from another CA", func(t *testing.T, dir string) {
			copyFrom("server.pem", "server.pem")(t, dir)
			copyFrom("server.key", "server.key")(t, dir)
		}, []string{"server.pem", "not signed by the CA"}},
		{"garbage server key", write("server.key", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), []string{"server.key"}},
		{"malformed revocation list", write("crl.json", "{not json"), []string{"crl.json", "malformed"}},
		{"revocation list with a bad serial", write("crl.json", `{"revoked_certificates":[{"serial_number":"xyz","revocation_date":"2024-01-01T00:00:00Z","reason":"unspecified"}]}`), []string{"crl.json"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, "")
			openTest(t, cfg)
			tc.break_(t, cfg.CertsDir)
			_, err := Open(cfg)
			if err == nil {
				t.Fatal("Open succeeded, want an error")
			}
			for _, s := range tc.wantSub {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestOpenExpiredCA(t *testing.T) {
	cfg := testConfig(t, "")
	openTest(t, cfg)
	cfg.Now = func() time.Time { return time.Now().Add(11 * 365 * 24 * time.Hour) }
	_, err := Open(cfg)
	if err == nil || !strings.Contains(err.Error(), "ca.pem") || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("Open with an expired CA: %v", err)
	}
}

func TestOpenReissuesServerCertKeepingCA(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, c *Config)
		check  func(t *testing.T, leaf *x509.Certificate)
	}{
		{"new SAN", func(t *testing.T, c *Config) { c.SANs = append(c.SANs, "new.example.org", "10.1.2.3") }, func(t *testing.T, leaf *x509.Certificate) {
			if err := leaf.VerifyHostname("new.example.org"); err != nil {
				t.Error(err)
			}
			if !slices.ContainsFunc(leaf.IPAddresses, func(ip net.IP) bool { return ip.Equal(net.ParseIP("10.1.2.3")) }) {
				t.Errorf("IPs %v lack 10.1.2.3", leaf.IPAddresses)
			}
		}},
		{"server key missing", func(t *testing.T, c *Config) {
			if err := os.Remove(filepath.Join(c.CertsDir, "server.key")); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, leaf *x509.Certificate) {}},
		{"server cert expired", func(t *testing.T, c *Config) {
			c.Now = func() time.Time { return time.Now().Add(6 * 365 * 24 * time.Hour) }
		}, func(t *testing.T, leaf *x509.Certificate) {
			if !leaf.NotAfter.After(time.Now().Add(6 * 365 * 24 * time.Hour)) {
				t.Errorf("new server cert ends %v", leaf.NotAfter)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, "")
			a := openTest(t, cfg)
			tc.change(t, &cfg)
			b := openTest(t, cfg)
			if !bytes.Equal(a.CACert().Raw, b.CACert().Raw) {
				t.Fatal("the CA changed")
			}
			leaf := b.ServerCertificate().Leaf
			if bytes.Equal(leaf.Raw, a.ServerCertificate().Leaf.Raw) {
				t.Fatal("server certificate was not re-issued")
			}
			if err := leaf.CheckSignatureFrom(b.CACert()); err != nil {
				t.Fatal(err)
			}
			tc.check(t, leaf)
			onDisk, _, err := readCertFile(b.cfg.CertFile)
			if err != nil || !bytes.Equal(onDisk.Raw, leaf.Raw) {
				t.Fatalf("server.pem not rewritten (%v)", err)
			}
			if !b.serverP12Current(leaf) {
				t.Error("server.p12 not rewritten")
			}
		})
	}
}

func TestOpenConfigErrors(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no password", func(c *Config) { c.Password = "" }, "Password"},
		{"no certs dir", func(c *Config) { c.CertsDir = "" }, "CertsDir"},
		{"bad key type", func(c *Config) { c.KeyType = "dsa" }, "KeyType"},
		{"bad SAN", func(c *Config) { c.SANs = []string{"not a host!"} }, "SAN"},
		{"bad port", func(c *Config) { c.SSLCoTPort = 70000 }, "port"},
		{"control char in server name", func(c *Config) { c.ServerName = "a\nb" }, "ServerName"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, "")
			tc.change(&cfg)
			_, err := Open(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open: %v, want an error about %s", err, tc.want)
			}
			if cfg.CertsDir != "" {
				if _, statErr := os.Stat(filepath.Join(cfg.CertsDir, "ca.key")); statErr == nil {
					t.Error("a bad configuration still created files")
				}
			}
		})
	}
}

func TestOpenDefaultsAndCustomPaths(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(t, filepath.Join(root, "certs"))
	cfg.CAFile = filepath.Join(root, "elsewhere", "my-ca.pem")
	cfg.PublicHost = ""
	if err := os.MkdirAll(filepath.Dir(cfg.CAFile), 0o700); err != nil {
		t.Fatal(err)
	}
	a := openTest(t, cfg)
	if _, err := os.Stat(cfg.CAFile); err != nil {
		t.Fatalf("custom CA path not used: %v", err)
	}
	if a.cfg.PublicHost != testHost {
		t.Errorf("PublicHost default %q, want first SAN %q", a.cfg.PublicHost, testHost)
	}
	if a.cfg.SSLCoTPort != 8089 || a.cfg.EnrollPort != 8446 || a.cfg.ClientValidity != DefaultClientValidity {
		t.Errorf("defaults: %d %d %v", a.cfg.SSLCoTPort, a.cfg.EnrollPort, a.cfg.ClientValidity)
	}
}

func TestReadKeyFileFormats(t *testing.T) {
	// FreeTAKServer writes "TraditionalOpenSSL" (PKCS#1 / SEC 1) keys; load them.
	dir := t.TempDir()
	rsaKey, _ := newKey(KeyTypeRSA)
	ecKey, _ := newKey(KeyTypeECDSAP256)
	ecDER, _ := x509.MarshalECPrivateKey(ecKey.(*ecdsa.PrivateKey))
	tests := []struct {
		name string
		pem  string
		ok   bool
	}{
		{"pkcs1", "-----BEGIN RSA PRIVATE KEY-----\n" + b64(x509.MarshalPKCS1PrivateKey(rsaKey.(*rsa.PrivateKey))) + "-----END RSA PRIVATE KEY-----\n", true},
		{"sec1", "-----BEGIN EC PRIVATE KEY-----\n" + b64(ecDER) + "-----END EC PRIVATE KEY-----\n", true},
		{"encrypted pkcs8", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n", false},
		{"no key", "hello", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".key")
			if err := os.WriteFile(p, []byte(tc.pem), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := readKeyFile(p)
			if (err == nil) != tc.ok {
				t.Fatalf("readKeyFile: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// Two processes starting on an empty directory at once end up with one CA.
func TestConcurrentFirstRunCreatesOneCA(t *testing.T) {
	cfg := testConfig(t, "")
	results := make(chan *Authority, 4)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			a, err := Open(cfg)
			if err != nil {
				errs <- err
				return
			}
			results <- a
		}()
	}
	var first []byte
	for range 4 {
		select {
		case err := <-errs:
			t.Fatal(err)
		case a := <-results:
			if first == nil {
				first = a.CACert().Raw
			} else if !bytes.Equal(first, a.CACert().Raw) {
				t.Fatal("two different CAs were created")
			}
		}
	}
	onDisk, _, err := readCertFile(filepath.Join(cfg.CertsDir, "ca.pem"))
	if err != nil || !bytes.Equal(onDisk.Raw, first) {
		t.Fatalf("ca.pem differs from the CA in memory (%v)", err)
	}
}
