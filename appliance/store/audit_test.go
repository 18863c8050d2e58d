package store

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestAuditLog(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, user := range []string{"kim", "lee", "kim"} {
		if err := s.Accounts().AddAudit(ctx, AuditEntry{At: base.Add(time.Duration(i) * time.Hour), UserUID: "uid-" + user, UserName: user,
			Method: "GET", Endpoint: "/ManageSystemUser/getAll", Status: 200, Body: strings.Repeat("é", maxAuditBody), BodySize: 7}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.Accounts().AuditEntries(ctx, AuditFilter{})
	if err != nil || len(all) != 3 || !all[0].At.Equal(base) || all[2].UserName != "kim" {
		t.Fatalf("all entries: %+v %v", all, err)
	}
	if len(all[0].Body) > maxAuditBody || !strings.HasPrefix(all[0].Body, "é") || strings.ContainsRune(all[0].Body, '\uFFFD') {
		t.Fatalf("body not cut on a rune boundary: %d bytes", len(all[0].Body))
	}
	if kim, _ := s.Accounts().AuditEntries(ctx, AuditFilter{User: "kim"}); len(kim) != 2 {
		t.Fatalf("by name: %d", len(kim))
	}
	if lee, _ := s.Accounts().AuditEntries(ctx, AuditFilter{User: "uid-lee"}); len(lee) != 1 {
		t.Fatalf("by uid: %d", len(lee))
	}
	if recent, _ := s.Accounts().AuditEntries(ctx, AuditFilter{Since: base.Add(90 * time.Minute)}); len(recent) != 1 || !recent[0].At.Equal(base.Add(2*time.Hour)) {
		t.Fatalf("since: %+v", recent)
	}
	if last, _ := s.Accounts().AuditEntries(ctx, AuditFilter{Limit: 2}); len(last) != 2 || !last[1].At.Equal(base.Add(2*time.Hour)) {
		t.Fatalf("limit keeps the newest: %+v", last)
	}
	if n, err := s.Accounts().PruneAudit(ctx, base.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("prune: %d %v", n, err)
	}
	if left, _ := s.Accounts().AuditEntries(ctx, AuditFilter{}); len(left) != 2 {
		t.Fatalf("%d left after prune", len(left))
	}
}
