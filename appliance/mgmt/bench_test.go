package mgmt

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outpost/appliance/store"
	"outpost/internal/testkit"
)

// benchAPI is the management API on a real store with one API user, one
// system user and a login token, plus a route that does nothing, so the
// benchmarks measure the middleware and the token lookup alone.
func benchAPI(b *testing.B) (a *API, tokens map[string]string) {
	b.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "outpost.db"), store.Options{Logger: testkit.Discard()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	api, err := st.Accounts().CreateAPIUser(ctx, "admin")
	if err != nil {
		b.Fatal(err)
	}
	u, err := st.Accounts().CreateUser(ctx, store.UserInput{Name: "kim", Password: "pw"})
	if err != nil {
		b.Fatal(err)
	}
	login, err := st.Accounts().CreateLoginToken(ctx, u.UID, time.Now().Add(time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	// Some bulk, so lookups are index lookups in tables that are not tiny.
	for i := range 200 {
		if _, err := st.Accounts().CreateAPIUser(ctx, fmt.Sprint("api-", i)); err != nil {
			b.Fatal(err)
		}
	}
	a = New(Options{Accounts: st.Accounts(), Logger: testkit.Discard()})
	a.mux.HandleFunc("GET /bench/noop", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return a, map[string]string{"api-user": api.Token, "system-user": u.Token, "login-token": login}
}

// BenchmarkTokenAuth: one authenticated request through the middleware
// (bearer parsing, limiter check, store.Authenticate) to a handler that does
// nothing. System users' calls are not included here: they add the audit
// write (see BenchmarkAuditedCall).
func BenchmarkTokenAuth(b *testing.B) {
	a, tokens := benchAPI(b)
	b.Run("api-user", func(b *testing.B) {
		req := httptest.NewRequest("GET", "/bench/noop", nil)
		req.Header.Set("Authorization", "Bearer "+tokens["api-user"])
		b.ReportAllocs()
		for b.Loop() {
			rec := httptest.NewRecorder()
			a.ServeHTTP(rec, req)
			if rec.Code != http.StatusNoContent {
				b.Fatalf("status %d", rec.Code)
			}
		}
	})
	b.Run("public-route-baseline", func(b *testing.B) {
		req := httptest.NewRequest("GET", "/Alive", nil)
		for b.Loop() {
			rec := httptest.NewRecorder()
			a.ServeHTTP(rec, req)
		}
	})
	b.Run("api-user-parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			req := httptest.NewRequest("GET", "/bench/noop", nil)
			req.Header.Set("Authorization", "Bearer "+tokens["api-user"])
			for pb.Next() {
				rec := httptest.NewRecorder()
				a.ServeHTTP(rec, req)
				if rec.Code != http.StatusNoContent {
					b.Errorf("status %d", rec.Code)
					return
				}
			}
		})
	})
}

// BenchmarkAuditedCall: a system user's (or login token's) call, which
// also writes its audit record (a committed write) before it completes.
func BenchmarkAuditedCall(b *testing.B) {
	a, tokens := benchAPI(b)
	for _, kind := range []string{"system-user", "login-token"} {
		b.Run(kind, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest("GET", "/bench/noop", strings.NewReader(""))
				req.Header.Set("Authorization", "Bearer "+tokens[kind])
				rec := httptest.NewRecorder()
				a.ServeHTTP(rec, req)
				if rec.Code != http.StatusNoContent {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
}
