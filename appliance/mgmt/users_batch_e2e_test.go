package mgmt_test

import (
	"strings"
	"testing"
)

// TestPutSystemUserBatch: the batch of PUT /ManageSystemUser/putSystemUser
// takes FreeTAKServer's updateSystemUser items (uid with Token, Password
// and Group, empty ones left as they are): all applied, or none when one
// item names an unknown user; only an administrator sends it.
func TestPutSystemUserBatch(t *testing.T) {
	e := newEnv(t, nil)
	ann, annToken := e.createUser("ann", "ann-pw-1")
	bob, _ := e.createUser("bob", "bob-pw-1")
	const path = "/ManageSystemUser/putSystemUser"

	snap := e.snapshot()
	r := e.do("PUT", path, e.admin, map[string]any{"systemUsers": []map[string]string{
		{"uid": ann, "Password": "ann-pw-2"}, {"uid": "nobody", "Token": "nobody-token-0123456789"}}})
	want(t, "a batch with an unknown uid", r, 404)
	if !strings.Contains(r.Message(), `systemUsers[1].uid: no system user with id "nobody"`) {
		t.Fatalf("message %q", r.Message())
	}
	want(t, "a user's batch", e.do("PUT", path, annToken, map[string]any{"systemUsers": []map[string]string{{"uid": bob, "Password": "x"}}}), 403)
	// The audit log records the refusal; nothing else may change.
	after := e.snapshot()
	delete(snap, "audit_log")
	delete(after, "audit_log")
	sameSnapshot(t, "refused batches", snap, after)

	r = e.do("PUT", path, e.admin, map[string]any{"systemUsers": []map[string]string{
		{"uid": ann, "Password": "ann-pw-2", "Token": "", "Group": "Cyan, Teal"},
		{"uid": bob, "Token": "bob-token-2-0123456789", "Password": ""}}})
	want(t, "the batch", r, 200)
	want(t, "ann's new password", e.do("POST", "/api/login", "", map[string]string{"username": "ann", "password": "ann-pw-2"}), 200)
	want(t, "ann's token kept (sent empty)", e.do("GET", "/api/whoami", annToken, nil), 200)
	want(t, "bob's new token", e.do("GET", "/api/whoami", "bob-token-2-0123456789", nil), 200)
	want(t, "bob's password kept (sent empty)", e.do("POST", "/api/login", "", map[string]string{"username": "bob", "password": "bob-pw-1"}), 200)
	if n := e.count("group_members", "user_uid = ? AND group_name IN ('Cyan', 'Teal') AND dir_in = 1 AND dir_out = 1", ann); n != 2 {
		t.Fatalf("ann's groups: %d of Cyan and Teal", n)
	}
}
