package pki

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Device is a TAK client family; it decides the connection package layout.
type Device string

// The three client families.
const (
	DeviceATAK   Device = "atak"
	DeviceITAK   Device = "itak"
	DeviceWinTAK Device = "wintak"
)

// ParseDevice reads a device name case-insensitively. api.md §2.1's device_type
// values map too: "mobile" is ATAK, "desktop" is WinTAK (api.md: "wintak"
// is accepted as the desktop value).
func ParseDevice(s string) (Device, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "atak", "mobile", "android":
		return DeviceATAK, nil
	case "itak", "ios":
		return DeviceITAK, nil
	case "wintak", "desktop", "windows":
		return DeviceWinTAK, nil
	}
	return "", fmt.Errorf("unknown device type %q (want atak, itak, wintak, mobile or desktop)", s)
}

// Package layouts - sources of fact (facts only, nothing copied):
//
//   - ATAK-CIV source, as summarised from PreferenceControl, ImportPrefSort and
//     ImportCertResolver: a .pref needs "<preferences" and "<entry key"; every
//     .p12 of an imported package is copied into <atak root>/cert/, so
//     caLocation and certificateLocation are written as "cert/<file>.p12";
//     cot_streams is read per connection with indexed keys (connectString0,
//     caLocation0, caPassword0, certificateLocation0, clientPassword0,
//     enrollForCertificateWithTrust0, useAuth0, cacheCreds0, ...) and the
//     un-indexed caLocation/caPassword/certificateLocation/clientPassword of
//     com.atakmap.app_preferences set the default certificates; both forms are
//     written so either import path finds them. The manifest is
//     MANIFEST/manifest.xml, root MissionPackageManifest version="2" with
//     Configuration/Parameter (uid and name required) and Contents/Content
//     zipEntry. apiCertEnrollmentPort (a String) overrides the enrollment port.
//   - Public package builders for TAK Server and its alternatives (the myTeckNet
//     data-package guide as restated in joshuafuller/qrtak docs/data-packages.md,
//     tkuester/taky build_client): the certs/ folder for the pref and .p12
//     files; iTAK takes a flat ZIP (config.pref and the .p12 files at the root,
//     still referenced as cert/<file>.p12); enrollment packages set
//     enrollForCertificateWithTrust0, useAuth0 and cacheCreds0 "Cache
//     credentials" beside caLocation0/caPassword0.
//   - WinTAK imports the same mission-package layout as ATAK (it reads the same
//     manifest and .pref keys). It copies every truststore into one folder
//     (%AppData%\WinTAK\SslCerts) and fails when two servers' files share a
//     name (tkuester/taky issue #39), so both .p12 names carry the server
//     name. FreeTAKServer nests a second ZIP inside its WinTAK package; nothing
//     public says current WinTAK needs that, so we do not.
//   - protocol.md §9 (project notes): truststore holds the CA only, never a key.

const (
	classString = "class java.lang.String"
	classBool   = "class java.lang.Boolean"
	classInt    = "class java.lang.Integer"
)

// packageTime is the fixed modification time of every ZIP entry, so packages
// differ only where certificates differ.
var packageTime = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

type prefEntry struct {
	Key   string `xml:"key,attr"` // first attribute: ATAK sniffs for "<entry key"
	Class string `xml:"class,attr"`
	Value string `xml:",chardata"`
}

type prefGroup struct {
	Version string      `xml:"version,attr"`
	Name    string      `xml:"name,attr"`
	Entries []prefEntry `xml:"entry"`
}

type prefDoc struct {
	XMLName xml.Name    `xml:"preferences"`
	Groups  []prefGroup `xml:"preference"`
}

type manifestParam struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type manifestContent struct {
	Ignore   string `xml:"ignore,attr"`
	ZipEntry string `xml:"zipEntry,attr"`
}

type manifestDoc struct {
	XMLName  xml.Name          `xml:"MissionPackageManifest"`
	Version  string            `xml:"version,attr"`
	Params   []manifestParam   `xml:"Configuration>Parameter"`
	Contents []manifestContent `xml:"Contents>Content"`
}

func str(k, v string) prefEntry { return prefEntry{k, classString, v} }
func boolean(k string, v bool) prefEntry {
	return prefEntry{k, classBool, strconv.FormatBool(v)}
}

func marshalXML(v any) ([]byte, error) {
	body, err := xml.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("<?xml version='1.0' encoding='UTF-8' standalone='yes'?>\n")
	b.Write(body)
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// connectHost returns the host for connect strings (protocol.md §9: host:port:ssl).
func (a *Authority) connectHost() (string, error) {
	h := a.cfg.PublicHost
	if h == "" {
		return "", errors.New("package: no public host configured (Config.PublicHost or SANs)")
	}
	if strings.Contains(h, ":") {
		return "", fmt.Errorf("package: public host %q is an IPv6 address; TAK connect strings are host:port:proto and cannot carry one, use a DNS name", h)
	}
	if net.ParseIP(h) == nil && !validHostname(h) {
		return "", fmt.Errorf("package: public host %q is not a host name or IPv4 address", h)
	}
	return h, nil
}

// ConnectHost is the host clients are told to reach (PublicHost) as it
// appears in connect strings and enrollment codes; an error when none is
// configured or it cannot be written there (an IPv6 address).
func (a *Authority) ConnectHost() (string, error) { return a.connectHost() }

// pkgSpec is what the three layouts are built from.
type pkgSpec struct {
	device    Device
	filename  string // the ZIP's own name
	packageID string // seed for the manifest uid
	prefBase  string // .pref name in MANIFEST layouts (iTAK uses config.pref)
	streams   []prefEntry
	app       []prefEntry
	p12s      []zipFile // truststore first
}

type zipFile struct {
	name string
	data []byte
}

// ClientPackage builds the connection package for a client certificate: the
// connection preferences, the CA truststore and the client's own .p12.
func (a *Authority) ClientPackage(cc *ClientCert, d Device) (filename string, zipData []byte, err error) {
	if cc == nil || cc.Cert == nil || len(cc.P12) == 0 {
		return "", nil, errors.New("package: no client certificate")
	}
	if err := validCommonName(cc.Name); err != nil {
		return "", nil, fmt.Errorf("package: %w", err)
	}
	b, err := a.packageBase(d)
	if err != nil {
		return "", nil, err
	}
	server, tsFile, pw := b.server, b.tsFile, a.cfg.Password
	clientFile := fileToken(cc.Name) + "-" + server + ".p12"
	streams := b.stream0()
	if d != DeviceITAK {
		streams = append(streams,
			str("caLocation0", "cert/"+tsFile), str("caPassword0", pw),
			str("certificateLocation0", "cert/"+clientFile), str("clientPassword0", pw))
	}
	spec := pkgSpec{
		device:    d,
		filename:  fmt.Sprintf("%s_%s_%s.zip", server, fileToken(cc.Name), d),
		packageID: "client|" + cc.Name,
		prefBase:  fileToken(cc.Name) + ".pref",
		streams:   streams,
		app: append([]prefEntry{
			boolean("displayServerConnectionWidget", true),
			str("caLocation", "cert/"+tsFile), str("caPassword", pw),
			str("certificateLocation", "cert/"+clientFile), str("clientPassword", pw),
		}, b.apiPorts()...),
		p12s: []zipFile{{tsFile, b.truststore}, {clientFile, cc.P12}},
	}
	data, err := a.buildPackage(spec)
	if err != nil {
		return "", nil, err
	}
	return spec.filename, data, nil
}

// EnrollmentPackage builds a package without a client certificate: the CA
// truststore and a connection that enrolls for a certificate with the user's
// name and password (protocol.md §8) on the enrollment port.
func (a *Authority) EnrollmentPackage(d Device) (filename string, zipData []byte, err error) {
	b, err := a.packageBase(d)
	if err != nil {
		return "", nil, err
	}
	server, tsFile, pw := b.server, b.tsFile, a.cfg.Password
	spec := pkgSpec{
		device:    d,
		filename:  fmt.Sprintf("%s_%s_enrollment.zip", server, d),
		packageID: "enrollment",
		prefBase:  server + ".pref",
		streams: append(b.stream0(),
			str("caLocation0", "cert/"+tsFile), str("caPassword0", pw),
			boolean("enrollForCertificateWithTrust0", true),
			boolean("useAuth0", true),
			str("cacheCreds0", "Cache credentials"),
		),
		app: append([]prefEntry{
			boolean("displayServerConnectionWidget", true),
			str("caLocation", "cert/"+tsFile), str("caPassword", pw),
		}, b.apiPorts()...),
		p12s: []zipFile{{tsFile, b.truststore}},
	}
	data, err := a.buildPackage(spec)
	if err != nil {
		return "", nil, err
	}
	return spec.filename, data, nil
}

// packageBase is what every connection package of this server shares.
type packageBase struct {
	host       string // connect string host
	ports      Ports
	name       string // server name, as shown on the device
	server     string // server name made file-safe
	tsFile     string // truststore file name
	truststore []byte // truststore PKCS#12 (CA certificate only)
}

func (a *Authority) packageBase(d Device) (packageBase, error) {
	if _, err := ParseDevice(string(d)); err != nil {
		return packageBase{}, fmt.Errorf("package: %w", err)
	}
	host, err := a.connectHost()
	if err != nil {
		return packageBase{}, err
	}
	ts, err := a.TrustStoreP12()
	if err != nil {
		return packageBase{}, err
	}
	return packageBase{
		host: host, ports: a.Ports(), name: a.cfg.ServerName,
		server: fileToken(a.cfg.ServerName), tsFile: a.TrustStoreName() + ".p12", truststore: ts,
	}, nil
}

// stream0 is the first cot_streams connection: this server over TLS.
func (b packageBase) stream0() []prefEntry {
	return []prefEntry{
		{"count", classInt, "1"},
		str("description0", b.name),
		boolean("enabled0", true),
		str("connectString0", fmt.Sprintf("%s:%d:ssl", b.host, b.ports.SSLCoT)),
	}
}

// apiPorts name the client API's HTTPS port and the enrollment port, so a
// server off the default ports needs no hand configuration on the device.
func (b packageBase) apiPorts() []prefEntry {
	return []prefEntry{
		str("apiSecureServerPort", strconv.Itoa(b.ports.HTTPS)),
		str("apiCertEnrollmentPort", strconv.Itoa(b.ports.Enroll)),
	}
}

// buildPackage lays the files out for the device and writes the ZIP.
func (a *Authority) buildPackage(s pkgSpec) ([]byte, error) {
	pref, err := marshalXML(prefDoc{Groups: []prefGroup{
		{Version: "1", Name: "cot_streams", Entries: s.streams},
		{Version: "1", Name: "com.atakmap.app_preferences", Entries: s.app},
	}})
	if err != nil {
		return nil, fmt.Errorf("package: encode preferences: %w", err)
	}
	var files []zipFile
	if s.device == DeviceITAK {
		// iTAK: flat ZIP, config.pref and the .p12 files at the root (protocol.md §9).
		files = append(files, zipFile{"config.pref", pref})
		files = append(files, s.p12s...)
	} else {
		// ATAK and WinTAK: mission package, MANIFEST/manifest.xml listing
		// every other entry (protocol.md §9).
		files = append(files, zipFile{"certs/" + s.prefBase, pref})
		for _, p := range s.p12s {
			files = append(files, zipFile{"certs/" + p.name, p.data})
		}
		man := manifestDoc{
			Version: "2",
			Params: []manifestParam{
				{"uid", a.packageUID(s.packageID, s.device)},
				{"name", strings.TrimSuffix(s.filename, ".zip")},
				// Import on receipt when the package arrives over the
				// network (sent as a mission package), delete after import.
				{"onReceiveImport", "true"},
				{"onReceiveDelete", "true"},
			},
		}
		for _, f := range files {
			man.Contents = append(man.Contents, manifestContent{Ignore: "false", ZipEntry: f.name})
		}
		mdata, err := marshalXML(man)
		if err != nil {
			return nil, fmt.Errorf("package: encode manifest: %w", err)
		}
		files = append([]zipFile{{"MANIFEST/manifest.xml", mdata}}, files...)
	}
	return writeZip(files)
}

// packageUID derives a stable UUID-shaped uid, so re-issuing a user's package
// replaces the old one on the device instead of adding a second copy.
func (a *Authority) packageUID(id string, d Device) string {
	sum := sha256.Sum256([]byte("outpost-package\x00" + a.cfg.ServerName + "\x00" + a.cfg.PublicHost + "\x00" + id + "\x00" + string(d)))
	u := sum[:16]
	u[6] = u[6]&0x0f | 0x50 // version 5 (name-based)
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

func writeZip(files []zipFile) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: packageTime}
		h.SetMode(0o644)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, fmt.Errorf("package: %w", err)
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, fmt.Errorf("package: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("package: %w", err)
	}
	return buf.Bytes(), nil
}
