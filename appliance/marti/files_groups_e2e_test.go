package marti_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"outpost/appliance/netx"
	"outpost/appliance/store"
)

// member makes the system user name, a member both ways of groups
// (comma-separated, made when missing; "" for none), and returns the
// holder of its certificate.
func (e *env) member(t *testing.T, name, groups string) certHolder {
	t.Helper()
	if _, err := e.Store().Accounts().CreateUser(context.Background(), store.UserInput{Name: name, Password: name + "-pw", Group: groups}); err != nil {
		t.Fatal(err)
	}
	return e.certHolder(t, name)
}

// envelopeAs reads the envelope answer of GET path with hc on a listener
// into data.
func (e *env) envelopeAs(t *testing.T, hc *http.Client, listener, path string, data any) {
	t.Helper()
	resp := e.doAs(t, hc, listener, "GET", path, nil)
	var env envelopeOf
	resp.JSON(t, &env)
	if resp.Status != 200 || env.Version != "3" {
		t.Fatalf("GET %s: %d %s", path, resp.Status, resp.Body)
	}
	if err := json.Unmarshal(env.Data, data); err != nil {
		t.Fatalf("GET %s: data: %v: %s", path, err, resp.Body)
	}
}

// as sends a request on 8443 with a certificate holder's client.
func (e *env) as(t *testing.T, c certHolder, method, path string, body any, headers ...string) (r struct {
	Status int
	Body   []byte
	Msg    string
}) {
	t.Helper()
	resp := e.doAs(t, c.hc, netx.ListenerHTTPS, method, path, body, headers...)
	r.Status, r.Body, r.Msg = resp.Status, resp.Body, resp.Message()
	return r
}

// TestFilesGroupIsolation holds the file routes to access.md "Groups" and
// "Roles": a file shared with Red is never listed, counted, searched,
// described, retagged or deleted by a Blue member or an anonymous client
// (404, as a missing file), and another Red member sees it but may neither
// retag nor delete it (403); every refusal leaves the file as it was.
func TestFilesGroupIsolation(t *testing.T) {
	e := start(t, nil)
	red, rosa, blue := e.member(t, "reddy", "Red"), e.member(t, "rosa", "Red"), e.member(t, "bluey", "Blue")
	upload := func(c certHolder, name, uid string) record {
		t.Helper()
		resp := e.doAs(t, c.hc, netx.ListenerHTTPS, "POST", "/Marti/sync/upload?filename="+name+"&creatorUid="+uid, name,
			"Content-Type", "text/plain")
		if resp.Status != 200 {
			t.Fatalf("%s uploading: %d %s", c.name, resp.Status, resp.Body)
		}
		return decodeRecord(t, resp.Body)
	}
	r := upload(red, "red.txt", "RED-1")
	b := upload(blue, "blue.txt", "BLUE-1")
	anon := e.uploadFile(t, netx.ListenerHTTP, "anon.txt", "ANON-1", []byte("anon.txt"))

	listed := func(c *certHolder) (string, string, string) {
		t.Helper()
		var (
			files []fileOut
			res   []struct{ Name string }
			n     int
		)
		get := func(path string, into any) {
			t.Helper()
			hc, l := e.client(netx.ListenerHTTP), netx.ListenerHTTP
			if c != nil {
				hc, l = c.hc, netx.ListenerHTTPS
			}
			e.envelopeAs(t, hc, l, path, into)
		}
		get("/Marti/api/files/metadata?sort=name", &files)
		get("/Marti/api/sync/search", &res)
		get("/Marti/api/files/metadata/count", &n)
		var search []string
		for _, x := range res {
			search = append(search, x.Name)
		}
		return names(files), strings.Join(search, ","), strings.Repeat("#", n)
	}
	for _, c := range []struct {
		who                   *certHolder
		files, search, counts string
	}{
		{&red, "red.txt", "red.txt", "#"},
		{&rosa, "red.txt", "red.txt", "#"},
		{&blue, "blue.txt", "blue.txt", "#"},
		{nil, "anon.txt", "anon.txt", "#"},
	} {
		who := "anonymous"
		if c.who != nil {
			who = c.who.name
		}
		files, search, counts := listed(c.who)
		if files != c.files || search != c.search || counts != c.counts {
			t.Errorf("%s lists %q, searches %q, counts %d; want %q, %q, %d", who, files, search, len(counts), c.files, c.search, len(c.counts))
		}
	}

	// Blue and anonymous clients: Red's file is missing to them.
	for _, path := range []struct{ method, path string }{
		{"GET", "/Marti/sync/" + r.Hash + "/metadata"},
		{"PUT", "/Marti/api/sync/metadata/" + r.Hash + "/keywords"},
		{"DELETE", "/Marti/sync/delete?hash=" + r.Hash},
	} {
		got := e.as(t, blue, path.method, path.path, []string{"mine"})
		if got.Status != 404 || !strings.Contains(got.Msg, "hash: no file") {
			t.Errorf("bluey %s %s: %d %s, want 404", path.method, path.path, got.Status, got.Body)
		}
		resp := e.do(t, netx.ListenerHTTP, path.method, path.path, []string{"mine"})
		if resp.Status != 404 {
			t.Errorf("anonymous %s %s: %d %s, want 404", path.method, path.path, resp.Status, resp.Body)
		}
	}
	// Another Red member sees it, and may not change it.
	if got := e.as(t, rosa, "GET", "/Marti/sync/"+r.Hash+"/metadata", nil); got.Status != 200 {
		t.Errorf("rosa reading red.txt's metadata: %d %s", got.Status, got.Body)
	}
	for _, path := range []struct{ method, path string }{
		{"PUT", "/Marti/api/sync/metadata/" + r.Hash + "/keywords"},
		{"DELETE", "/Marti/sync/delete?hash=" + r.Hash},
		{"POST", "/Marti/sync/delete?hash=" + r.Hash},
	} {
		got := e.as(t, rosa, path.method, path.path, []string{"mine"})
		if got.Status != 403 || !strings.Contains(got.Msg, "only its owner or an administrator") {
			t.Errorf("rosa %s %s: %d %s, want 403", path.method, path.path, got.Status, got.Body)
		}
	}
	p, err := e.Store().Files().DataPackageByHash(context.Background(), r.Hash)
	if err != nil || strings.Join(p.Keywords, ",") != "missionpackage" {
		t.Fatalf("red.txt after the refusals: %+v, %v", p, err)
	}
	// Its owner may; Blue's file and the anonymous one are untouched.
	if got := e.as(t, red, "PUT", "/Marti/api/sync/metadata/"+r.Hash+"/keywords", []string{"mine"}); got.Status != 200 {
		t.Errorf("reddy retagging red.txt: %d %s", got.Status, got.Body)
	}
	if got := e.as(t, red, "DELETE", "/Marti/sync/delete?hash="+r.Hash, nil); got.Status != 200 {
		t.Errorf("reddy deleting red.txt: %d %s", got.Status, got.Body)
	}
	for _, h := range []string{b.Hash, anon.Hash} {
		if _, err := e.Store().Files().DataPackageByHash(context.Background(), h); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
}
