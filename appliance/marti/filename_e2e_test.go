package marti_test

import (
	"fmt"
	"mime"
	"net/url"
	"strings"
	"testing"
)

// savedAs is the file name a client saving a download would use: the
// Content-Disposition's filename as Go's parser reads it (filename*
// preferred).
func savedAs(t *testing.T, cd string) string {
	t.Helper()
	typ, params, err := mime.ParseMediaType(cd)
	if err != nil || typ != "attachment" {
		t.Fatalf("Content-Disposition %q: %q %v", cd, typ, err)
	}
	return params["filename"]
}

// TestUploadFileNames: every client API route that stores a file keeps
// only a base name of the name the client gave (architecture.md "File
// names"), and that name is what the upload answers, the search lists, the
// mission shows and the download offers: a client saving by it stays in
// its folder. A name with a control character, or too long, is refused
// with a 400 and nothing is stored; one of which nothing is left is the
// route's default. Never a 500.
func TestUploadFileNames(t *testing.T) {
	e := start(t, nil)
	l := both[0]
	e.call(t, l, "PUT", "/Marti/api/missions/recon?creatorUid=owner-1", nil, 201, nil)
	cases := []struct {
		route, name, want string
		multipart         bool
	}{
		{"/Marti/sync/upload", "../../../../tmp/x", "x", false},
		{"/Marti/sync/upload", `..\..\evil.kml`, "evil.kml", true},
		{"/Marti/sync/upload", "..", "file", false},
		{"/Marti/sync/upload", "\u202eexe.txt", "exe.txt", false},
		{"/Marti/sync/upload", "../Карта района.kmz", "Карта района.kmz", false},
		{"/Marti/sync/content", "/etc/passwd", "passwd", false},
		{"/Marti/sync/missionupload", `C:\Windows\x.exe`, "x.exe", true},
		{"/Marti/api/missions/recon/contents/missionpackage", "../../../../tmp/x.zip", "x.zip", false},
		{"/Marti/api/missions/recon/contents/missionpackage", "../..", "recon.zip", false},
	}
	for i, tc := range cases {
		content := []byte(fmt.Sprintf("file %d of the names test", i))
		path := tc.route + "?creatorUid=ANDROID-1&hash=" + sha(content) + "&filename=" + url.QueryEscape(tc.name)
		method := "POST"
		if tc.route == "/Marti/sync/content" || tc.route == "/Marti/api/missions/recon/contents/missionpackage" {
			method = "PUT"
		}
		var body any = content
		ct := "application/octet-stream"
		if tc.multipart {
			body, ct = multipartFile(t, "assetfile", "ignored.bin", content)
		}
		resp := e.do(t, l, method, path, body, "Content-Type", ct)
		if resp.Status != 200 {
			t.Fatalf("%s %q: %d %s", tc.route, tc.name, resp.Status, resp.Body)
		}
		if tc.route == "/Marti/sync/upload" || tc.route == "/Marti/sync/content" {
			if r := decodeRecord(t, resp.Body); r.Name != tc.want {
				t.Errorf("%s %q: stored as %q, want %q", tc.route, tc.name, r.Name, tc.want)
			}
		}
		if r := e.search(t, l, "")[sha(content)]; r.Name != tc.want {
			t.Errorf("%s %q: listed as %q, want %q", tc.route, tc.name, r.Name, tc.want)
		}
		resp = e.do(t, l, "GET", "/Marti/sync/content?hash="+sha(content), nil)
		if resp.Status != 200 || savedAs(t, resp.Header.Get("Content-Disposition")) != tc.want {
			t.Errorf("%s %q: downloaded as %d %q, want %q", tc.route, tc.name, resp.Status, resp.Header.Get("Content-Disposition"), tc.want)
		}
	}
	m := e.mission(t, l, "recon")
	if len(m.Contents) != 2 {
		t.Fatalf("mission contents: %+v", m.Contents)
	}
	for i, want := range []string{"x.zip", "recon.zip"} {
		if d := m.Contents[i].Data; d.Name != want || d.Filename != want {
			t.Errorf("mission content %d: name %q, filename %q, want %q", i, d.Name, d.Filename, want)
		}
	}

	stored := e.packages(t)
	for _, tc := range []struct{ name, msg string }{
		{"x\x00/../y", "filename: contains a control character"},
		{"../" + strings.Repeat("a", 300), "filename: longer than 255 bytes"},
	} {
		resp := e.do(t, l, "POST", "/Marti/sync/upload?creatorUid=ANDROID-1&filename="+url.QueryEscape(tc.name), []byte("refused"),
			"Content-Type", "application/octet-stream")
		if resp.Status != 400 || !strings.HasPrefix(resp.Message(), tc.msg) {
			t.Errorf("%q: %d %s, want 400 %q", tc.name, resp.Status, resp.Body, tc.msg)
		}
	}
	if n := e.packages(t); n != stored {
		t.Fatalf("refused uploads stored something: %d packages, %d before", n, stored)
	}
}
