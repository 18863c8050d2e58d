package mgmt

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"outpost/appliance/store"
	"outpost/internal/testkit"
)

// TestPrune: audit records older than AuditRetention and expired login
// tokens go; recent ones stay; retention 0 keeps audit records forever.
func TestPrune(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "outpost.db"), store.Options{Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, age := range []time.Duration{100 * 24 * time.Hour, 89 * 24 * time.Hour, time.Hour} {
		if err := st.Accounts().AddAudit(ctx, store.AuditEntry{At: now.Add(-age), UserName: "kim", Method: "GET", Endpoint: "/x", Status: 200}); err != nil {
			t.Fatal(err)
		}
	}
	u, err := st.Accounts().CreateUser(ctx, store.UserInput{Name: "kim", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	old, _ := st.Accounts().CreateLoginToken(ctx, u.UID, now.Add(-time.Minute))
	fresh, _ := st.Accounts().CreateLoginToken(ctx, u.UID, now.Add(time.Hour))

	keep := New(Options{Accounts: st.Accounts(), Logger: testkit.Discard(), Now: func() time.Time { return now }})
	keep.prune(ctx)
	if all, _ := st.Accounts().AuditEntries(ctx, store.AuditFilter{}); len(all) != 3 {
		t.Fatalf("retention 0 pruned audit records: %d left", len(all))
	}
	a := New(Options{Accounts: st.Accounts(), Logger: testkit.Discard(), AuditRetention: 90 * 24 * time.Hour, Now: func() time.Time { return now }})
	a.prune(ctx)
	all, _ := st.Accounts().AuditEntries(ctx, store.AuditFilter{})
	if len(all) != 2 || !all[0].At.Equal(now.Add(-89*24*time.Hour)) {
		t.Fatalf("after pruning: %+v", all)
	}
	if _, err := st.Accounts().Authenticate(ctx, old, now.Add(-time.Hour)); err == nil {
		t.Fatal("an expired login token survived pruning")
	}
	if _, err := st.Accounts().Authenticate(ctx, fresh, now); err != nil {
		t.Fatalf("a live login token was pruned: %v", err)
	}
	// Maintain stops with its context.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { a.Maintain(cctx); close(done) }()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Maintain did not stop")
	}
}
