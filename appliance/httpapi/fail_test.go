package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"outpost/appliance/fault"
)

// Fail through a real Mux: the route's logger gets the internal faults, and
// every kind of failure a client can cause has its status.
func TestFail(t *testing.T) {
	errNotFound := fault.New(fault.NotFound, "store: not found")
	errInvalid := fault.New(fault.Invalid, "store: invalid input")
	errBusy := fault.New(fault.Busy, "store: busy")
	tests := []struct {
		name   string
		err    error
		status int
		msg    string
		logged bool
	}{
		{"handler refusal", BadRequest("latitude", "must be between -90 and 90"), 400, "latitude: must be between -90 and 90", false},
		{"store not found", fmt.Errorf("store: mission by name: %w: no mission %q", errNotFound, "m"), 404, `no mission "m"`, false},
		{"in a field", InField("DataPackages", fmt.Errorf("op: %w: name too long", errInvalid)), 400, "DataPackages: name too long", false},
		{"busy", fmt.Errorf("check: %w", errBusy), 429, "busy", false},
		{"ours", fmt.Errorf("commit: %w", io.ErrShortWrite), 500, "An error occurred retrieving geo object.", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			m := NewMux(slog.New(slog.NewTextHandler(&logs, nil)))
			m.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) {
				Fail(w, r, tc.err, "An error occurred retrieving geo object.")
			})
			rec := httptest.NewRecorder()
			m.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
			var body Message
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if rec.Code != tc.status || body.Message != tc.msg {
				t.Fatalf("answered %d %q, want %d %q", rec.Code, body.Message, tc.status, tc.msg)
			}
			if tc.status == 429 && rec.Header().Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
			logged := strings.Contains(logs.String(), "request failed")
			if logged != tc.logged {
				t.Fatalf("logged %v, want %v: %s", logged, tc.logged, logs.String())
			}
			if tc.logged && (!strings.Contains(logs.String(), "route=\"GET /x\"") || !strings.Contains(logs.String(), "short write")) {
				t.Errorf("the log line does not name the route and the error: %s", logs.String())
			}
			if strings.Contains(rec.Body.String(), "short write") {
				t.Error("an internal error's own words reached the client")
			}
		})
	}
}

// A client that went away is answered nothing and costs no error line.
func TestFailClientGone(t *testing.T) {
	var logs bytes.Buffer
	m := NewMux(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	m.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) {
		Fail(w, r, fmt.Errorf("read: %w", context.Canceled), "internal")
	})
	rec := httptest.NewRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil).WithContext(ctx))
	if rec.Body.Len() != 0 || logs.Len() != 0 {
		t.Fatalf("answered %q, logged %q", rec.Body, logs.String())
	}
}

func TestRefusal(t *testing.T) {
	if _, _, ok := Refusal(errors.New("disk I/O")); ok {
		t.Error("an internal error counted as a refusal")
	}
	status, msg, ok := Refusal(InField("id", fmt.Errorf("%w: user name taken", fault.New(fault.Conflict, "store: conflict"))))
	if !ok || status != 409 || msg != "id: user name taken" {
		t.Errorf("Refusal = %d %q %v", status, msg, ok)
	}
}
