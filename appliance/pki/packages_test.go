package pki

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"

	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

type unzipped map[string][]byte

func unzip(t *testing.T, data []byte) (unzipped, []string) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("not a ZIP: %v", err)
	}
	out := unzipped{}
	var order []string
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = b
		order = append(order, f.Name)
	}
	return out, order
}

type parsedPref map[string]map[string][2]string // group -> key -> {class, value}

func parsePref(t *testing.T, data []byte) parsedPref {
	t.Helper()
	if !bytes.Contains(data, []byte("<preferences")) || !bytes.Contains(data, []byte("<entry key")) {
		t.Fatalf("ATAK's .pref sniffing would not recognise:\n%s", data)
	}
	var doc prefDoc
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("pref is not well-formed XML: %v\n%s", err, data)
	}
	out := parsedPref{}
	for _, g := range doc.Groups {
		if g.Version != "1" {
			t.Errorf("preference %q version %q", g.Name, g.Version)
		}
		m := map[string][2]string{}
		for _, e := range g.Entries {
			m[e.Key] = [2]string{e.Class, e.Value}
		}
		out[g.Name] = m
	}
	return out
}

func (p parsedPref) want(t *testing.T, group, key, class, value string) {
	t.Helper()
	got, ok := p[group][key]
	if !ok {
		t.Errorf("%s/%s missing", group, key)
		return
	}
	if got[0] != class || got[1] != value {
		t.Errorf("%s/%s = (%s) %q, want (%s) %q", group, key, got[0], got[1], class, value)
	}
}

// opensslOpens runs `openssl pkcs12 -info -noout` (OpenSSL 3, no -legacy) and
// returns its combined output.
func opensslOpens(t *testing.T, p12 []byte, password string) string {
	t.Helper()
	bin, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed")
	}
	f := path.Join(t.TempDir(), "x.p12")
	if err := os.WriteFile(f, p12, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "pkcs12", "-info", "-noout", "-in", f, "-passin", "pass:"+password).CombinedOutput()
	if err != nil {
		t.Fatalf("openssl pkcs12 -info failed: %v\n%s", err, out)
	}
	return string(out)
}

func checkTrustStore(t *testing.T, a *Authority, data []byte) {
	t.Helper()
	certs, err := pkcs12.DecodeTrustStore(data, testPassword) // fails on any key bag
	if err != nil {
		t.Fatalf("truststore: %v", err)
	}
	if len(certs) != 1 || !bytes.Equal(certs[0].Raw, a.CACert().Raw) {
		t.Fatalf("truststore holds %d certificates, want only the CA", len(certs))
	}
	out := opensslOpens(t, data, testPassword)
	if strings.Contains(out, "Keybag") || strings.Contains(out, "Key bag") {
		t.Fatalf("truststore holds a private key:\n%s", out)
	}
	if !strings.Contains(out, "Certificate bag") || !strings.Contains(out, "TripleDES") {
		t.Errorf("unexpected truststore layout:\n%s", out)
	}
}

func checkClientP12(t *testing.T, a *Authority, data []byte, name string) {
	t.Helper()
	key, cert, cas, err := pkcs12.DecodeChain(data, testPassword)
	if err != nil {
		t.Fatalf("client p12: %v", err)
	}
	if key == nil || cert.Subject.CommonName != name || len(cas) != 1 || !bytes.Equal(cas[0].Raw, a.CACert().Raw) {
		t.Fatalf("client p12: key %T, CN %q, %d CAs", key, cert.Subject.CommonName, len(cas))
	}
	out := opensslOpens(t, data, testPassword)
	if !strings.Contains(out, "Shrouded Keybag") {
		t.Errorf("client p12 has no key bag:\n%s", out)
	}
	// The key's entry carries the user's name (what the device shows).
	blocks, err := pkcs12.ToPEM(data, testPassword)
	if err != nil {
		t.Fatalf("client p12 bags: %v", err)
	}
	keyNamed := false
	for _, b := range blocks {
		if b.Type == "PRIVATE KEY" && b.Headers["friendlyName"] == name && b.Headers["localKeyId"] != "" {
			keyNamed = true
		}
	}
	if !keyNamed {
		t.Errorf("the client key bag has no friendlyName %q", name)
	}
	if strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._-") != "" {
		return // openssl prints non-ASCII names its own way
	}
	keyOut, err := exec.Command("openssl", "pkcs12", "-nocerts", "-nodes", "-passin", "pass:"+testPassword, "-in", writeTemp(t, data)).CombinedOutput()
	if err != nil {
		t.Fatalf("openssl pkcs12 -nocerts: %v\n%s", err, keyOut)
	}
	if !strings.Contains(string(keyOut), "friendlyName: "+name) || !strings.Contains(string(keyOut), "localKeyID:") {
		t.Errorf("client key bag attributes lack friendlyName %q:\n%s", name, keyOut)
	}
}

// TestPackagesNamePorts: a server off the default ports says so in every
// package, and SetPorts (ports learned on binding) is what packages carry.
func TestPackagesNamePorts(t *testing.T) {
	cfg := testConfig(t, "")
	cfg.SSLCoTPort, cfg.HTTPSPort, cfg.EnrollPort = 9089, 9443, 9446
	a := openTest(t, cfg)
	cc := issue(t, a, "ports")
	check := func(ssl, https, enroll string) {
		t.Helper()
		for _, build := range []func() ([]byte, error){
			func() ([]byte, error) { _, z, err := a.ClientPackage(cc, DeviceATAK); return z, err },
			func() ([]byte, error) { _, z, err := a.EnrollmentPackage(DeviceWinTAK); return z, err },
			func() ([]byte, error) { _, z, err := a.ClientPackage(cc, DeviceITAK); return z, err },
		} {
			z, err := build()
			if err != nil {
				t.Fatal(err)
			}
			files, _ := unzip(t, z)
			for name, b := range files {
				if !strings.HasSuffix(name, ".pref") {
					continue
				}
				p := parsePref(t, b)
				p.want(t, "cot_streams", "connectString0", classString, testHost+":"+ssl+":ssl")
				p.want(t, "com.atakmap.app_preferences", "apiSecureServerPort", classString, https)
				p.want(t, "com.atakmap.app_preferences", "apiCertEnrollmentPort", classString, enroll)
			}
		}
	}
	check("9089", "9443", "9446")
	if err := a.SetPorts(Ports{HTTPS: 40443}); err != nil {
		t.Fatal(err)
	}
	check("9089", "40443", "9446")
	if err := a.SetPorts(Ports{SSLCoT: 70000}); err == nil {
		t.Fatal("SetPorts accepted port 70000")
	}
	if a.Ports() != (Ports{9089, 40443, 9446}) {
		t.Fatalf("a refused SetPorts changed the ports: %+v", a.Ports())
	}
}

// TestTrustStoreNamesDiffer: two authorities left on the default server name
// ship differently named truststores (WinTAK keeps them in one folder).
func TestTrustStoreNamesDiffer(t *testing.T) {
	c1, c2 := testConfig(t, ""), testConfig(t, "")
	c1.ServerName, c2.ServerName = "", ""
	a1, a2 := openTest(t, c1), openTest(t, c2)
	n1, n2 := a1.TrustStoreName(), a2.TrustStoreName()
	if n1 == n2 || !strings.HasPrefix(n1, "truststore-outpost-") || len(n1) != len("truststore-outpost-")+8 {
		t.Fatalf("truststore names %q and %q", n1, n2)
	}
}

// TestFriendlyNameKeepsMAC: the rewritten file verifies with the password and
// not with another one, and a non-BMP name is refused.
func TestFriendlyNameKeepsMAC(t *testing.T) {
	a := newTestAuthority(t)
	cc := issue(t, a, "Zoë Ops")
	if _, _, _, err := pkcs12.DecodeChain(cc.P12, "wrong"); err == nil {
		t.Fatal("the rewritten PKCS#12 opens with a wrong password")
	}
	checkClientP12(t, a, cc.P12, "Zoë Ops")
	if _, err := withKeyFriendlyName(cc.P12, testPassword, "emoji \U0001F600"); err == nil {
		t.Fatal("a name outside the BMP was accepted")
	}
	if _, err := withKeyFriendlyName([]byte("not asn.1"), testPassword, "x"); err == nil {
		t.Fatal("garbage accepted")
	}
}

func TestClientAndEnrollmentPackages(t *testing.T) {
	a := newTestAuthority(t)
	cc := issue(t, a, "alice smith")
	ts := a.TrustStoreName() + ".p12"
	clientP12 := "alice_smith-outpost-test.p12"
	const connect = testHost + ":8089:ssl"

	tests := []struct {
		name      string
		device    Device
		enroll    bool
		wantFile  string
		wantFiles []string // in ZIP order
	}{
		{"atak client", DeviceATAK, false, "outpost-test_alice_smith_atak.zip",
			[]string{"MANIFEST/manifest.xml", "certs/alice_smith.pref", "certs/" + ts, "certs/" + clientP12}},
		{"wintak client", DeviceWinTAK, false, "outpost-test_alice_smith_wintak.zip",
			[]string{"MANIFEST/manifest.xml", "certs/alice_smith.pref", "certs/" + ts, "certs/" + clientP12}},
		{"itak client", DeviceITAK, false, "outpost-test_alice_smith_itak.zip",
			[]string{"config.pref", ts, clientP12}},
		{"atak enrollment", DeviceATAK, true, "outpost-test_atak_enrollment.zip",
			[]string{"MANIFEST/manifest.xml", "certs/outpost-test.pref", "certs/" + ts}},
		{"wintak enrollment", DeviceWinTAK, true, "outpost-test_wintak_enrollment.zip",
			[]string{"MANIFEST/manifest.xml", "certs/outpost-test.pref", "certs/" + ts}},
		{"itak enrollment", DeviceITAK, true, "outpost-test_itak_enrollment.zip",
			[]string{"config.pref", ts}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var (
				fn   string
				data []byte
				err  error
			)
			if tc.enroll {
				fn, data, err = a.EnrollmentPackage(tc.device)
			} else {
				fn, data, err = a.ClientPackage(cc, tc.device)
			}
			if err != nil {
				t.Fatal(err)
			}
			if fn != tc.wantFile {
				t.Errorf("file name %q, want %q", fn, tc.wantFile)
			}
			files, order := unzip(t, data)
			if !slices.Equal(order, tc.wantFiles) {
				t.Fatalf("entries %q, want %q", order, tc.wantFiles)
			}
			for n := range files {
				if strings.HasPrefix(n, "server") || strings.Contains(n, "..") {
					t.Errorf("unexpected entry %q", n)
				}
			}

			if man, ok := files["MANIFEST/manifest.xml"]; ok {
				var doc manifestDoc
				if err := xml.Unmarshal(man, &doc); err != nil {
					t.Fatalf("manifest: %v", err)
				}
				if doc.Version != "2" || !bytes.Contains(man, []byte("<MissionPackageManifest")) {
					t.Errorf("manifest version %q", doc.Version)
				}
				params := map[string]string{}
				for _, p := range doc.Params {
					params[p.Name] = p.Value
				}
				if len(params["uid"]) != 36 || params["name"] != strings.TrimSuffix(fn, ".zip") ||
					params["onReceiveImport"] != "true" || params["onReceiveDelete"] != "true" {
					t.Errorf("manifest parameters %v", params)
				}
				var listed []string
				for _, c := range doc.Contents {
					if c.Ignore != "false" {
						t.Errorf("content %q ignore=%q", c.ZipEntry, c.Ignore)
					}
					listed = append(listed, c.ZipEntry)
				}
				if !slices.Equal(listed, tc.wantFiles[1:]) {
					t.Errorf("manifest lists %q, want %q", listed, tc.wantFiles[1:])
				}
			}

			prefName := tc.wantFiles[1]
			if tc.device == DeviceITAK {
				prefName = "config.pref"
			}
			p := parsePref(t, files[prefName])
			p.want(t, "cot_streams", "count", classInt, "1")
			p.want(t, "cot_streams", "description0", classString, "outpost-test")
			p.want(t, "cot_streams", "enabled0", classBool, "true")
			p.want(t, "cot_streams", "connectString0", classString, connect)
			const app = "com.atakmap.app_preferences"
			p.want(t, app, "displayServerConnectionWidget", classBool, "true")
			p.want(t, app, "caLocation", classString, "cert/"+ts)
			p.want(t, app, "caPassword", classString, testPassword)
			p.want(t, app, "apiSecureServerPort", classString, "8443")
			p.want(t, app, "apiCertEnrollmentPort", classString, "8446")
			if tc.enroll {
				p.want(t, "cot_streams", "caLocation0", classString, "cert/"+ts)
				p.want(t, "cot_streams", "caPassword0", classString, testPassword)
				p.want(t, "cot_streams", "enrollForCertificateWithTrust0", classBool, "true")
				p.want(t, "cot_streams", "useAuth0", classBool, "true")
				p.want(t, "cot_streams", "cacheCreds0", classString, "Cache credentials")
				if _, ok := p[app]["certificateLocation"]; ok {
					t.Error("enrollment package names a client certificate")
				}
			} else {
				p.want(t, app, "certificateLocation", classString, "cert/"+clientP12)
				p.want(t, app, "clientPassword", classString, testPassword)
				if tc.device != DeviceITAK {
					p.want(t, "cot_streams", "certificateLocation0", classString, "cert/"+clientP12)
					p.want(t, "cot_streams", "caLocation0", classString, "cert/"+ts)
				}
			}

			dir := "certs/"
			if tc.device == DeviceITAK {
				dir = ""
			}
			checkTrustStore(t, a, files[dir+ts])
			if !tc.enroll {
				checkClientP12(t, a, files[dir+clientP12], "alice smith")
			}
		})
	}
}

func TestPackagesAreDeterministicExceptCerts(t *testing.T) {
	a := newTestAuthority(t)
	cc := issue(t, a, "frank")
	for _, d := range []Device{DeviceATAK, DeviceITAK, DeviceWinTAK} {
		_, z1, err1 := a.ClientPackage(cc, d)
		_, z2, err2 := a.ClientPackage(cc, d)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		f1, _ := unzip(t, z1)
		f2, _ := unzip(t, z2)
		for name, b := range f1 {
			if strings.HasSuffix(name, ".p12") {
				continue
			}
			if !bytes.Equal(b, f2[name]) {
				t.Errorf("%s: %s differs between two builds", d, name)
			}
		}
	}
	_, atak, _ := a.ClientPackage(cc, DeviceATAK)
	_, wintak, _ := a.ClientPackage(cc, DeviceWinTAK)
	m1, _ := unzip(t, atak)
	m2, _ := unzip(t, wintak)
	if bytes.Equal(m1["MANIFEST/manifest.xml"], m2["MANIFEST/manifest.xml"]) {
		t.Error("ATAK and WinTAK packages share a manifest uid")
	}
}

func TestPackageEscapesNames(t *testing.T) {
	cfg := testConfig(t, "")
	cfg.ServerName = `Ops & "Recon" <HQ>`
	a := openTest(t, cfg)
	sum := sha256.Sum256(a.CACert().Raw)
	if got := a.TrustStoreName(); got != "truststore-Ops____Recon___HQ_-"+hex.EncodeToString(sum[:4]) {
		t.Errorf("TrustStoreName = %q", got)
	}
	_, data, err := a.EnrollmentPackage(DeviceATAK)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := unzip(t, data)
	for name, b := range files {
		if strings.HasSuffix(name, ".pref") {
			parsePref(t, b).want(t, "cot_streams", "description0", classString, cfg.ServerName)
		}
		if strings.HasSuffix(name, ".xml") {
			var doc manifestDoc
			if err := xml.Unmarshal(b, &doc); err != nil {
				t.Fatalf("manifest not well-formed: %v", err)
			}
		}
	}
}

func TestPackageErrors(t *testing.T) {
	a := newTestAuthority(t)
	cc := issue(t, a, "gina")
	v6 := testConfig(t, "")
	v6.PublicHost = "2001:db8::1"
	a6 := openTest(t, v6)
	tests := []struct {
		name string
		run  func() error
	}{
		{"unknown device", func() error { _, _, err := a.ClientPackage(cc, Device("blackberry")); return err }},
		{"nil certificate", func() error { _, _, err := a.ClientPackage(nil, DeviceATAK); return err }},
		{"IPv6 public host", func() error { _, _, err := a6.EnrollmentPackage(DeviceATAK); return err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.run() == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestKeyStoreP12ForEnrollment(t *testing.T) {
	a := newTestAuthority(t)
	cc := issue(t, a, "henry")
	ks, err := a.KeyStoreP12(cc.Cert, "atakatak")
	if err != nil {
		t.Fatal(err)
	}
	certs, err := pkcs12.DecodeTrustStore(ks, "atakatak") // also proves there is no key bag
	if err != nil {
		t.Fatal(err)
	}
	if len(certs) != 2 || !bytes.Equal(certs[0].Raw, cc.Cert.Raw) || !bytes.Equal(certs[1].Raw, a.CACert().Raw) {
		t.Fatalf("keystore holds %d certificates", len(certs))
	}
	opensslOpens(t, ks, "atakatak")
	out, err := exec.Command("openssl", "pkcs12", "-nokeys", "-passin", "pass:atakatak", "-in", writeTemp(t, ks)).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, alias := range []string{"friendlyName: signedCert", "friendlyName: ca0"} {
		if !strings.Contains(string(out), alias) {
			t.Errorf("keystore lacks %q:\n%s", alias, out)
		}
	}
}

func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	f := path.Join(t.TempDir(), "f")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestParseDevice(t *testing.T) {
	tests := []struct {
		in   string
		want Device
		ok   bool
	}{
		{"atak", DeviceATAK, true}, {"ATAK", DeviceATAK, true}, {"mobile", DeviceATAK, true},
		{" iTAK ", DeviceITAK, true}, {"wintak", DeviceWinTAK, true}, {"WinTAK", DeviceWinTAK, true},
		{"desktop", DeviceWinTAK, true}, {"", "", false}, {"palm", "", false},
	}
	for _, tc := range tests {
		got, err := ParseDevice(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseDevice(%q) = %q, %v", tc.in, got, err)
		}
	}
}

// TestTwoAppliancesPackagesSideBySide: the packages of two appliances, both
// on the default server name, unzipped into one folder (what WinTAK does
// with every truststore it imports) keep both truststores, each holding its
// own appliance's CA.
func TestTwoAppliancesPackagesSideBySide(t *testing.T) {
	c1, c2 := testConfig(t, ""), testConfig(t, "")
	c1.ServerName, c2.ServerName = "", ""
	apps := []*Authority{openTest(t, c1), openTest(t, c2)}
	for _, d := range []Device{DeviceATAK, DeviceITAK, DeviceWinTAK} {
		folder := map[string][]byte{}
		for _, a := range apps {
			_, z, err := a.EnrollmentPackage(d)
			if err != nil {
				t.Fatal(err)
			}
			files, _ := unzip(t, z)
			for name, data := range files {
				if strings.HasPrefix(path.Base(name), "truststore-") {
					folder[path.Base(name)] = data
				}
			}
		}
		if len(folder) != 2 {
			t.Fatalf("%s: %d truststores side by side, want 2: %v", d, len(folder), slices.Collect(maps.Keys(folder)))
		}
		for _, a := range apps {
			data, ok := folder[a.TrustStoreName()+".p12"]
			if !ok {
				t.Fatalf("%s: %s was overwritten", d, a.TrustStoreName())
			}
			certs, err := pkcs12.DecodeTrustStore(data, testPassword)
			if err != nil || len(certs) != 1 || !certs[0].Equal(a.CACert()) {
				t.Fatalf("%s: %s holds another CA (%v)", d, a.TrustStoreName(), err)
			}
		}
	}
}
