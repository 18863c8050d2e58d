package mgmt_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"outpost/internal/testkit"
)

type route struct{ method, path string }

// every protected route of the management API.
var protectedRoutes = []route{
	{"GET", "/ManageSystemUser/getAll"},
	{"GET", "/ManageSystemUser/getSystemUser?username=x"},
	{"POST", "/ManageSystemUser/postSystemUser"},
	{"PUT", "/ManageSystemUser/putSystemUser"},
	{"DELETE", "/ManageSystemUser/deleteSystemUser"},
	{"GET", "/ManageSystemUser/certificatePackage?id=x"},
	{"GET", "/DataPackageTable"},
	{"POST", "/DataPackageTable?filename=a&creatorUid=b"},
	{"PUT", "/DataPackageTable"},
	{"DELETE", "/DataPackageTable"},
	{"GET", "/DataPackageTable/" + strings.Repeat("0", 64)},
	{"GET", "/api/users"},
	{"POST", "/ManageGeoObject/postGeoObject"},
	{"PUT", "/ManageGeoObject/putGeoObject"},
	{"GET", "/ManageGeoObject/getGeoObject?latitude=1&longitude=1"},
	{"GET", "/ManageGeoObject/GetRepeatedMessages"},
	{"DELETE", "/ManageGeoObject/DeleteRepeatedMessage?ids=x"},
	{"GET", "/ManageEmergency/getEmergency"},
	{"POST", "/ManageEmergency/postEmergency"},
	{"DELETE", "/ManageEmergency/deleteEmergency"},
}

// clientFrom is an HTTP client whose connections come from source address
// ip (any 127.0.0.0/8 address is local on Linux), so each case of a test
// can have its own failure budget.
func clientFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		return nil
	}
	l.Close()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, n, a string) (net.Conn, error) {
		return d.DialContext(ctx, n, a)
	}}}
}

// TestBadInput: every route refuses a missing or wrong token, a malformed
// body, each missing required field and wrongly typed values with a 4xx
// whose message names the field, and changes nothing in the database.
func TestBadInput(t *testing.T) {
	e := newEnv(t, nil)
	uid, _ := e.createUser("kim", "kim-pw")
	want(t, "seed package", e.upload(e.admin, "?filename=a.txt&creatorUid=ANDROID-1", "assetfile", []byte("hello")), 200)
	var pk string
	e.db().QueryRow(`SELECT id FROM data_packages`).Scan(&pk)
	before := e.snapshot()

	t.Run("no token", func(t *testing.T) {
		for _, rt := range protectedRoutes {
			r := e.do(rt.method, rt.path, "", `{}`)
			want(t, rt.method+" "+rt.path, r, 401)
		}
	})
	t.Run("wrong token", func(t *testing.T) {
		for i, rt := range protectedRoutes {
			c := clientFrom(t, fmt.Sprintf("127.0.0.%d", 10+i))
			if c == nil {
				t.Skip("no second loopback address here; the per-route wrong-token check needs one per route")
			}
			r := testkit.Do(t, c, rt.method, e.base+rt.path, `{}`, "Authorization", "Bearer wrong-token-0123456789")
			want(t, rt.method+" "+rt.path, r, 401)
			if r.Message() != "unknown or expired token" {
				t.Fatalf("%s %s: %q", rt.method, rt.path, r.Message())
			}
		}
	})
	sameSnapshot(t, "unauthenticated requests", before, e.snapshot())

	long := strings.Repeat("x", 300)
	type tc struct {
		name, method, path string
		body               any
		status             int
		field              string // the message must start with it
	}
	users := "/ManageSystemUser/"
	cases := []tc{
		// getSystemUser
		{"get: malformed", "GET", users + "getSystemUser", `{"username":`, 400, "malformed JSON"},
		{"get: no criteria", "GET", users + "getSystemUser", `{}`, 400, "username or id:"},
		{"get: username type", "GET", users + "getSystemUser", `{"username":5}`, 400, "username: must be a string"},
		{"get: id type", "GET", users + "getSystemUser", `{"id":[1]}`, 400, "id: must be a string"},
		// postSystemUser, flat
		{"post: malformed", "POST", users + "postSystemUser", `{"username":"a",}`, 400, "malformed JSON"},
		{"post: empty body", "POST", users + "postSystemUser", ``, 400, "request body is empty"},
		{"post: array body", "POST", users + "postSystemUser", `[]`, 400, "the body must be an object"},
		{"post: username missing", "POST", users + "postSystemUser", `{"password":"p"}`, 400, "username: required"},
		{"post: password missing", "POST", users + "postSystemUser", `{"username":"zed"}`, 400, "password: required"},
		{"post: username type", "POST", users + "postSystemUser", `{"username":7,"password":"p"}`, 400, "username: must be a string"},
		{"post: password type", "POST", users + "postSystemUser", `{"username":"zed","password":true}`, 400, "password: must be a string"},
		{"post: token short", "POST", users + "postSystemUser", `{"username":"zed","password":"p","token":"short"}`, 400, "token: must be at least 16"},
		{"post: username too long", "POST", users + "postSystemUser", `{"username":"` + long + `","password":"p"}`, 400, "username:"},
		{"post: control character", "POST", users + "postSystemUser", `{"username":"a\u0007b","password":"p"}`, 400, "username: contains a control character"},
		// postSystemUser, batch
		{"batch: not an array", "POST", users + "postSystemUser", `{"systemUsers":{"Name":"a"}}`, 400, "systemUsers: must be an array"},
		{"batch: empty", "POST", users + "postSystemUser", `{"systemUsers":[]}`, 400, "systemUsers: must hold 1 to"},
		{"batch: item not an object", "POST", users + "postSystemUser", `{"systemUsers":["zed"]}`, 400, "systemUsers[0]: must be an object"},
		{"batch: Name missing", "POST", users + "postSystemUser", `{"systemUsers":[{"Password":"p"}]}`, 400, "systemUsers[0].Name: required"},
		{"batch: Password missing", "POST", users + "postSystemUser", `{"systemUsers":[{"Name":"zed"}]}`, 400, "systemUsers[0].Password: required"},
		{"batch: Name type", "POST", users + "postSystemUser", `{"systemUsers":[{"Name":1,"Password":"p"}]}`, 400, "systemUsers[0].Name: must be a string"},
		{"batch: Certs value", "POST", users + "postSystemUser", `{"systemUsers":[{"Name":"zed","Password":"p","Certs":"maybe"}]}`, 400, "systemUsers[0].Certs:"},
		{"batch: Certs type", "POST", users + "postSystemUser", `{"systemUsers":[{"Name":"zed","Password":"p","Certs":1}]}`, 400, "systemUsers[0].Certs:"},
		{"batch: DeviceType value", "POST", users + "postSystemUser", `{"systemUsers":[{"Name":"zed","Password":"p","DeviceType":"phone"}]}`, 400, "systemUsers[0].DeviceType: must be mobile, desktop"},
		{"batch: DeviceType type", "POST", users + "postSystemUser", `{"systemUsers":[{"Name":"zed","Password":"p","DeviceType":3}]}`, 400, "systemUsers[0].DeviceType: must be a string"},
		{"batch: Token short", "POST", users + "postSystemUser", `{"systemUsers":[{"Name":"zed","Password":"p","Token":"abc"}]}`, 400, "systemUsers[0].Token:"},
		{"batch: duplicate names", "POST", users + "postSystemUser", `{"systemUsers":[{"Name":"zed","Password":"p"},{"Name":"zed","Password":"q"}]}`, 400, "systemUsers[1].Name:"},
		{"batch: file-unsafe name with certs", "POST", users + "postSystemUser", `{"systemUsers":[{"Name":"../zed","Password":"p","Certs":"true"}]}`, 400, "systemUsers[0].Name:"},
		{"batch: a bad second item creates nothing", "POST", users + "postSystemUser", `{"systemUsers":[{"Name":"ok-user","Password":"p"},{"Name":"zed"}]}`, 400, "systemUsers[1].Password: required"},
		// putSystemUser
		{"put: malformed", "PUT", users + "putSystemUser", `{`, 400, "malformed JSON"},
		{"put: id missing", "PUT", users + "putSystemUser", `{"username":"zed"}`, 400, "id: required"},
		{"put: id type", "PUT", users + "putSystemUser", `{"id":5,"username":"zed"}`, 400, "id: must be a string"},
		{"put: nothing to change", "PUT", users + "putSystemUser", `{"id":"` + uid + `"}`, 400, "username, password or token:"},
		{"put: token short", "PUT", users + "putSystemUser", `{"id":"` + uid + `","token":"x"}`, 400, "token: must be at least"},
		{"put: empty username", "PUT", users + "putSystemUser", `{"id":"` + uid + `","username":""}`, 400, "username: required"},
		{"put: unknown id", "PUT", users + "putSystemUser", `{"id":"nobody","password":"p"}`, 404, "id: no system user"},
		{"put batch: uid missing", "PUT", users + "putSystemUser", `{"systemUsers":[{"Token":"tok-0123456789abcdef"}]}`, 400, "systemUsers[0].uid: required"},
		{"put batch: nothing to change", "PUT", users + "putSystemUser", `{"systemUsers":[{"uid":"` + uid + `"}]}`, 400, "systemUsers[0]: Token, Password or Group: at least one is required"},
		{"put batch: Password type", "PUT", users + "putSystemUser", `{"systemUsers":[{"uid":"` + uid + `","Password":5}]}`, 400, "systemUsers[0].Password: must be a string"},
		{"put batch: Group bad", "PUT", users + "putSystemUser", `{"systemUsers":[{"uid":"` + uid + `","Group":"a\u0001b"}]}`, 400, "systemUsers[0].Group:"},
		{"put batch: same uid twice", "PUT", users + "putSystemUser", `{"systemUsers":[{"uid":"` + uid + `","Password":"p"},{"uid":"` + uid + `","Token":"tok-0123456789abcdef"}]}`, 400, "systemUsers[1].uid: the same user as systemUsers[0]"},
		{"put batch: uid type", "PUT", users + "putSystemUser", `{"systemUsers":[{"uid":1,"Token":"tok-0123456789abcdef"}]}`, 400, "systemUsers[0].uid: must be a string"},
		{"put batch: empty", "PUT", users + "putSystemUser", `{"systemUsers":[]}`, 400, "systemUsers: must hold"},
		// deleteSystemUser
		{"delete: malformed", "DELETE", users + "deleteSystemUser", `{"id"}`, 400, "malformed JSON"},
		{"delete: id missing", "DELETE", users + "deleteSystemUser", `{}`, 400, "id: required"},
		{"delete: id type", "DELETE", users + "deleteSystemUser", `{"id":false}`, 400, "id: must be a string"},
		{"delete: both shapes", "DELETE", users + "deleteSystemUser", `{"id":"` + uid + `","systemUsers":[{"uid":"` + uid + `"}]}`, 400, "id: send either"},
		{"delete batch: uid missing", "DELETE", users + "deleteSystemUser", `{"systemUsers":[{}]}`, 400, "systemUsers[0].uid: required"},
		{"delete batch: not an array", "DELETE", users + "deleteSystemUser", `{"systemUsers":"` + uid + `"}`, 400, "systemUsers: must be an array"},
		// certificatePackage
		{"certificate package: no user named", "GET", users + "certificatePackage", nil, 400, "id or username:"},
		{"certificate package: none", "GET", users + "certificatePackage?id=" + uid, nil, 404, "this user has no certificate package"},
		// POST /DataPackageTable
		{"upload: filename missing", "POST", "/DataPackageTable?creatorUid=b", "x", 400, "filename: required"},
		{"upload: creatorUid missing", "POST", "/DataPackageTable?filename=a", "x", 400, "creatorUid: required"},
		{"upload: not multipart", "POST", "/DataPackageTable?filename=a&creatorUid=b", `{"assetfile":"x"}`, 400, "assetfile:"},
		// PUT /DataPackageTable
		{"update: malformed", "PUT", "/DataPackageTable", `{"DataPackages":[}`, 400, "malformed JSON"},
		{"update: DataPackages missing", "PUT", "/DataPackageTable", `{}`, 400, "DataPackages: required"},
		{"update: DataPackages type", "PUT", "/DataPackageTable", `{"DataPackages":{}}`, 400, "DataPackages: must be an array"},
		{"update: empty", "PUT", "/DataPackageTable", `{"DataPackages":[]}`, 400, "DataPackages: must hold"},
		{"update: PrimaryKey missing", "PUT", "/DataPackageTable", `{"DataPackages":[{"Name":"b"}]}`, 400, "DataPackages[0].PrimaryKey: required"},
		{"update: PrimaryKey not a number", "PUT", "/DataPackageTable", `{"DataPackages":[{"PrimaryKey":"abc"}]}`, 400, "DataPackages[0].PrimaryKey: must be a positive"},
		{"update: PrimaryKey type", "PUT", "/DataPackageTable", `{"DataPackages":[{"PrimaryKey":true}]}`, 400, "DataPackages[0].PrimaryKey: must be a whole number"},
		{"update: Privacy value", "PUT", "/DataPackageTable", `{"DataPackages":[{"PrimaryKey":` + pk + `,"Privacy":2}]}`, 400, "DataPackages[0].Privacy:"},
		{"update: Privacy type", "PUT", "/DataPackageTable", `{"DataPackages":[{"PrimaryKey":` + pk + `,"Privacy":"yes"}]}`, 400, "DataPackages[0].Privacy:"},
		{"update: Keywords type", "PUT", "/DataPackageTable", `{"DataPackages":[{"PrimaryKey":` + pk + `,"Keywords":5}]}`, 400, "DataPackages[0].Keywords:"},
		{"update: Keywords item type", "PUT", "/DataPackageTable", `{"DataPackages":[{"PrimaryKey":` + pk + `,"Keywords":["a",1]}]}`, 400, "DataPackages[0].Keywords[1]:"},
		{"update: Name type", "PUT", "/DataPackageTable", `{"DataPackages":[{"PrimaryKey":` + pk + `,"Name":5}]}`, 400, "DataPackages[0].Name: must be a string"},
		{"update: Name empty", "PUT", "/DataPackageTable", `{"DataPackages":[{"PrimaryKey":` + pk + `,"Name":""}]}`, 400, "DataPackages[0].Name: required"},
		{"update: a bad second item changes nothing", "PUT", "/DataPackageTable", `{"DataPackages":[{"PrimaryKey":` + pk + `,"Name":"new"},{"PrimaryKey":` + pk + `,"Privacy":7}]}`, 400, "DataPackages[1].Privacy:"},
		// DELETE /DataPackageTable
		{"remove: DataPackages missing", "DELETE", "/DataPackageTable", `{"x":1}`, 400, "DataPackages: required"},
		{"remove: hash missing", "DELETE", "/DataPackageTable", `{"DataPackages":[{}]}`, 400, "DataPackages[0].hash: required"},
		{"remove: hash not hex", "DELETE", "/DataPackageTable", `{"DataPackages":[{"hash":"xyz"}]}`, 400, "DataPackages[0].hash: must be a SHA-256"},
		{"remove: hash type", "DELETE", "/DataPackageTable", `{"DataPackages":[{"hash":12}]}`, 400, "DataPackages[0].hash: must be a string"},
		{"remove: malformed", "DELETE", "/DataPackageTable", `nope`, 400, "malformed JSON"},
		// download
		{"download: bad hash", "GET", "/DataPackageTable/not-a-hash", nil, 400, "hash: must be a SHA-256"},
		{"download: unknown hash", "GET", "/DataPackageTable/" + strings.Repeat("0", 64), nil, 404, "hash: no data package"},
		// login
		{"login: malformed", "POST", "/api/login", `{"username":"kim","password":}`, 400, "malformed JSON"},
		{"login: username missing", "POST", "/api/login", `{"password":"p"}`, 400, "username: required"},
		{"login: password missing", "POST", "/api/login", `{"username":"kim"}`, 400, "password: required"},
		{"login: username type", "POST", "/api/login", `{"username":["kim"],"password":"p"}`, 400, "username: must be a string"},
		// limits
		{"body too large", "POST", users + "postSystemUser", `{"username":"` + strings.Repeat("y", 1<<20) + `"}`, 413, "request body larger than"},
		{"unknown route", "GET", "/ManageSystemUser/nothing", nil, 404, "no such endpoint"},
		{"wrong method", "POST", "/ManageSystemUser/getAll", nil, 405, "method POST not allowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(c.method, c.path, e.admin, c.body, "Content-Type", "application/json")
			want(t, c.name, r, c.status)
			if !strings.HasPrefix(r.Message(), c.field) {
				t.Fatalf("message %q does not start with %q", r.Message(), c.field)
			}
			sameSnapshot(t, c.name, before, e.snapshot())
		})
	}

	// Multipart bodies that are wrong in their own ways.
	multipartCases := []struct {
		name  string
		build func(mw *multipart.Writer)
		field string
	}{
		{"no assetfile field", func(mw *multipart.Writer) { mw.WriteField("other", "x") }, "assetfile: required"},
		{"the file under another name", func(mw *multipart.Writer) { fw, _ := mw.CreateFormFile("file", "a.bin"); fw.Write([]byte("data")) }, "assetfile: required"},
	}
	for _, c := range multipartCases {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		c.build(mw)
		mw.Close()
		r := e.do("POST", "/DataPackageTable?filename=a&creatorUid=b", e.admin, b.Bytes(), "Content-Type", mw.FormDataContentType())
		want(t, c.name, r, 400)
		if !strings.HasPrefix(r.Message(), c.field) {
			t.Fatalf("%s: message %q", c.name, r.Message())
		}
	}
	r := e.do("POST", "/DataPackageTable?filename=a&creatorUid=b", e.admin, "--x\r\nbroken", "Content-Type", "multipart/form-data; boundary=x")
	want(t, "malformed multipart", r, 400)
	if !strings.HasPrefix(r.Message(), "assetfile:") {
		t.Fatalf("malformed multipart: %q", r.Message())
	}
	sameSnapshot(t, "bad uploads", before, e.snapshot())
}
