package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"outpost/appliance/fault"
)

// A HandlerFunc's error is answered by Fail: a refusal as such (whatever
// Internal says), a fault of ours with the text Internal gave it, or the
// default text, and nil leaves the handler's own answer alone.
func TestHandlerFunc(t *testing.T) {
	errConflict := fault.New(fault.Conflict, "store: conflict")
	tests := []struct {
		name   string
		err    error
		status int
		msg    string
		logged bool
	}{
		{"answered", nil, 201, "made", false},
		{"refusal", fmt.Errorf("put: %w: name taken", errConflict), 409, "name taken", false},
		{"refusal with a text for 500", Internal(fmt.Errorf("put: %w: name taken", errConflict), "An error occurred."), 409, "name taken", false},
		{"ours with its text", Internal(io.ErrUnexpectedEOF, "An error occurred retrieving the map."), 500, "An error occurred retrieving the map.", true},
		{"outermost text wins", Internal(Internal(io.ErrUnexpectedEOF, "inner"), "outer"), 500, "outer", true},
		{"ours without a text", io.ErrUnexpectedEOF, 500, internalText, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			m := NewMux(slog.New(slog.NewTextHandler(&logs, nil)))
			m.Handle("GET /x", HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
				if tc.err != nil {
					return tc.err
				}
				WriteMessage(w, http.StatusCreated, "made")
				return nil
			}))
			rec := httptest.NewRecorder()
			m.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
			var body Message
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if rec.Code != tc.status || body.Message != tc.msg {
				t.Fatalf("answered %d %q, want %d %q", rec.Code, body.Message, tc.status, tc.msg)
			}
			if logged := strings.Contains(logs.String(), "request failed"); logged != tc.logged {
				t.Fatalf("logged %v, want %v: %s", logged, tc.logged, logs.String())
			}
		})
	}
	if Internal(nil, "x") != nil {
		t.Error("Internal(nil) is not nil")
	}
}
