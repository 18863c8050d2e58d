package mgmt_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"net/http"
	"strings"
	"testing"
	"time"

	"outpost/appliance/config"
	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// fileShare is the <fileshare> of a b-f-t-r.
type fileShare struct {
	Filename       string `xml:"filename,attr"`
	SenderURL      string `xml:"senderUrl,attr"`
	SizeInBytes    int64  `xml:"sizeInBytes,attr"`
	SHA256         string `xml:"sha256,attr"`
	SenderUID      string `xml:"senderUid,attr"`
	SenderCallsign string `xml:"senderCallsign,attr"`
	Name           string `xml:"name,attr"`
}

// waitFileShare waits for the b-f-t-r a TAK client is sent and reads its
// <fileshare>.
func waitFileShare(t *testing.T, c *takclient.Client, within time.Duration) (*cot.Event, fileShare) {
	t.Helper()
	ev, err := c.WaitFor(takclient.Type("b-f-t-r"), within)
	if err != nil {
		t.Fatalf("no file transfer request: %v", err)
	}
	var d struct {
		FileShare fileShare `xml:"fileshare"`
		Ack       struct {
			UID       string `xml:"uid,attr"`
			Requested string `xml:"ackrequested,attr"`
		} `xml:"ackrequest"`
	}
	if err := xml.Unmarshal([]byte("<detail>"+string(ev.Detail.XML)+"</detail>"), &d); err != nil {
		t.Fatalf("detail %s: %v", ev.Detail.XML, err)
	}
	if d.Ack.UID == "" || d.Ack.Requested != "true" {
		t.Errorf("ackrequest %+v", d.Ack)
	}
	return ev, d.FileShare
}

// connectAs connects a TAK client over TCP that identifies itself with
// callsign.
func connectAs(t *testing.T, e *env, uid, callsign string) *takclient.Client {
	t.Helper()
	c := e.app.DialTCP(t)
	if err := c.Send(takclient.SA(uid, callsign, 10, 20)); err != nil {
		t.Fatal(err)
	}
	return c
}

func createWithCerts(t *testing.T, e *env, name string) (uid, pkg string) {
	t.Helper()
	r := e.do("POST", "/ManageSystemUser/postSystemUser", e.admin, map[string]any{"systemUsers": []map[string]any{
		{"Name": name, "Group": "Cyan", "Password": name + "-pw", "DeviceType": "mobile", "Certs": "true"}}})
	want(t, "create "+name, r, 201)
	var out usersAnswer
	r.JSON(t, &out)
	return out.SystemUsers[0].ID, out.SystemUsers[0].CertificatePackageName
}

// TestCertificatePackageOffer: a user created with Certs "true" is sent a
// file-transfer request for its connection package once a client with its
// name as callsign is connected over TCP (or at once when one already is);
// the link downloads the very package, a bounded number of times, and dies
// with the user; other clients get nothing; the request is not stored.
func TestCertificatePackageOffer(t *testing.T) {
	e := newEnv(t, offersOn)
	bystander := connectAs(t, e, "ANDROID-BYSTANDER", "bystander")

	// The device connects after the user is created.
	uid, pkg := createWithCerts(t, e, "ann")
	ann := connectAs(t, e, "ANDROID-ANN", "ann")
	ev, fs := waitFileShare(t, ann, 10*time.Second)
	if fs.Filename != pkg || fs.Name != strings.TrimSuffix(pkg, ".zip") || fs.SenderCallsign != "Outpost" ||
		!strings.HasPrefix(fs.SenderUID, "outpost-") || len(fs.SHA256) != 64 || fs.SizeInBytes <= 0 {
		t.Fatalf("fileshare %+v (package %s)", fs, pkg)
	}
	if d := ev.Stale.Sub(ev.Time); d < 9*time.Minute || d > 11*time.Minute {
		t.Fatalf("stale %v after time", d)
	}
	restPort := e.app.Addr(t, netx.ListenerREST)[strings.LastIndexByte(e.app.Addr(t, netx.ListenerREST), ':'):]
	if !strings.HasPrefix(fs.SenderURL, "http://127.0.0.1"+restPort+"/api/certpackage/") {
		t.Fatalf("senderUrl %s", fs.SenderURL)
	}
	// The link serves the package: the bytes the admin downloads, with
	// the hash and size the request announced.
	r := testkit.Do(t, nil, "GET", fs.SenderURL, nil)
	want(t, "download through the link", r, 200)
	sum := sha256.Sum256(r.Body)
	if hex.EncodeToString(sum[:]) != fs.SHA256 || int64(len(r.Body)) != fs.SizeInBytes {
		t.Fatalf("downloaded %d bytes, sha256 %x; announced %d, %s", len(r.Body), sum, fs.SizeInBytes, fs.SHA256)
	}
	admin := e.do("GET", "/ManageSystemUser/certificatePackage?id="+uid, e.admin, nil)
	if string(admin.Body) != string(r.Body) {
		t.Fatal("the link served other bytes than the user's package")
	}
	// The request went to ann's device alone, once, and is not kept.
	if got, err := bystander.WaitFor(takclient.Type("b-f-t-r"), 500*time.Millisecond); err == nil {
		t.Fatalf("a bystander got the request: %s", got.Detail.XML)
	}
	connectAs(t, e, "ANDROID-ANN-2", "ann") // a second device: the offer was used
	if _, err := ann.WaitFor(takclient.Type("b-f-t-r"), 500*time.Millisecond); err == nil {
		t.Fatal("the request was sent twice")
	}
	if r := testkit.Do(t, nil, "GET", e.app.URL(t, netx.ListenerHTTP, "/Marti/api/cot/xml/"+ev.UID), nil); r.Status != 404 {
		t.Fatalf("the request is kept in the history: %d %s", r.Status, r.Body)
	}
	// At most five downloads per link.
	for i := 2; i <= 5; i++ {
		want(t, "download again", testkit.Do(t, nil, "GET", fs.SenderURL, nil), 200)
	}
	want(t, "a sixth download", testkit.Do(t, nil, "GET", fs.SenderURL, nil), 404)

	// The device is connected before the user is created: sent at once.
	ben := connectAs(t, e, "ANDROID-BEN", "ben")
	testkit.WaitFor(t, "ben to be listed", func() bool {
		return strings.Contains(string(e.do("GET", "/Clients", e.admin, nil).Body), "ANDROID-BEN")
	})
	benUID, _ := createWithCerts(t, e, "ben")
	_, benFS := waitFileShare(t, ben, 10*time.Second)
	// Deleting the user kills its link.
	want(t, "delete ben", e.do("DELETE", "/ManageSystemUser/deleteSystemUser", e.admin, map[string]string{"id": benUID}), 200)
	if r := testkit.Do(t, nil, "GET", benFS.SenderURL, nil); r.Status != 404 || r.Message() != "ticket: unknown or expired download link" {
		t.Fatalf("link of a deleted user: %d %s", r.Status, r.Body)
	}
	// A user without certificates is offered nothing.
	e.do("POST", "/ManageSystemUser/postSystemUser", e.admin, map[string]any{"systemUsers": []map[string]any{
		{"Name": "cid", "Password": "cid-pw", "Certs": "false"}}})
	cid := connectAs(t, e, "ANDROID-CID", "cid")
	if _, err := cid.WaitFor(takclient.Type("b-f-t-r"), 500*time.Millisecond); err == nil {
		t.Fatal("a user without certificates was offered a package")
	}
}

// TestCertificatePackageLinkBadInput: a link that is not one is 404, never
// a 500, whatever its form.
func TestCertificatePackageLinkBadInput(t *testing.T) {
	e := newEnv(t, offersOn)
	for _, ticket := range []string{"x", strings.Repeat("A", 43), strings.Repeat("%25", 43), strings.Repeat("A", 4000),
		"..%2f..%2fetc%2fpasswd", "%00", strings.Repeat("!", 43), strings.Repeat("%C3%A9", 43)} {
		r := e.do("GET", "/api/certpackage/"+ticket, "", nil)
		if r.Status != http.StatusNotFound && r.Status != http.StatusBadRequest {
			t.Errorf("ticket %.40q: %d %s", ticket, r.Status, r.Body)
		}
		if r.Status >= 500 || r.Message() == "" {
			t.Errorf("ticket %.40q: %d %s", ticket, r.Status, r.Body)
		}
	}
}

// TestCertificatePackageOfferExpires: an offer whose device does not
// connect within certOfferWait is dropped; certOfferWait 0 sends none.
func TestCertificatePackageOfferExpires(t *testing.T) {
	for _, tc := range []struct {
		name string
		wait time.Duration
		log  string
	}{
		{"expired", 200 * time.Millisecond, "certificate package offer expired"},
		{"off", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *config.Config) { c.CertOfferWait = tc.wait })
			createWithCerts(t, e, "dan")
			time.Sleep(3 * tc.wait)
			dan := connectAs(t, e, "ANDROID-DAN", "dan")
			if _, err := dan.WaitFor(takclient.Type("b-f-t-r"), time.Second); err == nil {
				t.Fatal("a package was offered after the offer expired or with offers off")
			}
			if tc.log != "" && !strings.Contains(e.logs.String(), tc.log) {
				t.Fatalf("no %q in the log", tc.log)
			}
		})
	}
}

// offersOn turns on the offer of certificate packages to devices (off by
// default: a callsign proves nothing), for an hour.
func offersOn(c *config.Config) { c.CertOfferWait = time.Hour }
