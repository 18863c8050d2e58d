package mgmt_test

import (
	"archive/zip"
	"bytes"
	"crypto/tls"
	"encoding/xml"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

type usersAnswer struct {
	Message     string `json:"message"`
	SystemUsers []struct {
		ID                     string `json:"id"`
		Username               string `json:"username"`
		Token                  string `json:"token"`
		CertificatePackageName string `json:"certificatePackageName"`
	} `json:"SystemUsers"`
}

func (e *env) users(token string) usersAnswer {
	e.t.Helper()
	r := e.do("GET", "/ManageSystemUser/getAll", token, nil)
	want(e.t, "getAll", r, 200)
	var out usersAnswer
	r.JSON(e.t, &out)
	return out
}

func (u usersAnswer) byName(name string) (id, pkg string, ok bool) {
	for _, it := range u.SystemUsers {
		if it.Username == name {
			return it.ID, it.CertificatePackageName, true
		}
	}
	return "", "", false
}

// TestSystemUsers: create (flat and batch, with a partial failure), list,
// search, update, rotate and delete, checked in the answers and the database.
func TestSystemUsers(t *testing.T) {
	e := newEnv(t, nil)

	// Flat create, with and without a token of the client's choosing.
	r := e.do("POST", "/ManageSystemUser/postSystemUser", e.admin, map[string]string{"username": "kim", "password": "kim-pw-1"})
	want(t, "flat create", r, 201)
	var created usersAnswer
	r.JSON(t, &created)
	if created.Message != "user(s) created" || len(created.SystemUsers) != 1 || created.SystemUsers[0].Username != "kim" ||
		len(created.SystemUsers[0].Token) < 40 || created.SystemUsers[0].ID == "" || strings.Contains(string(r.Body), "kim-pw-1") {
		t.Fatalf("flat create answer %s", r.Body)
	}
	kimID, kimToken := created.SystemUsers[0].ID, created.SystemUsers[0].Token
	const leeToken = "lee-chosen-token-0123456789"
	r = e.do("POST", "/ManageSystemUser/postSystemUser", e.admin, map[string]string{"username": "lee", "password": "lee-pw", "token": leeToken, "certificatePackageName": "lee.zip"})
	want(t, "flat create with token", r, 201)
	want(t, "lee's own token", e.do("GET", "/api/whoami", leeToken, nil), 200)
	want(t, "kim's generated token", e.do("GET", "/api/whoami", kimToken, nil), 200)
	want(t, "a user lists users", e.do("GET", "/ManageSystemUser/getAll", kimToken, nil), 403)
	var pwHash, tokHash string
	e.db().QueryRow(`SELECT password_hash, token_hash FROM system_users WHERE uid = ?`, kimID).Scan(&pwHash, &tokHash)
	if !strings.HasPrefix(pwHash, "pbkdf2-sha256$") || tokHash != sha([]byte(kimToken)) {
		t.Fatalf("stored secrets: %q %q", pwHash, tokHash)
	}
	r = e.do("POST", "/ManageSystemUser/postSystemUser", e.admin, map[string]string{"username": "kim", "password": "x"})
	want(t, "duplicate flat", r, 409)
	if !strings.Contains(r.Message(), `username "kim"`) || !strings.Contains(r.Message(), "exists") {
		t.Fatalf("conflict message %q", r.Message())
	}

	// Batch: certificates for a mobile and a desktop user, none for the
	// third, and one whose name is taken: the others are created.
	r = e.do("POST", "/ManageSystemUser/postSystemUser", e.admin, map[string]any{"systemUsers": []map[string]any{
		{"Name": "ann", "Group": "Cyan", "Password": "ann-pw", "DeviceType": "mobile", "Certs": "true"},
		{"Name": "ben", "Group": "Red", "Password": "ben-pw", "DeviceType": "WinTAK", "Certs": "True"},
		{"Name": "kim", "Password": "again", "DeviceType": "mobile", "Certs": "false"},
		{"Name": "cid", "Group": "Red", "Password": "cid-pw", "DeviceType": "DESKTOP", "Certs": "false", "Token": "cid-token-0123456789abcdef"},
	}})
	want(t, "batch create", r, 201)
	var batch usersAnswer
	r.JSON(t, &batch)
	if len(batch.SystemUsers) != 3 || !strings.HasPrefix(batch.Message, "user(s) created; not created: systemUsers[2].Name \"kim\"") {
		t.Fatalf("batch answer %s", r.Body)
	}
	pkgs := map[string]string{}
	for _, u := range batch.SystemUsers {
		pkgs[u.Username] = u.CertificatePackageName
	}
	if !strings.HasSuffix(pkgs["ann"], "_ann_atak.zip") || !strings.HasSuffix(pkgs["ben"], "_ben_wintak.zip") || pkgs["cid"] != "" {
		t.Fatalf("certificate packages %v", pkgs)
	}
	// The Group field is a membership, both ways (access.md "Groups").
	var grp, dt string
	var in, out bool
	e.db().QueryRow(`SELECT m.group_name, m.dir_in, m.dir_out, u.device_type FROM system_users u
		JOIN group_members m ON m.user_uid = u.uid WHERE u.name = 'ben'`).Scan(&grp, &in, &out, &dt)
	if grp != "Red" || !in || !out || dt != "wintak" {
		t.Fatalf("ben stored with group %q (in %v, out %v) device %q", grp, in, out, dt)
	}
	if n := e.count("system_users", ""); n != 5 {
		t.Fatalf("%d users stored, want 5", n)
	}
	if n := e.count("data_packages", "keywords LIKE '%connection%' AND privacy = 1"); n != 2 {
		t.Fatalf("%d private connection packages, want 2", n)
	}

	// Listing: every user, no password, no token.
	all := e.users(e.admin)
	if len(all.SystemUsers) != 5 {
		t.Fatalf("getAll: %d users", len(all.SystemUsers))
	}
	for _, u := range all.SystemUsers {
		if u.Token != "" {
			t.Fatalf("getAll returned a token for %s", u.Username)
		}
	}
	annID, _, _ := all.byName("ann")

	// getSystemUser: criteria from a GET body, the query string, or both.
	for _, tc := range []struct {
		name, query string
		body        any
		want        []string
	}{
		{"body username", "", map[string]string{"username": "ann"}, []string{"ann"}},
		{"query id", "?id=" + kimID, nil, []string{"kim"}},
		{"both match", "", map[string]string{"username": "kim", "id": kimID}, []string{"kim"}},
		{"both, different users", "?username=ann&id=" + kimID, nil, nil},
		{"no such user", "?username=zed", nil, nil},
	} {
		r := e.do("GET", "/ManageSystemUser/getSystemUser"+tc.query, e.admin, tc.body)
		want(t, tc.name, r, 200)
		var got usersAnswer
		r.JSON(t, &got)
		var names []string
		for _, u := range got.SystemUsers {
			names = append(names, u.Username)
		}
		if strings.Join(names, ",") != strings.Join(tc.want, ",") || got.SystemUsers == nil {
			t.Fatalf("%s: %s", tc.name, r.Body)
		}
	}

	// putSystemUser, flat: rename and new password; the old password and
	// the login made with it stop working.
	cidID, _, _ := all.byName("cid")
	login := e.do("POST", "/api/login", "", map[string]string{"username": "cid", "password": "cid-pw"})
	want(t, "cid login", login, 200)
	var lt struct{ Token string }
	login.JSON(t, &lt)
	r = e.do("PUT", "/ManageSystemUser/putSystemUser", e.admin, map[string]string{"id": cidID, "username": "cid2", "password": "cid-pw-2"})
	want(t, "flat update", r, 200)
	if r.Message() != "user updated" {
		t.Fatalf("update answer %s", r.Body)
	}
	want(t, "login token after a password change", e.do("GET", "/api/whoami", lt.Token, nil), 401)
	want(t, "old password", e.do("POST", "/api/login", "", map[string]string{"username": "cid2", "password": "cid-pw"}), 401)
	want(t, "new name and password", e.do("POST", "/api/login", "", map[string]string{"username": "cid2", "password": "cid-pw-2"}), 200)
	r = e.do("PUT", "/ManageSystemUser/putSystemUser", e.admin, map[string]string{"id": cidID, "username": "kim"})
	want(t, "rename onto a taken name", r, 409)
	r = e.do("PUT", "/ManageSystemUser/putSystemUser", e.admin, map[string]string{"id": annID, "username": "anna"})
	want(t, "rename of a user holding certificates", r, 409)
	// A user's token changed through the flat shape.
	const cidToken = "cid-new-token-0123456789abcdef"
	want(t, "token update", e.do("PUT", "/ManageSystemUser/putSystemUser", e.admin, map[string]string{"id": cidID, "token": cidToken}), 200)
	want(t, "old cid token", e.do("GET", "/api/whoami", "cid-token-0123456789abcdef", nil), 401)
	want(t, "new cid token", e.do("GET", "/api/whoami", cidToken, nil), 200)

	// putSystemUser, batch: token rotation, all or nothing.
	const kimNew, leeNew = "kim-rotated-0123456789abcdef", "lee-rotated-0123456789abcdef"
	leeID, _, _ := all.byName("lee")
	r = e.do("PUT", "/ManageSystemUser/putSystemUser", e.admin, map[string]any{"systemUsers": []map[string]string{
		{"uid": kimID, "Token": kimNew}, {"uid": "no-such-uid", "Token": leeNew},
	}})
	want(t, "rotation with an unknown uid", r, 404)
	if !strings.Contains(r.Message(), "systemUsers[1].uid") {
		t.Fatalf("message %q", r.Message())
	}
	want(t, "kim's token after a refused rotation", e.do("GET", "/api/whoami", kimToken, nil), 200)
	r = e.do("PUT", "/ManageSystemUser/putSystemUser", e.admin, map[string]any{"systemUsers": []map[string]string{
		{"uid": kimID, "Token": kimNew}, {"uid": leeID, "Token": leeNew},
	}})
	want(t, "rotation", r, 200)
	want(t, "kim's old token", e.do("GET", "/api/whoami", kimToken, nil), 401)
	want(t, "kim's new token", e.do("GET", "/api/whoami", kimNew, nil), 200)
	want(t, "lee's new token", e.do("GET", "/api/whoami", leeNew, nil), 200)

	// Delete: {"id"}, then the batch shape; an unknown id changes nothing.
	before := e.snapshot()
	want(t, "delete unknown", e.do("DELETE", "/ManageSystemUser/deleteSystemUser", e.admin, map[string]string{"id": "nobody"}), 404)
	want(t, "batch delete with an unknown uid", e.do("DELETE", "/ManageSystemUser/deleteSystemUser", e.admin,
		map[string]any{"systemUsers": []map[string]string{{"uid": kimID}, {"uid": "nobody"}}}), 404)
	sameSnapshot(t, "refused deletes", before, e.snapshot())
	r = e.do("DELETE", "/ManageSystemUser/deleteSystemUser", e.admin, map[string]string{"id": kimID})
	want(t, "delete", r, 200)
	if r.Message() != "user deleted" {
		t.Fatalf("delete answer %s", r.Body)
	}
	want(t, "deleted user's token", e.do("GET", "/api/whoami", kimNew, nil), 401)
	r = e.do("DELETE", "/ManageSystemUser/deleteSystemUser", e.admin, map[string]any{"systemUsers": []map[string]string{{"uid": leeID}, {"uid": cidID}}})
	want(t, "batch delete", r, 200)
	if n := e.count("system_users", ""); n != 2 {
		t.Fatalf("%d users left, want ann and ben", n)
	}
}

// TestCertificatePackage: Certs "true" builds the device's connection
// package, downloadable by user and by hash; it carries the running ports;
// deleting the user revokes its certificate, cuts its TLS CoT connection and
// removes the package.
func TestCertificatePackage(t *testing.T) {
	e := newEnv(t, nil)
	r := e.do("POST", "/ManageSystemUser/postSystemUser", e.admin, map[string]any{"systemUsers": []map[string]any{
		{"Name": "ann", "Password": "ann-pw", "DeviceType": "Mobile", "Certs": true},
	}})
	want(t, "create with certificates", r, 201)
	var created usersAnswer
	r.JSON(t, &created)
	annID, pkgName := created.SystemUsers[0].ID, created.SystemUsers[0].CertificatePackageName

	r = e.do("GET", "/ManageSystemUser/certificatePackage?id="+annID, e.admin, nil)
	want(t, "download by user", r, 200)
	if r.Header.Get("Content-Type") != "application/zip" || !strings.Contains(r.Header.Get("Content-Disposition"), pkgName) {
		t.Fatalf("download headers %v", r.Header)
	}
	zipData := r.Body
	var hash string
	e.db().QueryRow(`SELECT certificate_package_hash FROM system_users WHERE uid = ?`, annID).Scan(&hash)
	if hash != sha(zipData) {
		t.Fatalf("stored hash %s, downloaded content %s", hash, sha(zipData))
	}
	byHash := e.do("GET", "/DataPackageTable/"+hash, e.admin, nil)
	want(t, "download by hash", byHash, 200)
	if !bytes.Equal(byHash.Body, zipData) {
		t.Fatal("download by hash differs")
	}
	want(t, "by username", e.do("GET", "/ManageSystemUser/certificatePackage?username=ann", e.admin, nil), 200)
	onDisk, err := os.ReadFile(filepath.Join(e.app.Cfg.CertsPath, "clientpackages", pkgName))
	if err != nil || !bytes.Equal(onDisk, zipData) {
		t.Fatalf("package file: %v", err)
	}

	// The package: ATAK layout, the running ports, a truststore named per CA.
	zr, err := zip.NewReader(bytes.NewReader(zipData), int64(len(zipData)))
	if err != nil {
		t.Fatalf("not a ZIP: %v", err)
	}
	files := map[string][]byte{}
	var names []string
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = b
		names = append(names, f.Name)
	}
	ts := e.app.Authority().TrustStoreName() + ".p12"
	clientP12 := "certs/ann-" + e.app.Cfg.ServerName + ".p12"
	wantNames := []string{"MANIFEST/manifest.xml", "certs/ann.pref", "certs/" + ts, clientP12}
	if strings.Join(names, " ") != strings.Join(wantNames, " ") {
		t.Fatalf("entries %v, want %v", names, wantNames)
	}
	if !strings.HasPrefix(ts, "truststore-"+e.app.Cfg.ServerName+"-") {
		t.Fatalf("truststore name %q", ts)
	}
	var man struct {
		Params []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"Configuration>Parameter"`
	}
	if err := xml.Unmarshal(files["MANIFEST/manifest.xml"], &man); err != nil {
		t.Fatal(err)
	}
	params := map[string]string{}
	for _, p := range man.Params {
		params[p.Name] = p.Value
	}
	if params["onReceiveImport"] != "true" {
		t.Fatalf("manifest parameters %v", params)
	}
	pref := string(files["certs/ann.pref"])
	port := func(l string) string {
		_, p, _ := net.SplitHostPort(e.app.Addr(t, l))
		return p
	}
	for _, w := range []string{
		`<entry key="connectString0" class="class java.lang.String">127.0.0.1:` + port(netx.ListenerCoTTLS) + `:ssl</entry>`,
		`<entry key="apiSecureServerPort" class="class java.lang.String">` + port(netx.ListenerHTTPS) + `</entry>`,
		`<entry key="apiCertEnrollmentPort" class="class java.lang.String">` + port(netx.ListenerEnroll) + `</entry>`,
	} {
		if !strings.Contains(pref, w) {
			t.Fatalf("pref lacks %s:\n%s", w, pref)
		}
	}
	key, cert, _, err := pkcs12.DecodeChain(files[clientP12], e.app.Cfg.Password)
	if err != nil || cert.Subject.CommonName != "ann" {
		t.Fatalf("client p12: %v", err)
	}
	blocks, _ := pkcs12.ToPEM(files[clientP12], e.app.Cfg.Password)
	named := false
	for _, b := range blocks {
		named = named || (b.Type == "PRIVATE KEY" && b.Headers["friendlyName"] == "ann")
	}
	if !named {
		t.Fatal("the client key's friendlyName is not the user name")
	}

	// Connect with the package's certificate, then delete the user.
	tc := tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}
	c := e.app.DialTLS(t, &tc)
	if err := c.Send(takclient.SA("ANDROID-ann", "ANN", 1, 2)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "ann to appear in /Clients", func() bool {
		return strings.Contains(string(e.do("GET", "/Clients", "", nil).Body), "ANDROID-ann")
	})
	want(t, "delete ann", e.do("DELETE", "/ManageSystemUser/deleteSystemUser", e.admin, map[string]string{"id": annID}), 200)
	waitClosed(t, c.Done(), "ann's TLS CoT connection after her deletion")
	if !e.app.Authority().IsRevoked(cert.SerialNumber) {
		t.Fatal("the certificate is not revoked")
	}
	crl, _ := os.ReadFile(filepath.Join(e.app.Cfg.CertsPath, "crl.json"))
	if !strings.Contains(string(crl), `"`+new(big.Int).Set(cert.SerialNumber).String()+`"`) {
		t.Fatalf("crl.json lacks the serial:\n%s", crl)
	}
	// A new connection with that certificate is refused.
	c2, err := takclient.Dial(e.app.Addr(t, netx.ListenerCoTTLS), e.app.ClientTLS(&tc))
	if err == nil {
		defer c2.Close()
		c2.Send(takclient.SA("ANDROID-ann", "ANN", 1, 2))
		waitClosed(t, c2.Done(), "a new connection with the revoked certificate")
	}
	if n := e.count("data_packages", "hash = ?", hash); n != 0 {
		t.Fatal("the deleted user's package is still stored")
	}
	if _, err := os.Stat(filepath.Join(e.app.Cfg.CertsPath, "clientpackages", pkgName)); !os.IsNotExist(err) {
		t.Fatalf("package file still there: %v", err)
	}
	want(t, "package of a deleted user", e.do("GET", "/ManageSystemUser/certificatePackage?id="+annID, e.admin, nil), 404)
	want(t, "download by the old hash", e.do("GET", "/DataPackageTable/"+hash, e.admin, nil), 404)
}
