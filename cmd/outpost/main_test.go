package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"outpost/appliance/admin"
	"outpost/appliance/apptest"
	"outpost/appliance/netx"
	"outpost/internal/testkit"
)

// TestTokenCommands: outpost token create|list|revoke act on a running
// appliance's database, which sees the change at its next request.
func TestTokenCommands(t *testing.T) {
	app := apptest.Start(t, nil)
	dir := app.Cfg.DataDir
	base := "http://" + app.Addr(t, netx.ListenerREST)

	code, out, errOut := outpost(t, "token", "create", "ops", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("token create: %d %s", code, errOut)
	}
	m := regexp.MustCompile(`bearer token: (\S+)`).FindStringSubmatch(out)
	if m == nil || len(m[1]) < 40 {
		t.Fatalf("token create printed no token:\n%s", out)
	}
	token := m[1]
	if strings.Contains(errOut, token) {
		t.Fatal("the token went to the log")
	}
	r := testkit.Do(t, nil, "GET", base+"/ManageSystemUser/getAll", nil, "Authorization", "Bearer "+token)
	if r.Status != 200 {
		t.Fatalf("the running server refused the new token: %d %s", r.Status, r.Body)
	}

	code, out, _ = outpost(t, "token", "list", "--data-dir", dir)
	if code != 0 || !regexp.MustCompile(`(?m)^admin\s+\d{4}-\d\d-\d\dT`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^ops\s+\d{4}-`).MatchString(out) || strings.Contains(out, token) {
		t.Fatalf("token list (%d):\n%s", code, out)
	}
	admin, _ := os.ReadFile(filepath.Join(dir, admin.AdminTokenFile))
	if strings.Contains(out, strings.TrimSpace(string(admin))) {
		t.Fatal("token list printed the admin token")
	}

	code, _, errOut = outpost(t, "token", "create", "ops", "--data-dir", dir)
	if code != 1 || !strings.Contains(errOut, "exists") {
		t.Fatalf("duplicate create: %d %s", code, errOut)
	}
	if code, _, errOut = outpost(t, "token", "create", "bad name", "--data-dir", dir); code != 1 || !strings.Contains(errOut, "API user name") {
		t.Fatalf("bad name: %d %s", code, errOut)
	}
	if code, out, _ = outpost(t, "token", "revoke", "ops", "--data-dir", dir); code != 0 || !strings.Contains(out, "revoked") {
		t.Fatalf("revoke: %d %s", code, out)
	}
	r = testkit.Do(t, nil, "GET", base+"/ManageSystemUser/getAll", nil, "Authorization", "Bearer "+token)
	if r.Status != 401 {
		t.Fatalf("the running server still accepts a revoked token: %d", r.Status)
	}
	if code, _, errOut = outpost(t, "token", "revoke", "ops", "--data-dir", dir); code != 1 || !strings.Contains(errOut, "not found") {
		t.Fatalf("second revoke: %d %s", code, errOut)
	}

	for _, args := range [][]string{
		{"token"},
		{"token", "create"},
		{"token", "create", "a", "b"},
		{"token", "frobnicate"},
		{"token", "list", "extra"},
		{"token", "list", "--no-such-flag"},
		{"token", "revoke"},
	} {
		if code, _, _ := outpost(t, append(args, "--data-dir", dir)...); code != 2 {
			t.Errorf("outpost %v: exit %d, want 2", args, code)
		}
	}
}

// TestAuditCommand: outpost audit prints what system users did through the
// running server, filtered by user and time.
func TestAuditCommand(t *testing.T) {
	app := apptest.Start(t, nil)
	dir := app.Cfg.DataDir
	base := "http://" + app.Addr(t, netx.ListenerREST)
	admin, _ := os.ReadFile(filepath.Join(dir, admin.AdminTokenFile))
	r := testkit.Do(t, nil, "POST", base+"/ManageSystemUser/postSystemUser", map[string]string{"username": "kim", "password": "kim-secret-pw"},
		"Authorization", "Bearer "+strings.TrimSpace(string(admin)))
	var created struct{ SystemUsers []struct{ Token string } }
	r.JSON(t, &created)
	kim := created.SystemUsers[0].Token
	testkit.Do(t, nil, "PUT", base+"/ManageSystemUser/putSystemUser", map[string]string{"id": "nobody", "password": "another-secret"},
		"Authorization", "Bearer "+kim)
	testkit.Do(t, nil, "GET", base+"/DataPackageTable", nil, "Authorization", "Bearer "+kim)

	code, out, errOut := outpost(t, "audit", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("audit: %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "TIME") ||
		!regexp.MustCompile(`kim\s.*PUT\s+/ManageSystemUser/putSystemUser\s+403\s+\d+\s+\{"id":"nobody","password":"\*\*\*"\}`).MatchString(lines[1]) ||
		!regexp.MustCompile(`kim\s.*GET\s+/DataPackageTable\s+200`).MatchString(lines[2]) {
		t.Fatalf("audit output:\n%s", out)
	}
	if strings.Contains(out, "another-secret") || strings.Contains(out, "kim-secret-pw") {
		t.Fatal("audit printed a password")
	}
	if code, out, _ = outpost(t, "audit", "--user", "kim", "--since", "1h", "--limit", "1", "--data-dir", dir); code != 0 ||
		strings.Count(out, "\n") != 2 || !strings.Contains(out, "/DataPackageTable") {
		t.Fatalf("audit --user kim --limit 1:\n%s", out)
	}
	if code, out, _ = outpost(t, "audit", "--user", "nobody", "--data-dir", dir); code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("audit --user nobody:\n%s", out)
	}
	for _, args := range [][]string{
		{"audit", "--since", "soon"},
		{"audit", "--since", "-1h"},
		{"audit", "--limit", "-1"},
		{"audit", "--limit", "x"},
		{"audit", "extra"},
		{"audit", "--no-such-flag"},
	} {
		if code, _, _ := outpost(t, append(args, "--data-dir", dir)...); code != 2 {
			t.Errorf("outpost %v: exit %d, want 2", args, code)
		}
	}
}
