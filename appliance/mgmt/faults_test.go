package mgmt

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/store"
	"outpost/internal/testkit"
)

// brokenHistory is a CoT history whose every read fails.
type brokenHistory struct{}

var errDiskOnFire = errors.New("history: disk on fire")

func (brokenHistory) LatestInBox(context.Context, float64, float64, float64, float64, int, uint64) ([]store.StoredEvent, error) {
	return nil, errDiskOnFire
}

func (brokenHistory) LatestEvent(context.Context, string, uint64) (store.StoredEvent, error) {
	return store.StoredEvent{}, errDiskOnFire
}

func (brokenHistory) RecentOfType(context.Context, string, time.Time, int, uint64) ([]store.StoredEvent, error) {
	return nil, errDiskOnFire
}

// TestFaultsThroughFail: a fault of ours on a route is answered by
// httpapi.Fail, the one edge: 500 with the route's text of api.md §7 (never
// the error's own words), and one log line naming the route and the error.
func TestFaultsThroughFail(t *testing.T) {
	logs := &testkit.Buffer{}
	a := New(Options{Events: brokenHistory{}, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	admin := access.Principal{Kind: access.APIUser, Name: "ops", In: store.AllGroups, Out: store.AllGroups}
	for _, tc := range []struct {
		method, path, body string
		route, msg         string
	}{
		{"GET", "/api/map", "", "GET /api/map", "An error occurred retrieving the map."},
		{"GET", "/api/map/event?uid=u-1", "", "GET /api/map/event", "An error occurred retrieving the map."},
		// No accounts store: a fault of ours, not the caller's.
		{"POST", "/api/login", `{"username":"kim","password":"pw"}`, "POST /api/login", usersError},
	} {
		t.Run(tc.route, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			req = req.WithContext(access.With(req.Context(), admin))
			rec := httptest.NewRecorder()
			a.mux.ServeHTTP(rec, req)
			var body struct{ Message string }
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusInternalServerError ||
				body.Message != tc.msg || rec.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("%s %s = %d %q (%v), want 500 {\"message\": %q}", tc.method, tc.path, rec.Code, rec.Body, err, tc.msg)
			}
			if !strings.Contains(logs.String(), "route=\""+tc.route+"\"") {
				t.Errorf("no log line names the route %q:\n%s", tc.route, logs)
			}
		})
	}
	if strings.Count(logs.String(), "request failed") != 3 || strings.Count(logs.String(), errDiskOnFire.Error()) != 2 {
		t.Errorf("want one error line per failed request, two with the history's error:\n%s", logs)
	}
}

// TestTokenCheckFault: a bearer token that cannot be checked (the store
// fails) is a fault of ours before any route runs: 500 with the users' text
// through httpapi.Fail, logged to the API's own logger.
func TestTokenCheckFault(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir()+"/outpost.db", store.Options{Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	st.Close() // every read fails from now on
	logs := &testkit.Buffer{}
	a := New(Options{Directory: &access.Directory{Accounts: st.Accounts()}, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	req := httptest.NewRequest("GET", "/api/whoami", nil)
	req.Header.Set("Authorization", "Bearer some-token")
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, req)
	var body struct{ Message string }
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusInternalServerError || body.Message != usersError {
		t.Fatalf("GET /api/whoami with a token the store cannot check = %d %q, want 500 %q", rec.Code, rec.Body, usersError)
	}
	if !strings.Contains(logs.String(), "request failed") || !strings.Contains(logs.String(), "bearer token could not be checked") {
		t.Fatalf("not logged to the API's logger: %s", logs)
	}
}
