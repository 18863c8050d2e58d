package marti_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"outpost/appliance/apptest"
	"outpost/appliance/config"
	"outpost/appliance/netx"
	"outpost/internal/testkit"
)

// both is the pair of listeners that serve the same client API.
var both = []string{netx.ListenerHTTP, netx.ListenerHTTPS}

// env is a running appliance and an HTTPS client holding the certificate
// of user "alice".
type env struct {
	*apptest.App
	cert  *tls.Certificate
	https *http.Client
}

func start(t *testing.T, mutate func(*config.Config)) *env {
	t.Helper()
	app := apptest.Start(t, mutate)
	cert := app.Issue(t, "alice")
	return &env{App: app, cert: cert, https: app.HTTPSClient(cert)}
}

// client is the HTTP client for a listener.
func (e *env) client(listener string) *http.Client {
	if listener == netx.ListenerHTTPS {
		return e.https
	}
	return testkit.Client
}

// do sends a request to a listener's path.
func (e *env) do(t *testing.T, listener, method, path string, body any, headers ...string) testkit.Response {
	t.Helper()
	return testkit.Do(t, e.client(listener), method, e.URL(t, listener, path), body, headers...)
}

// port is the bound port of a listener.
func (e *env) port(t *testing.T, listener string) string {
	t.Helper()
	addr := e.Addr(t, listener)
	return addr[strings.LastIndex(addr, ":")+1:]
}

// packages counts the stored data packages.
func (e *env) packages(t *testing.T) int {
	t.Helper()
	list, err := e.Store().Files().DataPackages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// multipartFile is a multipart/form-data body holding content in field.
func multipartFile(t testing.TB, field, name string, content []byte) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	mw.WriteField("note", "a field before the file")
	fw, err := mw.CreateFormFile(field, name)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(content)
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

// missionPackage is a small data package ZIP (protocol.md §9).
func missionPackage(t testing.TB, uid string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("MANIFEST/manifest.xml")
	io.WriteString(w, `<MissionPackageManifest version="2"><Configuration><Parameter name="uid" value="`+uid+
		`"/><Parameter name="name" value="`+uid+`"/></Configuration><Contents/></MissionPackageManifest>`)
	w, _ = zw.Create("notes.txt")
	io.WriteString(w, "package "+uid)
	zw.Close()
	return b.Bytes()
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// record is an enterprise sync record (api.md §2.9) decoded with numbers
// kept exact, so a PrimaryKey that is not an integer fails the test.
type record struct {
	UID                string
	Name               string
	Hash               string
	PrimaryKey         json.Number
	SubmissionDateTime string
	SubmissionUser     string
	CreatorUid         string
	Keywords           []string
	MIMEType           string
	Size               json.Number
	Tool               string
	Private            json.Number
}

func decodeRecord(t testing.TB, b []byte) record {
	t.Helper()
	var r record
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("not a sync record (%v): %s", err, b)
	}
	if _, err := strconv.ParseInt(string(r.PrimaryKey), 10, 64); err != nil {
		t.Fatalf("PrimaryKey %q is not an integer: %s", r.PrimaryKey, b)
	}
	return r
}
