package mgmt_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"outpost/appliance/netx"
	"outpost/internal/testkit"
)

type invitationAnswer struct {
	ID       string `json:"id"`
	UserID   string `json:"userId"`
	User     string `json:"user"`
	Device   string `json:"device"`
	Created  string `json:"created"`
	Expires  string `json:"expires"`
	Uses     int    `json:"uses"`
	UsesLeft int    `json:"usesLeft"`
	State    string `json:"state"`
	Token    string `json:"token"`
	ATAK     struct{ Text, PNG string }
	ITAK     struct{ Text, PNG string }
	WinTAK   struct {
		URL string `json:"url"`
	} `json:"wintak"`
}

// TestInvitationsAPI: an administrator invites a user, the codes read
// back by zbarimg say what the answer says, the ATAK code's credentials
// enroll once on the enrollment port, and the listing and revocation hold
// no token. Every documented error is checked.
func TestInvitationsAPI(t *testing.T) {
	e := newEnv(t, nil)
	r := e.do("POST", "/ManageSystemUser/postSystemUser", e.admin, map[string]string{"username": "kim", "password": "kim-pw-1"})
	want(t, "create kim", r, 201)
	var created usersAnswer
	r.JSON(t, &created)
	kimID, kimToken := created.SystemUsers[0].ID, created.SystemUsers[0].Token

	r = e.do("POST", "/api/users/"+kimID+"/invitations", e.admin, nil)
	want(t, "invite with defaults", r, 201)
	var inv invitationAnswer
	r.JSON(t, &inv)
	if inv.User != "kim" || inv.UserID != kimID || inv.Device != "atak" || inv.Uses != 1 || inv.UsesLeft != 1 || inv.State != "active" || len(inv.Token) != 43 {
		t.Fatalf("answer %s", r.Body)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", r.Header.Get("Cache-Control"))
	}
	for name, c := range map[string]struct{ text, png string }{"atak": {inv.ATAK.Text, inv.ATAK.PNG}, "itak": {inv.ITAK.Text, inv.ITAK.PNG}} {
		img, err := base64.StdEncoding.DecodeString(c.png)
		if err != nil {
			t.Fatalf("%s png: %v", name, err)
		}
		if got := testkit.DecodeQR(t, img); got != c.text {
			t.Errorf("%s code reads %q, the answer says %q", name, got, c.text)
		}
	}
	enrollAddr := e.app.Addr(t, netx.ListenerEnroll)
	_, sslPort, _ := strings.Cut(e.app.Addr(t, netx.ListenerCoTTLS), ":")
	if want := "outpost,127.0.0.1," + sslPort + ",SSL"; inv.ITAK.Text != want {
		t.Errorf("iTAK text %q, want %q", inv.ITAK.Text, want)
	}
	_, enrollPort, _ := strings.Cut(enrollAddr, ":")
	if want := "https://127.0.0.1:" + enrollPort + "/Marti/api/tls/enrollment-package?device=wintak"; inv.WinTAK.URL != want {
		t.Errorf("WinTAK link %q, want %q", inv.WinTAK.URL, want)
	}
	u, err := url.Parse(inv.ATAK.Text)
	if err != nil || u.Scheme != "tak" || u.Host != "com.atakmap.app" || u.Path != "/enroll" {
		t.Fatalf("ATAK code %q: %v", inv.ATAK.Text, err)
	}
	q := u.Query()
	if q.Get("host") != "127.0.0.1:"+sslPort || q.Get("username") != "kim" || q.Get("token") != inv.Token {
		t.Fatalf("ATAK code fields %v", q)
	}
	for _, secret := range []string{inv.ITAK.Text, inv.WinTAK.URL} {
		if strings.Contains(secret, inv.Token) {
			t.Fatalf("a code without credentials carries the token: %q", secret)
		}
	}

	// Enroll with what the ATAK code says: one certificate, then 401.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: e.app.ClientTLS(nil)}}
	sign := func() int {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		csr, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "kim"}}, key)
		req, _ := http.NewRequest("POST", "https://"+enrollAddr+"/Marti/api/tls/signClient/v2?clientUid=ANDROID-kim", strings.NewReader(base64.StdEncoding.EncodeToString(csr)))
		req.SetBasicAuth(q.Get("username"), q.Get("token"))
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if s := sign(); s != 200 {
		t.Fatalf("enrollment with the invitation: %d", s)
	}
	if s := sign(); s != 401 {
		t.Fatalf("second enrollment with a spent one-use invitation: %d", s)
	}

	// Listing: never a token; filtered by user; the spent one is "used".
	r = e.do("POST", "/api/users/"+kimID+"/invitations", e.admin, map[string]any{"expires": "2h", "uses": 3, "device": "wintak"})
	want(t, "invite with a body", r, 201)
	var second invitationAnswer
	r.JSON(t, &second)
	if second.Uses != 3 || second.Device != "wintak" || !strings.HasSuffix(second.WinTAK.URL, "device=wintak") {
		t.Fatalf("second invitation %s", r.Body)
	}
	r = e.do("GET", "/api/invitations?user="+kimID, e.admin, nil)
	want(t, "list", r, 200)
	if strings.Contains(string(r.Body), inv.Token) || strings.Contains(string(r.Body), second.Token) || strings.Contains(string(r.Body), `"token"`) {
		t.Fatalf("the listing holds a token: %s", r.Body)
	}
	var list struct {
		Invitations []invitationAnswer `json:"invitations"`
	}
	r.JSON(t, &list)
	states := map[string]string{}
	for _, it := range list.Invitations {
		states[it.ID] = it.State
	}
	if len(list.Invitations) != 2 || states[inv.ID] != "used" || states[second.ID] != "active" {
		t.Fatalf("listing %s", r.Body)
	}
	want(t, "revoke", e.do("DELETE", "/api/invitations/"+second.ID, e.admin, nil), 204)
	r = e.do("GET", "/api/invitations", e.admin, nil)
	r.JSON(t, &list)
	for _, it := range list.Invitations {
		if it.ID == second.ID && it.State != "revoked" {
			t.Fatalf("after revocation: %s", r.Body)
		}
	}

	// Errors.
	for name, body := range map[string]any{
		"expires word":   map[string]any{"expires": "soon"},
		"expires 31d":    map[string]any{"expires": "31d"},
		"expires number": map[string]any{"expires": 5},
		"uses 0":         map[string]any{"uses": 0},
		"uses 101":       map[string]any{"uses": 101},
		"uses 1.5":       map[string]any{"uses": 1.5},
		"device":         map[string]any{"device": "palm"},
		"device empty":   map[string]any{"device": ""},
		"not json":       "{",
		"array":          "[]",
	} {
		want(t, name, e.do("POST", "/api/users/"+kimID+"/invitations", e.admin, body), 400)
	}
	want(t, "huge body", e.do("POST", "/api/users/"+kimID+"/invitations", e.admin, strings.Repeat(" ", 8<<10)+"{}"), 413)
	want(t, "unknown user", e.do("POST", "/api/users/nobody/invitations", e.admin, nil), 404)
	want(t, "list of an unknown user", e.do("GET", "/api/invitations?user=nobody", e.admin, nil), 404)
	want(t, "revoke unknown", e.do("DELETE", "/api/invitations/nope", e.admin, nil), 404)
	want(t, "a user invites", e.do("POST", "/api/users/"+kimID+"/invitations", kimToken, nil), 403)
	want(t, "a user lists", e.do("GET", "/api/invitations", kimToken, nil), 403)
	want(t, "a user revokes", e.do("DELETE", "/api/invitations/"+inv.ID, kimToken, nil), 403)
	want(t, "no token", e.do("GET", "/api/invitations", "", nil), 401)

	// Nothing of the token in the server's log; the invitation by its id.
	logs := e.logs.String()
	if strings.Contains(logs, inv.Token) || strings.Contains(logs, second.Token) {
		t.Fatal("a token is in the log")
	}
	if !strings.Contains(logs, inv.ID) {
		t.Errorf("the log does not name invitation %s", inv.ID)
	}
}
