package mgmt_test

import (
	"database/sql"
	"fmt"
	"mime"
	"net/url"
	"strings"
	"testing"
)

// TestPackageFileNames: the management API keeps only a base name of the
// file name an upload or a rename gives (architecture.md "File names"), and
// that is what the database holds, the list shows and the download offers.
// A row written before names were reduced is listed and offered without its
// path. A name with a control character is refused (400) and changes
// nothing.
func TestPackageFileNames(t *testing.T) {
	e := newEnv(t, nil)
	stored := func(id string) string {
		var name string
		if err := e.db().QueryRow(`SELECT name FROM data_packages WHERE id = ?`, id).Scan(&name); err != nil {
			t.Fatal(err)
		}
		return name
	}
	// listed is the name the list shows for hash, and the one its download
	// offers.
	listed := func(hash string) (string, string) {
		r := e.do("GET", "/DataPackageTable", e.admin, nil)
		want(t, "list", r, 200)
		var list listAnswer
		r.JSON(t, &list)
		name := "<not listed>"
		for _, it := range list.JSONList {
			if it.Hash == hash {
				name = it.Name
			}
		}
		r = e.do("GET", "/DataPackageTable/"+hash, e.admin, nil)
		want(t, "download", r, 200)
		_, params, err := mime.ParseMediaType(r.Header.Get("Content-Disposition"))
		if err != nil {
			t.Fatalf("Content-Disposition %q: %v", r.Header.Get("Content-Disposition"), err)
		}
		return name, params["filename"]
	}

	ids := map[string]string{}
	for i, tc := range []struct{ name, want string }{
		{"../../../../tmp/x", "x"},
		{`..\..\Windows\evil.exe`, "evil.exe"},
		{"/etc/passwd", "passwd"},
		{".hidden.zip", "hidden.zip"},
		{"...", "file"},
		{"../地图 \u202eкарта.zip", "地图 карта.zip"},
	} {
		content := []byte(fmt.Sprintf("package %d of the names test", i))
		r := e.upload(e.admin, "?creatorUid=ANDROID-7&filename="+url.QueryEscape(tc.name), "assetfile", content)
		want(t, "upload "+tc.name, r, 200)
		var ans struct{ ID string }
		r.JSON(t, &ans)
		ids[tc.want] = ans.ID
		if got := stored(ans.ID); got != tc.want {
			t.Errorf("%q stored as %q, want %q", tc.name, got, tc.want)
		}
		if name, saved := listed(sha(content)); name != tc.want || saved != tc.want {
			t.Errorf("%q listed as %q and downloaded as %q, want %q", tc.name, name, saved, tc.want)
		}
	}

	// A rename is a file name too.
	r := e.do("PUT", "/DataPackageTable", e.admin, map[string]any{"DataPackages": []map[string]any{
		{"PrimaryKey": ids["x"], "Name": "../../renamed.zip"},
	}})
	want(t, "rename", r, 200)
	if got := stored(ids["x"]); got != "renamed.zip" {
		t.Errorf("renamed to %q, want renamed.zip", got)
	}

	// A row from before: its name still holds a path.
	var hash string
	e.db().QueryRow(`SELECT hash FROM data_packages WHERE id = ?`, ids["passwd"]).Scan(&hash)
	rw, err := sql.Open("sqlite", "file:"+e.app.Cfg.DBPath()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if _, err := rw.Exec(`UPDATE data_packages SET name = ? WHERE id = ?`, `../../../../etc/cron.d/old`, ids["passwd"]); err != nil {
		t.Fatal(err)
	}
	if name, saved := listed(hash); name != "old" || saved != "old" {
		t.Errorf("a row stored with a path is listed as %q and downloaded as %q, want old", name, saved)
	}

	before := e.snapshot()
	for _, name := range []string{"x\x00.zip", "../x\n.zip"} {
		r := e.upload(e.admin, "?creatorUid=ANDROID-7&filename="+url.QueryEscape(name), "assetfile", []byte("refused "+name))
		want(t, fmt.Sprintf("upload %q", name), r, 400)
		if !strings.HasPrefix(r.Message(), "filename: contains a control character") {
			t.Errorf("upload %q: %s", name, r.Body)
		}
	}
	sameSnapshot(t, "refused names", before, e.snapshot())
}
