package mgmt_test

// The identity issue's attacks on the management API, each turned into a
// test that holds: a system user with the role user, logged in with
// POST /api/login, reaches for another user's certificate package (by name,
// by id, by its data package hash on both APIs) and for user management
// (create, delete, which would revoke the victim's certificates, rename or
// re-password, promote itself). Each is refused with 403 and a message that
// says why, or answered as a missing package (404), and nothing changes:
// the database is the same but for the audit log that records the
// attempts, the victim's certificate is still valid and still connects.
// The same user fetches its own package (access.md "Roles", "Route
// matrix").

import (
	"archive/zip"
	"bytes"
	"crypto/tls"
	"io"
	"strings"
	"testing"

	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"outpost/appliance/netx"
	"outpost/internal/testkit"
)

// certUser is a system user created with a certificate package.
type certUser struct {
	id, hash string
	cert     tls.Certificate // the client certificate of its package
}

// createCertUsers makes system users with certificate packages in one
// batch and reads each one's certificate out of its package (downloaded by
// the administrator, as an operator hands it to a device).
func (e *env) createCertUsers(names ...string) map[string]certUser {
	e.t.Helper()
	batch := []map[string]any{}
	for _, n := range names {
		batch = append(batch, map[string]any{"Name": n, "Password": n + "-pw", "DeviceType": "mobile", "Certs": "true"})
	}
	r := e.do("POST", "/ManageSystemUser/postSystemUser", e.admin, map[string]any{"systemUsers": batch})
	want(e.t, "create users with certificates", r, 201)
	var created usersAnswer
	r.JSON(e.t, &created)
	out := map[string]certUser{}
	for _, it := range created.SystemUsers {
		var u certUser
		u.id = it.ID
		e.db().QueryRow(`SELECT certificate_package_hash FROM system_users WHERE uid = ?`, u.id).Scan(&u.hash)
		pkg := e.do("GET", "/ManageSystemUser/certificatePackage?id="+u.id, e.admin, nil)
		want(e.t, it.Username+"'s package as the administrator", pkg, 200)
		if u.hash == "" || sha(pkg.Body) != u.hash {
			e.t.Fatalf("%s: stored package hash %q, downloaded %s", it.Username, u.hash, sha(pkg.Body))
		}
		p12 := zipEntry(e.t, pkg.Body, "certs/"+it.Username+"-"+e.app.Cfg.ServerName+".p12")
		key, cert, _, err := pkcs12.DecodeChain(p12, e.app.Cfg.Password)
		if err != nil || cert.Subject.CommonName != it.Username {
			e.t.Fatalf("%s's client p12: %v", it.Username, err)
		}
		u.cert = tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}
		out[it.Username] = u
	}
	if len(out) != len(names) {
		e.t.Fatalf("created %d users, want %d: %s", len(out), len(names), r.Body)
	}
	return out
}

// loginAs is POST /api/login; it returns the login token.
func (e *env) loginAs(name, password string) string {
	e.t.Helper()
	r := e.do("POST", "/api/login", "", map[string]string{"username": name, "password": password})
	want(e.t, "login as "+name, r, 200)
	var l struct{ Token, Username string }
	r.JSON(e.t, &l)
	if l.Token == "" || l.Username != name {
		e.t.Fatalf("login as %s: %s", name, r.Body)
	}
	return l.Token
}

// snapshotWithoutAudit is snapshot without the audit log, which records
// every call of a system user, refused ones too.
func (e *env) snapshotWithoutAudit() map[string]string {
	e.t.Helper()
	s := e.snapshot()
	if _, ok := s["audit_log"]; !ok {
		e.t.Fatalf("no audit_log table among %v", s)
	}
	delete(s, "audit_log")
	return s
}

// TestUserCannotReachAnotherUsersIdentity: dave (role user, logged in with
// his password) is refused carol's certificate package, user management and
// a promotion of himself; carol's package is no data package he can
// download or list; dave's own package is his to fetch.
func TestUserCannotReachAnotherUsersIdentity(t *testing.T) {
	e := newEnv(t, nil)
	us := e.createCertUsers("carol", "dave")
	carol, dave := us["carol"], us["dave"]
	token := e.loginAs("dave", "dave-pw")
	if carol.hash == dave.hash {
		t.Fatal("carol and dave have the same package")
	}
	// The administrator may fetch carol's package by its hash: the 404s
	// below hide a package that is there.
	want(t, "carol's package by hash as the administrator", e.do("GET", "/DataPackageTable/"+carol.hash, e.admin, nil), 200)

	before := e.snapshotWithoutAudit()
	usersBefore := e.count("system_users", "")
	audited := e.count("audit_log", "status = 403")

	const (
		notYours  = "a user may see and change only its own record"
		adminOnly = "only an administrator may do this"
	)
	for _, c := range []struct {
		name, method, path string
		body               any
		msg                string
	}{
		{"carol's package by username", "GET", "/ManageSystemUser/certificatePackage?username=carol", nil, notYours},
		{"carol's package by id", "GET", "/ManageSystemUser/certificatePackage?id=" + carol.id, nil, notYours},
		{"create a user", "POST", "/ManageSystemUser/postSystemUser", map[string]string{"username": "mallory", "password": "mallory-pw"}, adminOnly},
		{"create an administrator", "POST", "/ManageSystemUser/postSystemUser",
			map[string]any{"systemUsers": []map[string]any{{"Name": "mallory", "Password": "mallory-pw", "Role": "admin", "Certs": "true"}}}, adminOnly},
		{"delete carol", "DELETE", "/ManageSystemUser/deleteSystemUser", map[string]string{"id": carol.id}, adminOnly},
		{"delete carol in a batch", "DELETE", "/ManageSystemUser/deleteSystemUser",
			map[string]any{"systemUsers": []map[string]string{{"uid": carol.id}, {"uid": dave.id}}}, adminOnly},
		{"carol's password", "PUT", "/ManageSystemUser/putSystemUser", map[string]string{"id": carol.id, "password": "owned"}, notYours},
		{"carol's token", "PUT", "/ManageSystemUser/putSystemUser", map[string]string{"id": carol.id, "token": "dave-knows-this-token-0123456789"}, notYours},
		{"promote himself", "PUT", "/api/users/" + dave.id + "/role", map[string]string{"role": "admin"}, adminOnly},
		{"the user list", "GET", "/ManageSystemUser/getAll", nil, adminOnly},
	} {
		wantRefusal(t, c.name, e.do(c.method, c.path, token, c.body), 403, c.msg)
	}

	// carol's package by its hash: no data package of dave's to read, on
	// the management API (his login token), on 8443 (his certificate) and
	// on 8080 (anyone). It is not in his list either.
	wantRefusal(t, "carol's package by hash as dave", e.do("GET", "/DataPackageTable/"+carol.hash, token, nil), 404, "no data package with hash")
	daveTLS := e.app.HTTPSClient(&dave.cert)
	content := "/Marti/sync/content?hash=" + carol.hash
	wantRefusal(t, "carol's package through /Marti/sync/content on 8443 with dave's certificate",
		testkit.Do(t, daveTLS, "GET", e.app.URL(t, netx.ListenerHTTPS, content), nil), 404, "no file with hash")
	wantRefusal(t, "carol's package through /Marti/sync/content on 8080",
		testkit.Do(t, nil, "GET", e.app.URL(t, netx.ListenerHTTP, content), nil), 404, "no file with hash")
	list := e.do("GET", "/DataPackageTable", token, nil)
	want(t, "dave's package list", list, 200)
	if bytes.Contains(list.Body, []byte(carol.hash)) || !bytes.Contains(list.Body, []byte(dave.hash)) {
		t.Fatalf("dave's package list (carol's %s must be absent, his %s present): %s", carol.hash, dave.hash, list.Body)
	}

	// Nothing changed: the tables (but the audit log, which recorded every
	// refusal), the users, carol's certificate.
	sameSnapshot(t, "dave's refused requests", before, e.snapshotWithoutAudit())
	if n := e.count("system_users", ""); n != usersBefore || n != 2 {
		t.Fatalf("%d system users, want %d", n, usersBefore)
	}
	if n := e.count("audit_log", "status = 403 AND user_name = 'dave'"); n < audited+10 {
		t.Fatalf("%d refusals of dave audited, want the 10 refused calls", n-audited)
	}
	if e.app.Authority().IsRevoked(carol.cert.Leaf.SerialNumber) {
		t.Fatal("carol's certificate was revoked")
	}
	carolTLS := e.app.HTTPSClient(&carol.cert)
	if r := testkit.Do(t, carolTLS, "GET", e.app.URL(t, netx.ListenerHTTPS, "/Marti/sync/content?hash="+carol.hash), nil); r.Status != 200 || sha(r.Body) != carol.hash {
		t.Fatalf("carol over 8443 after the attacks: %d", r.Status)
	}
	want(t, "carol still logs in", e.do("POST", "/api/login", "", map[string]string{"username": "carol", "password": "carol-pw"}), 200)
	var role string
	e.db().QueryRow(`SELECT role FROM system_users WHERE uid = ?`, dave.id).Scan(&role)
	if role != "user" {
		t.Fatalf("dave's role is %q", role)
	}

	// dave's own package: by name, by id, by hash on both APIs.
	for _, q := range []string{"username=dave", "id=" + dave.id} {
		r := e.do("GET", "/ManageSystemUser/certificatePackage?"+q, token, nil)
		want(t, "dave's own package by "+q, r, 200)
		if sha(r.Body) != dave.hash || r.Header.Get("Content-Type") != "application/zip" {
			t.Fatalf("dave's own package by %s: %s, %q", q, sha(r.Body), r.Header.Get("Content-Type"))
		}
	}
	if r := e.do("GET", "/DataPackageTable/"+dave.hash, token, nil); r.Status != 200 || sha(r.Body) != dave.hash {
		t.Fatalf("dave's own package by hash: %d", r.Status)
	}
	if r := testkit.Do(t, daveTLS, "GET", e.app.URL(t, netx.ListenerHTTPS, "/Marti/sync/content?hash="+dave.hash), nil); r.Status != 200 || sha(r.Body) != dave.hash {
		t.Fatalf("dave's own package over 8443: %d", r.Status)
	}
}

// wantRefusal checks a refused request: its status and that its JSON message
// says msg. What came instead is shown clipped (a package is binary).
func wantRefusal(t testing.TB, what string, r testkit.Response, status int, msg string) {
	t.Helper()
	if r.Status != status || !strings.Contains(r.Message(), msg) {
		body := r.Body
		if len(body) > 200 {
			body = body[:200]
		}
		t.Errorf("%s: %d %q (%s), want %d with a message saying %q", what, r.Status, body, r.Header.Get("Content-Type"), status, msg)
	}
}

// zipEntry is the content of one entry of a ZIP archive.
func zipEntry(t testing.TB, archive []byte, name string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		t.Fatalf("not a ZIP: %v", err)
	}
	for _, f := range zr.File {
		if f.Name == name {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatalf("no %s in the archive", name)
	return nil
}
