package marti_test

import (
	"context"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outpost/appliance/netx"
	"outpost/appliance/store"
	"outpost/internal/testkit"
)

// TestNodeTakCredentials runs node-tak 8.9.0's OAuth and Credentials classes
// unmodified against the enrollment listener (scripts/interop/
// enroll-credentials.mjs): APIAuthPassword's login on POST /oauth/token,
// Credentials.generate() (config with the JWT cookie, signClient/v2 with
// Basic), the answer checked with node-tak's CertificateResponse and the
// certificate used on 8443. Once with the user's password (a second
// generate works too), once with a one-use invitation's token (login does
// not spend it, signing does: the second generate fails). node-tak verifies
// the server against the appliance's CA (NODE_EXTRA_CA_CERTS).
func TestNodeTakCredentials(t *testing.T) {
	testkit.RequireInterop(t, "@tak-ps/node-tak")
	e := start(t, nil)
	ctx := context.Background()
	acc := e.Store().Accounts()
	u, err := acc.CreateUser(ctx, store.UserInput{Name: "nodetak-enroll", Password: "Node-Tak-Password-5521"})
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.Authority().CACert().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(password string) map[string]nodeStep {
		return runNode(t, "enroll-credentials.mjs",
			"OUTPOST_URL="+strings.TrimSuffix(e.URL(t, netx.ListenerEnroll, "/"), "/"),
			"HTTPS_URL="+strings.TrimSuffix(e.URL(t, netx.ListenerHTTPS, "/"), "/"),
			"TAK_USER="+u.Name, "TAK_PASSWORD="+password, "NODE_EXTRA_CA_CERTS="+caFile, "NODE_NO_WARNINGS=1")
	}

	steps := run("Node-Tak-Password-5521")
	for _, name := range []string{"login", "config", "generate", "use", "again", "done"} {
		if s, ok := steps[name]; !ok || !s.OK {
			t.Errorf("password: step %s: %+v", name, s)
		}
	}

	inv, err := acc.CreateEnrollInvitation(ctx, store.EnrollInvitationInput{UserUID: u.UID, Device: "atak",
		Expires: time.Now().Add(time.Hour), Uses: 1}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	steps = run(inv.Token)
	for _, name := range []string{"login", "config", "generate", "use", "done"} {
		if s, ok := steps[name]; !ok || !s.OK {
			t.Errorf("invitation: step %s: %+v", name, s)
		}
	}
	if s, ok := steps["again"]; !ok || s.OK || !strings.Contains(s.Error, "bad or expired access token") {
		t.Errorf("invitation: a second generate with a spent one-use invitation: %+v", s)
	}
	left, err := acc.EnrollInvitation(ctx, inv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if left.UsesLeft != 0 {
		t.Errorf("the invitation has %d uses left after one certificate", left.UsesLeft)
	}
	// Login itself still refuses the spent token, as Basic does.
	steps = run(inv.Token)
	if s := steps["login"]; s.OK {
		t.Errorf("login with a spent invitation: %+v", s)
	}
}
