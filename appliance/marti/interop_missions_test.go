package marti_test

import (
	"strings"
	"testing"

	"outpost/appliance/netx"
	"outpost/internal/testkit"
)

// TestNodeTakMissionRoutes drives the mission routes past the basic flow
// with @tak-ps/node-tak 8.9.0 on both listeners (marti-mission-routes.mjs):
// roles (get and set, by name and by guid), the caller's subscription,
// contacts, the list's parameters, every Mission method by guid, access,
// log entries by id, keywords, password, expiration, invitations, a mission
// package, the mission archive and delete by name and by guid, every
// answer checked against node-tak's own schemas.
//
// Two of node-tak's methods cannot work as written, whatever the server:
// MissionLog.update sends no id (the server must refuse it, 400, changing
// nothing: the step checks that), and on the HTTP port Mission.upload
// passes a stream body to fetch without duplex: 'half', which fetch refuses
// before sending anything (reported as clientLimit, accepted on 8080 only).
// On HTTPS node-tak's MissionLog.get passes no method to its certificate
// client, which refuses it before sending; the script then sends the same
// GET with a method and reports the limit, and the step must pass.
func TestNodeTakMissionRoutes(t *testing.T) {
	testkit.RequireInterop(t, "@tak-ps/node-tak")
	e := start(t, nil)
	storedSA(t, e, "ANDROID-ROUTES", "RCALL")
	certFile, keyFile := writePEM(t, e, "noderoutes")
	for _, l := range both {
		env := []string{"OUTPOST_URL=" + strings.TrimSuffix(e.URL(t, l, "/"), "/"), "MISSION=routes-" + l, "CONTACT_UID=ANDROID-ROUTES"}
		if l == netx.ListenerHTTPS {
			env = append(env, "CERT="+certFile, "KEY="+keyFile)
		}
		steps := runNode(t, "marti-mission-routes.mjs", env...)
		for _, name := range []string{"create", "role", "setRole", "subscription", "contacts", "list", "getGuid", "guidRoutes", "access",
			"logs", "logUpdate", "keywords", "password", "expiration", "invitations", "upload", "archive", "delete", "done"} {
			s, ok := steps[name]
			if name == "upload" && l == netx.ListenerHTTP && ok && !s.OK && s.ClientLimit != "" {
				continue
			}
			if !ok || !s.OK {
				t.Errorf("%s step %s: %+v", l, name, s)
			}
		}
	}
}
