package testkit

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Client is an HTTP client with a timeout, for tests.
var Client = &http.Client{Timeout: 30 * time.Second}

// Response is a finished HTTP exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v or fails the test.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("body is not the expected JSON (%v): %s", err, r.Body)
	}
}

// Message is the "message" of a {"message": ...} body ("" otherwise).
func (r Response) Message() string {
	var m struct {
		Message string `json:"message"`
	}
	json.Unmarshal(r.Body, &m)
	return m.Message
}

// Do sends a request with c (Client when nil). body may be nil, a []byte, a
// string, an io.Reader or any other value (sent as JSON). headers are
// name/value pairs.
func Do(t testing.TB, c *http.Client, method, url string, body any, headers ...string) Response {
	t.Helper()
	if c == nil {
		c = Client
	}
	var rd io.Reader
	isJSON := false
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = bytes.NewReader([]byte(b))
	case io.Reader:
		rd = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd, isJSON = bytes.NewReader(j), true
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if isJSON {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// InteropDir is where `make test` installs the npm clients of the interop
// tests (scripts/interop).
func InteropDir(t testing.TB) string {
	return filepath.Join(ModuleRoot(t), "scripts", "interop")
}

// RequireInterop skips unless the npm interop clients are installed; where
// tools are required (ToolsRequired) a missing install fails instead.
func RequireInterop(t testing.TB, module string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(InteropDir(t), "node_modules", module)); err != nil {
		MissingTool(t, "interop client "+module+" is not installed under scripts/interop")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node not found: %v", err)
	}
}
