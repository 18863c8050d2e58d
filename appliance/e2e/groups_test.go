package e2e

// End-to-end tests of groups (access.md "Groups") on the real binary: what
// the scenarios share. Each scenario starts one outpost, makes its groups
// and certificate users through the management API with the first run's
// admin token, takes each user's certificate from the connection package
// the API hands out (as an operator gives it to a device), and connects the
// users over mutual TLS (8089, 8443) and anonymous clients over 8087 and
// 8080. groups_delivery_test.go holds what reaches whom over CoT,
// groups_listings_test.go what the client and management APIs list.
//
// The layout of the grouped scenarios:
//
//	ann  Red both ways
//	bob  Blue both ways
//	cy   Red IN only, Blue OUT only: sends to Red, hears Blue
//	dee  Red and Blue, both ways
//
// so S reaches R (S.IN ∩ R.OUT) as in sees below, and anonymous clients
// (__ANON__) reach only each other.

import (
	"archive/zip"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"outpost/appliance/admin"
	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// sees is the grouped layout's delivery rule: for each receiver, the
// senders whose events reach it (S.IN ∩ R.OUT, never itself).
var sees = map[string][]string{
	"ann":   {"cy", "dee"},
	"bob":   {"dee"},
	"cy":    {"bob", "dee"},
	"dee":   {"ann", "bob", "cy"},
	"anon1": {"anon2"},
	"anon2": {"anon1"},
}

// eventWait bounds every wait for an event that must come.
const eventWait = 15 * time.Second

// groupsServer is one running outpost with its TLS listeners on.
type groupsServer struct {
	p     *testkit.Proc
	admin string // the first run's admin token (admin.token)
	mgmt  string // http://host:port of the management API
	http  string // http://host:port of the anonymous client API (8080)
	https string // https://host:port of the client API with certificates (8443)
}

// startGroupsServer runs the binary with CoT TLS and the 8443 client API on
// free ports (ECDSA keys: certificates are issued in milliseconds).
func startGroupsServer(t *testing.T) *groupsServer {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	p := testkit.Start(t, filepath.Join(t.TempDir(), "data"), "--ssl-cot-port", "0", "--https-port", "0",
		"--key-type", "ecdsa-p256", "--log-level", "info")
	tok, err := os.ReadFile(filepath.Join(p.DataDir, admin.AdminTokenFile))
	if err != nil {
		t.Fatalf("first run wrote no admin token: %v", err)
	}
	return &groupsServer{p: p, admin: strings.TrimSpace(string(tok)),
		mgmt: "http://" + p.Addr(t, netx.ListenerREST), http: "http://" + p.Addr(t, netx.ListenerHTTP),
		https: "https://" + p.Addr(t, netx.ListenerHTTPS)}
}

// api calls the management API with a bearer token and wants status.
func (s *groupsServer) api(t *testing.T, token, method, route string, body any, status int) testkit.Response {
	t.Helper()
	r := testkit.Do(t, nil, method, s.mgmt+route, body, "Authorization", "Bearer "+token)
	if r.Status != status {
		t.Fatalf("%s %s: %d %s, want %d", method, route, r.Status, r.Body, status)
	}
	return r
}

// createGroup makes a group through POST /api/groups and returns its bit.
func (s *groupsServer) createGroup(t *testing.T, name, description string) int {
	t.Helper()
	var g struct {
		Name   string `json:"name"`
		Bitpos int    `json:"bitpos"`
	}
	s.api(t, s.admin, "POST", "/api/groups", map[string]string{"name": name, "description": description}, 201).JSON(t, &g)
	if g.Name != name || g.Bitpos < 0 || g.Bitpos > 63 || g.Bitpos == 2 {
		t.Fatalf("group %s created as %+v", name, g)
	}
	return g.Bitpos
}

// groupUser is a system user with its certificate and its management token.
type groupUser struct {
	name  string
	id    string // the system user's uid (ManageSystemUser id)
	token string
	tls   *tls.Config  // its certificate, trusting the server's CA from its package
	hc    *http.Client // 8443 with its certificate
}

// createUsers makes system users with certificates in one postSystemUser
// batch (group: the seed's Group field, "" for none) and reads each one's
// certificate out of its connection package.
func (s *groupsServer) createUsers(t *testing.T, groups map[string]string) map[string]*groupUser {
	t.Helper()
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)
	batch := []map[string]any{}
	for _, n := range names {
		u := map[string]any{"Name": n, "Password": n + " has a password", "DeviceType": "mobile", "Certs": "true"}
		if groups[n] != "" {
			u["Group"] = groups[n]
		}
		batch = append(batch, u)
	}
	var created struct {
		SystemUsers []struct {
			ID       string `json:"id"`
			Username string `json:"username"`
			Token    string `json:"token"`
			Group    string `json:"Group"`
			Certs    string `json:"Certs"`
		} `json:"SystemUsers"`
	}
	s.api(t, s.admin, "POST", "/ManageSystemUser/postSystemUser", map[string]any{"systemUsers": batch}, 201).JSON(t, &created)
	if len(created.SystemUsers) != len(names) {
		t.Fatalf("%d users created, want %d", len(created.SystemUsers), len(names))
	}
	out := map[string]*groupUser{}
	for _, c := range created.SystemUsers {
		// The Group field comes back as the sorted list of the user's groups.
		wantGroups := strings.Split(groups[c.Username], ",")
		sort.Strings(wantGroups)
		if c.Token == "" || c.Certs != "true" || c.Group != strings.Join(wantGroups, ",") {
			t.Fatalf("user %s created as %+v (group field %q)", c.Username, c, groups[c.Username])
		}
		pkg := s.api(t, s.admin, "GET", "/ManageSystemUser/certificatePackage?id="+c.ID, nil, 200)
		cfg := certFromPackage(t, c.Username, pkg.Body)
		hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
		t.Cleanup(hc.CloseIdleConnections)
		out[c.Username] = &groupUser{name: c.Username, id: c.ID, token: c.Token, tls: cfg, hc: hc}
	}
	return out
}

// createGroupedUsers makes the grouped layout (package comment): the groups
// through POST /api/groups, ann, bob and dee with the seed's Group field,
// cy with PUT /api/users/{uid}/groups. It returns the users and the groups'
// bits.
func (s *groupsServer) createGroupedUsers(t *testing.T) (map[string]*groupUser, map[string]int) {
	t.Helper()
	bits := map[string]int{"Red": s.createGroup(t, "Red", "the red team"), "Blue": s.createGroup(t, "Blue", "the blue team")}
	if bits["Red"] == bits["Blue"] {
		t.Fatalf("Red and Blue share bit %d", bits["Red"])
	}
	users := s.createUsers(t, map[string]string{"ann": "Red", "bob": "Blue", "cy": "", "dee": "Red,Blue"})
	var cy struct {
		Groups []struct {
			Name      string `json:"name"`
			Direction string `json:"direction"`
			ActiveIn  bool   `json:"activeIn"`
			ActiveOut bool   `json:"activeOut"`
		} `json:"groups"`
	}
	s.api(t, s.admin, "PUT", "/api/users/"+users["cy"].id+"/groups", map[string]any{"groups": []map[string]string{
		{"name": "Red", "direction": "IN"}, {"name": "Blue", "direction": "OUT"},
	}}, 200).JSON(t, &cy)
	got := []string{}
	for _, g := range cy.Groups {
		got = append(got, fmt.Sprintf("%s %s in=%v out=%v", g.Name, g.Direction, g.ActiveIn, g.ActiveOut))
	}
	sort.Strings(got)
	if want := []string{"Blue OUT in=false out=true", "Red IN in=true out=false"}; !slices.Equal(got, want) {
		t.Fatalf("cy's groups %v, want %v", got, want)
	}
	return users, bits
}

// certFromPackage reads a connection package as ATAK imports it: the
// .pref names the client .p12, the truststore and their password.
func certFromPackage(t *testing.T, name string, data []byte) *tls.Config {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("%s's certificate package is not a ZIP: %v", name, err)
	}
	files := map[string][]byte{}
	prefs := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		files[path.Base(f.Name)] = b
		if strings.HasSuffix(f.Name, ".pref") {
			var doc struct {
				Preferences []struct {
					Entries []struct {
						Key   string `xml:"key,attr"`
						Value string `xml:",chardata"`
					} `xml:"entry"`
				} `xml:"preference"`
			}
			if err := xml.Unmarshal(b, &doc); err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			for _, p := range doc.Preferences {
				for _, e := range p.Entries {
					prefs[e.Key] = e.Value
				}
			}
		}
	}
	pw := prefs["clientPassword"]
	client, trust := files[path.Base(prefs["certificateLocation"])], files[path.Base(prefs["caLocation"])]
	if pw == "" || client == nil || trust == nil {
		t.Fatalf("%s's package names no usable certificate (prefs %v, files %d)", name, prefs, len(files))
	}
	key, cert, cas, err := pkcs12.DecodeChain(client, pw)
	if err != nil {
		t.Fatalf("%s's .p12: %v", name, err)
	}
	if cert.Subject.CommonName != name {
		t.Fatalf("%s's certificate is for %q", name, cert.Subject.CommonName)
	}
	roots, err := pkcs12.DecodeTrustStore(trust, prefs["caPassword"])
	if err != nil {
		t.Fatalf("%s's truststore: %v", name, err)
	}
	pool := x509.NewCertPool()
	for _, c := range roots {
		pool.AddCert(c)
	}
	chain := [][]byte{cert.Raw}
	for _, c := range cas {
		chain = append(chain, c.Raw)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: chain, PrivateKey: key, Leaf: cert}},
		RootCAs: pool, ServerName: "127.0.0.1"}
}

// peer is one CoT connection and what it received that no fence has
// consumed yet.
type peer struct {
	name     string
	uid      string // the uid of its position reports
	callsign string
	c        *takclient.Client
	got      []*cot.Event
}

// dialCoT connects a user over mutual TLS (8089), or an anonymous client over
// TCP (8087) when u is nil.
func (s *groupsServer) dialCoT(t *testing.T, name string, u *groupUser) *peer {
	t.Helper()
	addr, cfg := s.p.Addr(t, netx.ListenerCoTTCP), (*tls.Config)(nil)
	if u != nil {
		addr, cfg = s.p.Addr(t, netx.ListenerCoTTLS), u.tls
	}
	c, err := takclient.Dial(addr, cfg)
	if err != nil {
		t.Fatalf("%s cannot connect: %v", name, err)
	}
	t.Cleanup(func() { c.Close() })
	return &peer{name: name, uid: strings.ToUpper(name) + "-1", callsign: strings.ToUpper(name), c: c}
}

// send writes an event or fails the test.
func (p *peer) send(t *testing.T, ev *cot.Event) {
	t.Helper()
	if err := p.c.Send(ev); err != nil {
		t.Fatalf("%s cannot send: %v", p.name, err)
	}
}

// sendSA sends the peer's position report at lat, 20.
func (p *peer) sendSA(t *testing.T, lat float64) {
	t.Helper()
	p.send(t, takclient.SA(p.uid, p.callsign, lat, 20))
}

// await returns the first event received that matches; every event read
// on the way stays in got for the next fence.
func (p *peer) await(t *testing.T, what string, match func(*cot.Event) bool) *cot.Event {
	t.Helper()
	for _, ev := range p.got {
		if match(ev) {
			return ev
		}
	}
	deadline := time.Now().Add(eventWait)
	for {
		ev, err := p.c.Next(time.Until(deadline))
		if err != nil {
			t.Fatalf("%s never received %s: %v", p.name, what, err)
		}
		p.got = append(p.got, ev)
		if match(ev) {
			return ev
		}
	}
}

// through waits for the fence event uid and returns what the peer received
// before it, forgetting both.
func (p *peer) through(t *testing.T, fence string) []*cot.Event {
	t.Helper()
	p.await(t, "the fence "+fence, byUID(fence))
	i := slices.IndexFunc(p.got, byUID(fence))
	before := p.got[:i]
	p.got = append([]*cot.Event(nil), p.got[i+1:]...)
	return before
}

func byUID(uid string) func(*cot.Event) bool {
	return func(ev *cot.Event) bool { return ev.UID == uid }
}

// fence has the server send an event to every group (an administrator's
// geo object) and returns what each peer received before it. Every event a
// test wants checked must have been published before the call: sent on a
// connection whose later event another peer received, or queued by an API
// call that returned.
func (s *groupsServer) fence(t *testing.T, peers ...*peer) map[string][]*cot.Event {
	t.Helper()
	var r struct {
		Message string `json:"message"`
	}
	s.api(t, s.admin, "POST", "/ManageGeoObject/postGeoObject", map[string]any{"geoObject": "Incident", "attitude": "unknown",
		"how": "human", "latitude": 1, "longitude": 1, "timeout": 600, "name": "fence"}, 200).JSON(t, &r)
	if r.Message == "" {
		t.Fatal("the fence geo object has no uid")
	}
	out := map[string][]*cot.Event{}
	for _, p := range peers {
		out[p.name] = p.through(t, r.Message)
	}
	return out
}

// among lists, sorted, which of uids occur in evs.
func among(evs []*cot.Event, uids ...string) []string {
	out := []string{}
	for _, u := range uids {
		if slices.ContainsFunc(evs, byUID(u)) {
			out = append(out, u)
		}
	}
	sort.Strings(out)
	return out
}

// wantAmong checks that of the uids (one per sender, by name) exactly those
// of the senders want reached peer p before the fence.
func wantAmong(t *testing.T, what string, p *peer, evs []*cot.Event, byName map[string]string, want []string) {
	t.Helper()
	all := make([]string, 0, len(byName))
	for _, u := range byName {
		all = append(all, u)
	}
	exp := []string{}
	for _, n := range want {
		if u, ok := byName[n]; ok {
			exp = append(exp, u)
		}
	}
	sort.Strings(exp)
	if got := among(evs, all...); !slices.Equal(got, exp) {
		t.Errorf("%s: %s received %v, want %v", what, p.name, got, exp)
	}
}

// geoChat is a GeoChat message as ATAK sends it: to All Chat Rooms, or to
// the callsigns given (<marti><dest callsign/>).
func geoChat(from *peer, text string, to ...string) *cot.Event {
	now := time.Now().UTC()
	room := "All Chat Rooms"
	marti := ""
	if len(to) > 0 {
		room = to[0]
		marti = "<marti>"
		for _, cs := range to {
			marti += `<dest callsign="` + cs + `"/>`
		}
		marti += "</marti>"
	}
	id := uuid.NewString()
	detail := `<__chat parent="RootContactGroup" groupOwner="false" messageId="` + id + `" chatroom="` + room + `" id="` + room +
		`" senderCallsign="` + from.callsign + `"><chatgrp uid0="` + from.uid + `" uid1="` + room + `" id="` + room + `"/></__chat>` +
		`<link uid="` + from.uid + `" type="a-f-G-U-C" relation="p-p"/>` +
		`<remarks source="BAO.F.ATAK.` + from.uid + `" to="` + room + `" time="` + now.Format(time.RFC3339) + `">` + text + `</remarks>` + marti
	return &cot.Event{Version: "2.0", UID: "GeoChat." + from.uid + "." + room + "." + id, Type: "b-t-f", How: "h-g-i-g-o",
		Time: now, Start: now, Stale: now.Add(24 * time.Hour),
		Point:  cot.Point{Ce: cot.Unknown, Le: cot.Unknown, Hae: cot.Unknown},
		Detail: cot.Detail{XML: []byte(detail)}}
}

// marker is a spot map marker the peer drops at lat, 21.
func marker(from *peer, lat float64) *cot.Event {
	now := time.Now().UTC()
	return &cot.Event{Version: "2.0", UID: "MARKER-" + from.uid, Type: "b-m-p-s-m", How: "h-g-i-g-o",
		Time: now, Start: now, Stale: now.Add(time.Hour),
		Point: cot.Point{Lat: lat, Lon: 21, Hae: cot.Unknown, Ce: cot.Unknown, Le: cot.Unknown},
		Detail: cot.Detail{XML: []byte(`<contact callsign="` + from.callsign + ` marker"/><link uid="` + from.uid +
			`" type="a-f-G-U-C" relation="p-p"/><archive/><color argb="-1"/>`)}}
}

// published waits until the server holds each uid's latest position report
// (the administrator's /api/map shows it): what they sent before it has
// been routed.
func (s *groupsServer) published(t *testing.T, uids ...string) {
	t.Helper()
	testkit.WaitFor(t, fmt.Sprintf("the positions of %v", uids), func() bool {
		r := testkit.Do(t, nil, "GET", s.mgmt+"/api/map", nil, "Authorization", "Bearer "+s.admin)
		if r.Status != 200 {
			return false
		}
		var m struct {
			Clients []struct {
				UID string   `json:"uid"`
				Lat *float64 `json:"lat"`
			} `json:"clients"`
		}
		r.JSON(t, &m)
		placed := map[string]bool{}
		for _, c := range m.Clients {
			placed[c.UID] = c.Lat != nil
		}
		for _, u := range uids {
			if !placed[u] {
				return false
			}
		}
		return true
	})
}

// martiGroup is an item of /Marti/api/groups/all (api.md §2.12), with every
// field, so a test can send a list back as ATAK does.
type martiGroup struct {
	Name        string `json:"name"`
	Direction   string `json:"direction"`
	Created     string `json:"created"`
	Type        string `json:"type"`
	Bitpos      int    `json:"bitpos"`
	Active      bool   `json:"active"`
	Description string `json:"description,omitempty"`
}

// martiGroups is the envelope of /Marti/api/groups/all.
type martiGroups struct {
	Version string       `json:"version"`
	Type    string       `json:"type"`
	Data    []martiGroup `json:"data"`
}

// groupItem is how check compares an item.
func groupItem(name, direction string, bit int, active bool) string {
	return fmt.Sprintf("%s %s bit %d active %v", name, direction, bit, active)
}

// check holds the envelope and every item to the official server's shape
// and the items to want (groupItem strings, any order).
func (l martiGroups) check(t *testing.T, what string, want []string) {
	t.Helper()
	if l.Version != "3" || l.Type != "com.bbn.marti.remote.groups.Group" {
		t.Errorf("%s: envelope version %q type %q", what, l.Version, l.Type)
	}
	got := []string{}
	for _, g := range l.Data {
		if g.Type != "SYSTEM" {
			t.Errorf("%s: %s has type %q, want SYSTEM", what, g.Name, g.Type)
		}
		if _, err := time.Parse("2006-01-02", g.Created); err != nil {
			t.Errorf("%s: %s created %q, want a date", what, g.Name, g.Created)
		}
		got = append(got, groupItem(g.Name, g.Direction, g.Bitpos, g.Active))
	}
	sort.Strings(got)
	want = append([]string(nil), want...)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// getJSON GETs url with hc (nil: no certificate), wants 200 and decodes.
func getJSON(t *testing.T, hc *http.Client, url string, v any) {
	t.Helper()
	r := testkit.Do(t, hc, "GET", url, nil)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", url, r.Status, r.Body)
	}
	r.JSON(t, v)
}
