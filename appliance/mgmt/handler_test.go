package mgmt

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPublicRoutesWithoutStore: the public routes answer without a token
// (and without a database); every other path needs one, even unknown ones.
func TestPublicRoutesWithoutStore(t *testing.T) {
	srv := httptest.NewServer(New(Options{}))
	defer srv.Close()
	cases := []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/Alive", 200, "API is running"},
		{"HEAD", "/Alive", 200, ""},
		{"POST", "/Alive", 405, `"message":"method POST not allowed on /Alive"`},
		{"GET", "/NoSuchThing", 401, `authentication required`},
		{"DELETE", "/ManageSystemUser/nothing", 401, `authentication required`},
		{"GET", "/ManageSystemUser/getAll", 401, `authentication required`},
		{"GET", "/Alive/../ManageSystemUser/getAll", 401, `authentication required`},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.body) {
			t.Errorf("%s %s = %d %q, want %d containing %q", tc.method, tc.path, resp.StatusCode, b, tc.status, tc.body)
		}
		if tc.status >= 400 {
			var m map[string]string
			if json.Unmarshal(b, &m) != nil || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s %s: error body is not JSON: %q", tc.method, tc.path, b)
			}
		}
	}
}

func TestIsPublic(t *testing.T) {
	a := New(Options{})
	a.handlePublic("GET /socket.io/", func(http.ResponseWriter, *http.Request) {})
	for p, want := range map[string]bool{
		"/Alive": true, "/Clients": true, "/api/login": true, "/socket.io/": true, "/socket.io/x": true, "/socket.io": true,
		"/Alive/": true, "/api/users": false, "/Alive/../DataPackageTable": false, "/socket.io/../DataPackageTable": false,
		"/AliveX": false, "/": false,
	} {
		if got := a.isPublic(p); got != want {
			t.Errorf("isPublic(%q) = %v, want %v", p, got, want)
		}
	}
}
