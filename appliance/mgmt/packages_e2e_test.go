package mgmt_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"strings"
	"testing"
	"time"

	"outpost/appliance/config"
	"outpost/internal/testkit"
)

func zipOf(t testing.TB, entries map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range entries {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, body)
	}
	zw.Close()
	return b.Bytes()
}

type listAnswer struct {
	JSONList []struct {
		PrimaryKey         string
		Name               string
		Hash               string
		SubmissionUser     string
		SubmissionDateTime string
		Size               int64
		Privacy            int
		Keywords           string
	} `json:"json_list"`
}

// TestDataPackages: upload (MIME from content, SHA-256, keyword), list,
// download, update and delete, checked in the answers and the database.
func TestDataPackages(t *testing.T) {
	e := newEnv(t, nil)
	files := []struct {
		name, mime string
		data       []byte
	}{
		{"mission.zip", "application/zip", zipOf(t, map[string]string{"MANIFEST/manifest.xml": "<MissionPackageManifest/>"})},
		{"overlay.kmz", "application/vnd.google-earth.kmz", zipOf(t, map[string]string{"doc.kml": "<kml/>"})},
		{"brief.pdf", "application/pdf", []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj <<>> endobj\ntrailer\n%%EOF\n")},
		{"map.png", "image/png", append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 300<<10)...)}, // more than one chunk
	}
	ids := map[string]string{}
	for _, f := range files {
		r := e.upload(e.admin, "?filename="+f.name+"&creatorUid=ANDROID-7", "assetfile", f.data)
		want(t, "upload "+f.name, r, 200)
		var ans struct{ Message, ID string }
		r.JSON(t, &ans)
		if ans.Message != "success" || ans.ID == "" {
			t.Fatalf("upload answer %s", r.Body)
		}
		ids[f.name] = ans.ID
		var (
			hash, mime, kw, sub, creator string
			size                         int64
			privacy                      int
		)
		e.db().QueryRow(`SELECT hash, mime_type, keywords, submission_user, creator_uid, size, privacy FROM data_packages WHERE id = ?`, ans.ID).
			Scan(&hash, &mime, &kw, &sub, &creator, &size, &privacy)
		if hash != sha(f.data) || mime != f.mime || kw != `["missionpackage"]` || sub != "ANDROID-7" || creator != "ANDROID-7" ||
			size != int64(len(f.data)) || privacy != 0 {
			t.Fatalf("%s stored as hash %s mime %q keywords %s by %q/%q size %d privacy %d", f.name, hash, mime, kw, sub, creator, size, privacy)
		}
	}

	// List: api.md §2.8 items, newest first.
	r := e.do("GET", "/DataPackageTable", e.admin, nil)
	want(t, "list", r, 200)
	var list listAnswer
	r.JSON(t, &list)
	if len(list.JSONList) != 4 || list.JSONList[0].Name != "map.png" {
		t.Fatalf("list %s", r.Body)
	}
	it := list.JSONList[3]
	if it.PrimaryKey != ids["mission.zip"] || it.Hash != sha(files[0].data) || it.SubmissionUser != "ANDROID-7" ||
		it.Size != int64(len(files[0].data)) || it.Privacy != 0 || it.Keywords != "missionpackage" {
		t.Fatalf("item %+v", it)
	}
	if ts, err := time.Parse("2006-01-02T15:04:05.000Z", it.SubmissionDateTime); err != nil || time.Since(ts) > time.Minute {
		t.Fatalf("SubmissionDateTime %q", it.SubmissionDateTime)
	}

	// Download, whole and a range.
	png := files[3]
	r = e.do("GET", "/DataPackageTable/"+strings.ToUpper(sha(png.data)), e.admin, nil)
	want(t, "download", r, 200)
	if !bytes.Equal(r.Body, png.data) || r.Header.Get("Content-Type") != "image/png" || !strings.Contains(r.Header.Get("Content-Disposition"), "map.png") {
		t.Fatalf("download: %d bytes, headers %v", len(r.Body), r.Header)
	}
	r = e.do("GET", "/DataPackageTable/"+sha(png.data), e.admin, nil, "Range", "bytes=8-15")
	want(t, "range", r, 206)
	if !bytes.Equal(r.Body, png.data[8:16]) {
		t.Fatalf("range body %q", r.Body)
	}

	// Re-uploading identical content keeps one row (one package per hash).
	r = e.upload(e.admin, "?filename=again.pdf&creatorUid=ANDROID-8", "assetfile", files[2].data)
	want(t, "re-upload", r, 200)
	var again struct{ ID string }
	r.JSON(t, &again)
	if again.ID != ids["brief.pdf"] || e.count("data_packages", "") != 4 {
		t.Fatalf("re-upload made id %s (was %s), %d rows", again.ID, ids["brief.pdf"], e.count("data_packages", ""))
	}

	// PUT: all or nothing.
	before := e.snapshot()
	r = e.do("PUT", "/DataPackageTable", e.admin, map[string]any{"DataPackages": []map[string]any{
		{"PrimaryKey": ids["mission.zip"], "Name": "renamed.zip"},
		{"PrimaryKey": 999999, "Privacy": 1},
	}})
	want(t, "update with an unknown key", r, 404)
	if !strings.Contains(r.Message(), "DataPackages[1].PrimaryKey") {
		t.Fatalf("message %q", r.Message())
	}
	sameSnapshot(t, "a refused update", before, e.snapshot())
	r = e.do("PUT", "/DataPackageTable", e.admin, map[string]any{"DataPackages": []map[string]any{
		{"PrimaryKey": ids["mission.zip"], "Name": "renamed.zip", "Keywords": "ops, night ,ops", "Privacy": 1},
		{"PrimaryKey": mustAtoi(t, ids["overlay.kmz"]), "Keywords": []string{"map"}, "Privacy": "0"},
	}})
	want(t, "update", r, 200)
	if r.Message() != "success" {
		t.Fatalf("update answer %s", r.Body)
	}
	var name, kw, tool string
	var privacy int
	e.db().QueryRow(`SELECT name, keywords, privacy, tool FROM data_packages WHERE id = ?`, ids["mission.zip"]).Scan(&name, &kw, &privacy, &tool)
	if name != "renamed.zip" || kw != `["ops","night"]` || privacy != 1 || tool != "private" {
		t.Fatalf("after update: %q %s %d %s", name, kw, privacy, tool)
	}

	// DELETE: all or nothing; blobs go with the rows.
	before = e.snapshot()
	r = e.do("DELETE", "/DataPackageTable", e.admin, map[string]any{"DataPackages": []map[string]string{
		{"hash": sha(files[0].data)}, {"hash": strings.Repeat("ab", 32)},
	}})
	want(t, "delete with an unknown hash", r, 404)
	if !strings.Contains(r.Message(), "DataPackages[1].hash") {
		t.Fatalf("message %q", r.Message())
	}
	sameSnapshot(t, "a refused delete", before, e.snapshot())
	r = e.do("DELETE", "/DataPackageTable", e.admin, map[string]any{"DataPackages": []map[string]string{
		{"hash": sha(files[0].data)}, {"hash": strings.ToUpper(sha(png.data))},
	}})
	want(t, "delete", r, 200)
	if e.count("data_packages", "") != 2 || e.count("blobs", "") != 2 {
		t.Fatalf("after delete: %d packages, %d blobs", e.count("data_packages", ""), e.count("blobs", ""))
	}
	want(t, "download of a deleted package", e.do("GET", "/DataPackageTable/"+sha(png.data), e.admin, nil), 404)
}

func mustAtoi(t testing.TB, s string) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestUploadLimits: above maxUploadBytes an upload is refused with 413,
// whether its length is announced or not, and nothing is stored; a client
// that disconnects mid-upload leaves nothing visible.
func TestUploadLimits(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.MaxUploadBytes = 64 << 10 })
	q := "?filename=big.bin&creatorUid=ANDROID-1"
	before := e.snapshot()
	big := bytes.Repeat([]byte("0123456789abcdef"), 100<<10/16) // 100 KiB of file, 64 KiB allowed

	// Announced length far beyond the limit: refused before reading.
	huge := e.upload(e.admin, q, "assetfile", bytes.Repeat([]byte{1}, 200<<10))
	want(t, "announced too large", huge, 413)
	// Within limit+slack by length, too large by content: refused by the store.
	want(t, "file too large", e.upload(e.admin, q, "assetfile", big), 413)
	// Chunked (no length): refused while streaming.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("assetfile", "big.bin")
	fw.Write(big)
	mw.Close()
	r := e.do("POST", "/DataPackageTable"+q, e.admin, io.MultiReader(&body), "Content-Type", mw.FormDataContentType())
	want(t, "chunked too large", r, 413)
	if !strings.Contains(r.Message(), "maxUploadBytes") {
		t.Fatalf("413 message %q", r.Message())
	}
	testkit.WaitFor(t, "aborted blobs to be removed", func() bool { return e.count("blobs", "") == 0 })
	sameSnapshot(t, "refused uploads", before, e.snapshot())

	// Exactly at the limit is fine.
	want(t, "upload at the limit", e.upload(e.admin, q, "assetfile", big[:64<<10]), 200)
	before = e.snapshot()

	// A client that goes away mid-upload: half a body, then close.
	var part bytes.Buffer
	mw = multipart.NewWriter(&part)
	fw, _ = mw.CreateFormFile("assetfile", "x.bin")
	fw.Write(big[:40<<10])
	conn, err := net.Dial("tcp", e.app.Addr(t, "rest"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /DataPackageTable%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		q, e.admin, mw.FormDataContentType(), part.Len()+30<<10)
	conn.Write(part.Bytes())
	testkit.WaitFor(t, "the upload to start", func() bool { return e.count("blobs", "state = 0") == 1 })
	conn.Close()
	testkit.WaitFor(t, "the abandoned upload to be removed", func() bool { return e.count("blobs", "state <> 1") == 0 })
	sameSnapshot(t, "an abandoned upload", before, e.snapshot())
	if !strings.Contains(e.logs.String(), "data package upload abandoned; nothing stored") {
		t.Fatal("the abandoned upload is not logged")
	}
}

// TestPackageOwnership: a user changes and deletes only its own packages
// (and anonymous clients' ones); the list says which (Owner, Editable) so
// the console offers only what works (access.md "Roles").
func TestPackageOwnership(t *testing.T) {
	e := newEnv(t, nil)
	_, kimToken := e.createUser("kim", "kim-password-1")
	admins := []byte("the administrator's package")
	kims := []byte("kim's own package")
	want(t, "admin uploads", e.upload(e.admin, "?filename=a.txt&creatorUid=ADMIN-1", "assetfile", admins), 200)
	want(t, "kim uploads", e.upload(kimToken, "?filename=k.txt&creatorUid=KIM-1", "assetfile", kims), 200)

	type item struct {
		Name, Hash, Owner string
		Editable          bool
	}
	list := func(token string) map[string]item {
		var out struct {
			JSONList []item `json:"json_list"`
		}
		e.do("GET", "/DataPackageTable", token, nil).JSON(t, &out)
		m := map[string]item{}
		for _, it := range out.JSONList {
			m[it.Name] = it
		}
		return m
	}
	byKim, byAdmin := list(kimToken), list(e.admin)
	if it := byKim["a.txt"]; it.Owner != "api:admin" || it.Editable {
		t.Errorf("kim sees the admin's package as %+v, want owner api:admin, not editable", it)
	}
	if it := byKim["k.txt"]; it.Owner != "kim" || !it.Editable {
		t.Errorf("kim sees its own package as %+v, want owner kim, editable", it)
	}
	if !byAdmin["a.txt"].Editable || !byAdmin["k.txt"].Editable {
		t.Errorf("the administrator may change every package: %+v", byAdmin)
	}
	// What the list says is what the server does.
	r := e.do("DELETE", "/DataPackageTable", kimToken, map[string]any{"DataPackages": []map[string]string{{"hash": sha(admins)}}})
	want(t, "kim deletes the admin's package", r, 403)
	if _, ok := list(e.admin)["a.txt"]; !ok {
		t.Fatal("a refused delete removed the package")
	}
	want(t, "kim deletes its own package", e.do("DELETE", "/DataPackageTable", kimToken,
		map[string]any{"DataPackages": []map[string]string{{"hash": sha(kims)}}}), 200)
}
