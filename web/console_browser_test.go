package web_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"outpost/appliance/admin"
	"outpost/internal/testkit"
)

// requireBrowser finds node, playwright-core (web/node_modules) and
// Chromium. A missing piece skips the test, or fails it where tools are
// required (testkit.MissingTool).
func requireBrowser(t *testing.T) (node, chromium string) {
	t.Helper()
	missing := func(what string) { testkit.MissingTool(t, what+" is missing") }
	chromium = testkit.Chromium
	if _, err := os.Stat(chromium); err != nil {
		missing("chromium (" + chromium + ")")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node")
	}
	if _, err := os.Stat(filepath.Join(testkit.ModuleRoot(t), "web", "node_modules", "playwright-core")); err != nil {
		missing("playwright-core (web/node_modules)")
	}
	return node, chromium
}

// artifacts is where the screenshots go (-artifacts DIR).
var artifacts = flag.String("artifacts", "", "directory for the browser tests' screenshots (default: a new temporary one)")

// artifactDir is where the screenshots go: -artifacts, or a new directory
// that outlives the test (its path is logged).
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := *artifacts
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "outpost-console-"); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestConsoleInBrowser runs the real binary and drives the console in
// headless Chromium (web/test/console.mjs): sign in, a CoT client on the
// map within 2 seconds, markers, details, the clients page, an upload with
// its progress bar, an MBTiles basemap uploaded and loaded as tiles, a
// system user with certificates and its package, groups created and
// deleted, a user's memberships and another's role set in the table, geo
// objects and emergencies placed from the map (when the server has their
// routes), a mission created through the client API on the Missions page,
// the server page, sign out and in with a token, then as a plain user (no
// administrator's page, its groups on My account, its own package); no
// console error (a 403 included: the console asks only what the role may),
// CSP violation or request to another origin. Afterwards the API must hold
// what the console set.
func TestConsoleInBrowser(t *testing.T) {
	node, chromium := requireBrowser(t)
	dir := t.TempDir()
	mbtiles := filepath.Join(dir, "grid.mbtiles")
	testkit.WriteMBTiles(t, mbtiles, testkit.MBTilesMeta("Test grid", 0, 3), testkit.PyramidTiles(t, 3))

	// The TLS listeners too: the Start page lists every port.
	p := testkit.Start(t, filepath.Join(dir, "data"), "--log-level", "info", "--https-port", "0", "--ssl-cot-port", "0", "--enroll-port", "0", "--key-type", "ecdsa-p256")
	base := "http://" + p.Addr(t, "rest") + "/"
	tok, err := os.ReadFile(filepath.Join(p.DataDir, admin.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(tok))
	auth := []string{"Authorization", "Bearer " + token}
	// The operator is an administrator: the console shows it every page.
	const user, password = "operator", "a password for the console test"
	r := testkit.Do(t, nil, "POST", base+"ManageSystemUser/postSystemUser", map[string]string{"username": user, "password": password, "role": "admin"}, auth...)
	if r.Status != 201 {
		t.Fatalf("creating the operator: %d %s", r.Status, r.Body)
	}
	// The plain user has the role user, no group and certificates: the
	// console gives it groups, then signs in as it.
	const plain, plainPassword = "scout", "the scout's own password"
	r = testkit.Do(t, nil, "POST", base+"ManageSystemUser/postSystemUser", map[string]any{"systemUsers": []map[string]string{
		{"Name": plain, "Password": plainPassword, "Certs": "true", "DeviceType": "mobile"}}}, auth...)
	if r.Status != 201 {
		t.Fatalf("creating the plain user: %d %s", r.Status, r.Body)
	}
	// The geo object and emergency routes arrive with another change;
	// exercise them when this build has them.
	geo := "1"
	for _, p := range []string{"ManageEmergency/getEmergency", "ManageGeoObject/GetRepeatedMessages"} {
		if r := testkit.Do(t, nil, "GET", base+p, nil, auth...); r.Status == 404 {
			geo = "0"
		}
	}
	if geo == "0" {
		t.Log("this build has no /ManageGeoObject or /ManageEmergency routes: placing objects and raising emergencies are skipped")
	}
	mission := createMission(t, "http://"+p.Addr(t, "http"))

	shots := artifactDir(t)
	t.Logf("screenshots and downloads: %s", shots)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("test", "console.mjs"))
	cmd.Dir = filepath.Join(testkit.ModuleRoot(t), "web")
	cmd.Env = append(os.Environ(),
		"OUTPOST_URL="+base, "OUTPOST_COT="+p.Addr(t, "cot-tcp"), "OUTPOST_TOKEN="+token,
		"OUTPOST_TOKEN_FILE="+filepath.Join(p.DataDir, admin.AdminTokenFile),
		"OUTPOST_USER="+user, "OUTPOST_PASSWORD="+password, "OUTPOST_MBTILES="+mbtiles,
		"OUTPOST_PLAIN_USER="+plain, "OUTPOST_PLAIN_PASSWORD="+plainPassword,
		"OUTPOST_ARTIFACTS="+shots, "OUTPOST_CHROMIUM="+chromium, "OUTPOST_GEO="+geo, "OUTPOST_MISSION="+mission)
	stderr := &testkit.Buffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var result struct {
		ClientAppearMs int    `json:"clientAppearMs"`
		ProgressSeen   int    `json:"progressSeen"`
		PackageBytes   int    `json:"packageBytes"`
		InviteToken    string `json:"inviteToken"`
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
			json.Unmarshal([]byte(rest), &result)
			continue
		}
		t.Log(line)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the browser test failed (%v):\n%s\nscreenshots: %s", err, stderr.String(), shots)
	}
	if result.ClientAppearMs <= 0 || result.ClientAppearMs > 2000 || result.ProgressSeen <= 0 || result.PackageBytes <= 0 {
		t.Fatalf("result %+v", result)
	}
	t.Logf("client on the map after %d ms; upload progress seen at %d%%; package %d bytes",
		result.ClientAppearMs, result.ProgressSeen, result.PackageBytes)

	// The ATAK code as the console drew it scans: a decoder that is not
	// ours reads the user and the token the page showed.
	img, err := os.ReadFile(filepath.Join(shots, "invite-atak-code.png"))
	if err != nil {
		t.Fatal(err)
	}
	if code := testkit.DecodeQR(t, img); !strings.HasPrefix(code, "tak://com.atakmap.app/enroll?") ||
		!strings.Contains(code, "username=alpha&") || result.InviteToken == "" || !strings.HasSuffix(code, "&token="+result.InviteToken) {
		t.Fatalf("the console's ATAK code reads %q (token shown %q)", code, result.InviteToken)
	}

	// What the console set is what the server holds.
	var users struct {
		SystemUsers []struct {
			Username string `json:"username"`
			Role     string `json:"role"`
			Groups   []struct {
				Name      string `json:"name"`
				Direction string `json:"direction"`
			} `json:"groups"`
		} `json:"SystemUsers"`
	}
	if r := testkit.Do(t, nil, "GET", base+"api/users", nil, auth...); r.Status != 200 || json.Unmarshal(r.Body, &users) != nil {
		t.Fatalf("GET api/users: %d %s", r.Status, r.Body)
	}
	got := map[string]string{}
	for _, u := range users.SystemUsers {
		var gs []string
		for _, g := range u.Groups {
			gs = append(gs, g.Name+":"+g.Direction)
		}
		slices.Sort(gs)
		got[u.Username] = u.Role + " " + strings.Join(gs, ",")
	}
	want := map[string]string{plain: "user Cyan:BOTH,Red:IN", "alpha": "admin Cyan:BOTH", user: "admin "}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("after the console: %s is %q, want %q", name, got[name], w)
		}
	}
	var groups struct {
		Groups []struct {
			Name string `json:"name"`
		} `json:"groups"`
	}
	if r := testkit.Do(t, nil, "GET", base+"api/groups", nil, auth...); r.Status != 200 || json.Unmarshal(r.Body, &groups) != nil {
		t.Fatalf("GET api/groups: %d %s", r.Status, r.Body)
	}
	var names []string
	for _, g := range groups.Groups {
		names = append(names, g.Name)
	}
	slices.Sort(names)
	if w := []string{"Cyan", "Red", "__ANON__"}; !slices.Equal(names, w) {
		t.Errorf("groups after the console: %v, want %v (Spare deleted)", names, w)
	}
}

// createMission makes the mission the Missions page shows, as TAK clients
// do through the client API (api.md §4.4): a file, the uid of the client
// console.mjs connects, a second subscriber and a log entry. It returns the
// mission's name.
func createMission(t *testing.T, base string) string {
	t.Helper()
	const name = "Op Dawn <b>&</b>" // markup: shown as text
	p := base + "/Marti/api/missions/" + url.PathEscape(name)
	call := func(method, path string, body any, want int, headers ...string) {
		t.Helper()
		if r := testkit.Do(t, nil, method, path, body, headers...); r.Status != want {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
	}
	file := []byte("Route plan: north bank to the bridge, then east.\n")
	sum := sha256.Sum256(file)
	call("POST", base+"/Marti/sync/upload?filename=route-plan.txt&creatorUid=ANDROID-console-1", file, 200, "Content-Type", "text/plain")
	call("PUT", p+"?creatorUid=ANDROID-console-1&description=Dawn+patrol+along+the+river&tool=public&keywords=patrol", nil, 201)
	call("PUT", p+"/contents?creatorUid=ANDROID-console-1",
		map[string]any{"hashes": []string{hex.EncodeToString(sum[:])}, "uids": []string{"ANDROID-console-1"}}, 200)
	call("PUT", p+"/subscription?uid=ANDROID-console-2", nil, 201)
	call("POST", base+"/Marti/api/missions/logs/entries", map[string]any{"content": "Crossed the bridge <script>alert(1)</script>, no contact.",
		"creatorUid": "ANDROID-console-2", "missionNames": []string{name}, "keywords": []string{"bridge"}}, 201)
	return name
}
