package mgmt

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"outpost/appliance/access"
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

func TestRuleFor(t *testing.T) {
	a := New(Options{Channel: http.NotFoundHandler()})
	for p, want := range map[string]access.Rule{
		"/Alive": access.Public, "/Clients": access.AllowList, "/api/login": access.Public, "/socket.io/": access.Public,
		"/socket.io/x": access.Public, "/api/users": access.Admin, "/Alive/../DataPackageTable": access.Any,
		"/socket.io/../DataPackageTable": access.Any, "/AliveX": access.Any, "/": access.Any,
		"/ManageSystemUser/getSystemUser": access.Self,
	} {
		req := httptest.NewRequest("GET", p, nil)
		if got, _ := a.ruleFor(req); got != want {
			t.Errorf("ruleFor(%q) = %v, want %v", p, got, want)
		}
	}
	// Another method on a public path learns its 405 without a token.
	if got, routed := a.ruleFor(httptest.NewRequest("POST", "/Alive", nil)); got != access.Public || routed {
		t.Errorf("POST /Alive: %v %v", got, routed)
	}
}
