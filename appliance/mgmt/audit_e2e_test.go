package mgmt_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net"
	"strings"
	"testing"

	"outpost/appliance/store"
	"outpost/internal/testkit"
)

// TestAudit: calls of system users are recorded with their body (secrets
// masked at any depth, uploads by size); API users' calls are not.
func TestAudit(t *testing.T) {
	e := newEnv(t, nil)
	kimUID, kimToken := e.createAdmin("kim", "kim-pw")
	if n := e.count("audit_log", ""); n != 0 {
		t.Fatalf("API user calls were audited: %d records", n)
	}

	const secretPw, secretTok = "Very-Secret-Pw-1", "nested-secret-token-0123456789"
	r := e.do("POST", "/ManageSystemUser/postSystemUser", kimToken, map[string]any{"systemUsers": []map[string]any{
		{"Name": "zed", "Password": secretPw, "Token": secretTok, "Group": "Cyan", "Extra": map[string]string{"clientSecret": "s3"}},
	}})
	want(t, "system user creates a user", r, 201)
	want(t, "system user lists packages", e.do("GET", "/DataPackageTable", kimToken, nil), 200)
	want(t, "system user searches, token in the query", e.do("GET", "/ManageSystemUser/getSystemUser?username=zed&token=query-secret-abc", kimToken, nil), 200)
	want(t, "system user makes a mistake", e.do("PUT", "/DataPackageTable", kimToken, `{"DataPackages":[]}`), 400)
	content := []byte("UPLOADED-CONTENT-NEVER-IN-THE-AUDIT")
	want(t, "system user uploads", e.upload(kimToken, "?filename=f.txt&creatorUid=ANDROID-9", "assetfile", content), 200)
	want(t, "kim logs in", e.do("POST", "/api/login", "", map[string]string{"username": "kim", "password": "kim-pw"}), 200)
	// API user calls: not recorded.
	want(t, "admin lists users", e.do("GET", "/ManageSystemUser/getAll", e.admin, nil), 200)
	want(t, "admin creates a user", e.do("POST", "/ManageSystemUser/postSystemUser", e.admin, map[string]string{"username": "amy", "password": "amy-pw"}), 201)

	entries, err := e.app.Store().Accounts().AuditEntries(t.Context(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 6 {
		for _, en := range entries {
			t.Logf("%+v", en)
		}
		t.Fatalf("%d audit records, want 6 (kim's calls only)", len(entries))
	}
	for _, en := range entries {
		if en.UserUID != kimUID || en.UserName != "kim" || en.Remote != "127.0.0.1" || en.At.IsZero() {
			t.Fatalf("record %+v", en)
		}
		for _, secret := range []string{secretPw, secretTok, "s3\"", "query-secret-abc", "kim-pw", string(content)} {
			if strings.Contains(en.Body, secret) || strings.Contains(en.Endpoint, secret) {
				t.Fatalf("record holds a secret or the upload %q: %+v", secret, en)
			}
		}
	}
	create := entries[0]
	if create.Method != "POST" || create.Endpoint != "/ManageSystemUser/postSystemUser" || create.Status != 201 ||
		!strings.Contains(create.Body, `"Name":"zed"`) || !strings.Contains(create.Body, `"Group":"Cyan"`) ||
		!strings.Contains(create.Body, `"Password":"***"`) || !strings.Contains(create.Body, `"Token":"***"`) ||
		!strings.Contains(create.Body, `"clientSecret":"***"`) || create.BodySize == 0 {
		t.Fatalf("create record %+v", create)
	}
	if l := entries[1]; l.Method != "GET" || l.Endpoint != "/DataPackageTable" || l.Status != 200 || l.Body != "" {
		t.Fatalf("list record %+v", l)
	}
	if s := entries[2]; s.Endpoint != "/ManageSystemUser/getSystemUser?token=%2A%2A%2A&username=zed" {
		t.Fatalf("search record endpoint %q", s.Endpoint)
	}
	if m := entries[3]; m.Status != 400 || m.Body != `{"DataPackages":[]}` {
		t.Fatalf("mistake record %+v", m)
	}
	up := entries[4]
	if up.Status != 200 || !strings.Contains(up.Body, `"f.txt"`) || !strings.Contains(up.Body, "35 bytes") || up.BodySize <= 35 {
		t.Fatalf("upload record %+v", up)
	}
	if lg := entries[5]; lg.Endpoint != "/api/login" || lg.Body != `{"password":"***","username":"kim"}` {
		t.Fatalf("login record %+v", lg)
	}
	// An upload abandoned by its client is recorded as such (499), by size.
	var part bytes.Buffer
	mw := multipart.NewWriter(&part)
	fw, _ := mw.CreateFormFile("assetfile", "x.bin")
	fw.Write(bytes.Repeat([]byte("z"), 20<<10))
	conn, err := net.Dial("tcp", e.app.Addr(t, "rest"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /DataPackageTable?filename=gone.bin&creatorUid=A HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		kimToken, mw.FormDataContentType(), part.Len()+10<<10)
	conn.Write(part.Bytes())
	testkit.WaitFor(t, "the upload to start", func() bool { return e.count("blobs", "state = 0") == 1 })
	conn.Close()
	testkit.WaitFor(t, "the abandoned upload's audit record", func() bool {
		return e.count("audit_log", "status = 499 AND endpoint LIKE '/DataPackageTable?%gone.bin%'") == 1
	})

	// Clipped: a large body is cut to a bounded record.
	big := strings.Repeat("a", 10<<10)
	e.do("GET", "/ManageSystemUser/getSystemUser", kimToken, map[string]string{"username": big})
	last, _ := e.app.Store().Accounts().AuditEntries(t.Context(), store.AuditFilter{Limit: 1})
	if len(last) != 1 || len(last[0].Body) > 4200 || !strings.Contains(last[0].Body, "…") {
		t.Fatalf("large body recorded as %d bytes", len(last[0].Body))
	}
}
