package mgmt_test

import (
	"database/sql"
	"strings"
	"testing"
)

// TestGeoInternalFaults: when the database fails, the geo object and
// emergency routes answer 500 with the contract's texts (the cause goes to
// the log, never to the client), and nothing is sent to clients.
func TestGeoInternalFaults(t *testing.T) {
	e := newEnv(t, nil)
	c := e.app.DialTCP(t)
	joined(t, c)
	db, err := sql.Open("sqlite", "file:"+e.app.Cfg.DBPath()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	geoBody := map[string]any{"geoObject": "Sniper", "attitude": "hostile", "how": "gps", "latitude": 59.3, "longitude": 18.06, "timeout": 600}

	// Writes fail.
	exec(`CREATE TRIGGER fail_writes BEFORE INSERT ON server_objects BEGIN SELECT RAISE(ABORT, 'the disk is on fire'); END`)
	for _, tc := range []struct{ method, path, msg string }{
		{"POST", "/ManageGeoObject/postGeoObject", "An error occurred adding geo object."},
		{"POST", "/ManageEmergency/postEmergency", "An error occurred adding emergency."},
	} {
		body := any(geoBody)
		if strings.Contains(tc.path, "Emergency") {
			body = map[string]any{"emergencyType": "911 Alert", "latitude": 1, "longitude": 2}
		}
		r := e.do(tc.method, tc.path, e.admin, body)
		want(t, tc.path, r, 500)
		if r.Message() != tc.msg {
			t.Errorf("%s: %q, want %q", tc.path, r.Message(), tc.msg)
		}
	}
	if !strings.Contains(e.logs.String(), "disk is on fire") {
		t.Error("the cause of the fault was not logged")
	}
	exec(`DROP TRIGGER fail_writes`)

	// Reads fail.
	exec(`ALTER TABLE server_objects RENAME TO server_objects_away`)
	for _, tc := range []struct{ method, path, msg string }{
		{"GET", "/ManageGeoObject/getGeoObject?latitude=1&longitude=2", "An error occurred retrieving geo object."},
		{"GET", "/ManageGeoObject/GetRepeatedMessages", "An error occurred retrieving geo object."},
		{"DELETE", "/ManageGeoObject/DeleteRepeatedMessage?ids=x", "An error occurred adding geo object."},
		{"GET", "/ManageEmergency/getEmergency", "An error occurred retrieving emergency."},
		{"DELETE", "/ManageEmergency/deleteEmergency?uid=x", "An error occurred cancelling emergency."},
	} {
		r := e.do(tc.method, tc.path, e.admin, nil)
		want(t, tc.path, r, 500)
		if r.Message() != tc.msg || strings.Contains(string(r.Body), "server_objects") {
			t.Errorf("%s: %s, want %q", tc.path, r.Body, tc.msg)
		}
	}
	exec(`ALTER TABLE server_objects_away RENAME TO server_objects`)

	// Nothing went out: the first event is the next accepted object.
	uid := e.post("POST", "/ManageGeoObject/postGeoObject", geoBody)
	ev, err := c.Next(wait)
	if err != nil || ev.UID != uid {
		t.Fatalf("first event after the faults: %v %v, want %s", ev, err, uid)
	}
}
