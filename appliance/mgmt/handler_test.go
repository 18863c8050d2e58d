package mgmt

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAliveAndUnknownPaths(t *testing.T) {
	srv := httptest.NewServer(NewHandler(Options{}))
	defer srv.Close()
	cases := []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/Alive", 200, "API is running"},
		{"POST", "/Alive", 405, `method POST not allowed on /Alive`},
		{"GET", "/NoSuchThing", 404, `"message":"no such endpoint: GET /NoSuchThing"`},
		{"DELETE", "/ManageSystemUser/nothing", 404, `no such endpoint`},
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
				t.Errorf("404 body is not JSON: %q", b)
			}
		}
	}
}
