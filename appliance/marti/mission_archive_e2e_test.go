package marti_test

import (
	"archive/zip"
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestMissionArchive: GET .../missions/{name}/archive (and by guid) on both
// listeners answers the mission as a mission package: cot/<uid>.cot with
// the uid's latest stored event, contents/0_<name> with the file's bytes,
// and MANIFEST/manifest.xml naming the mission, its guid and every entry;
// an unknown mission or guid is 404, a malformed guid 400, a password-
// protected mission 403 to a caller that has not subscribed (and 200 to
// its owner).
func TestMissionArchive(t *testing.T) {
	e := start(t, nil)
	storedSA(t, e, "ANDROID-ARCH", "ARCHCALL")
	for _, l := range both {
		t.Run(l, func(t *testing.T) {
			name := "archive-" + l
			p := "/Marti/api/missions/" + name
			e.call(t, l, "PUT", p+"?creatorUid=ARCH-1", nil, 201, nil)
			content := []byte("archived content of " + l)
			file := e.uploadFile(t, l, "notes "+l+".txt", "ARCH-1", content)
			e.call(t, l, "PUT", p+"/contents?creatorUid=ARCH-1", map[string]any{"hashes": []string{file.Hash}, "uids": []string{"ANDROID-ARCH"}}, 200, nil)
			guid := e.mission(t, l, name).GUID

			for _, path := range []string{p + "/archive", "/Marti/api/missions/guid/" + guid + "/archive"} {
				resp := e.do(t, l, "GET", path, nil)
				if resp.Status != 200 || resp.Header.Get("Content-Type") != "application/zip" {
					t.Fatalf("%s: %d %s", path, resp.Status, resp.Header)
				}
				zr, err := zip.NewReader(bytes.NewReader(resp.Body), int64(len(resp.Body)))
				if err != nil {
					t.Fatalf("%s: not a zip: %v", path, err)
				}
				files := map[string]string{}
				for _, f := range zr.File {
					rc, err := f.Open()
					if err != nil {
						t.Fatal(err)
					}
					b, _ := io.ReadAll(rc)
					rc.Close()
					files[f.Name] = string(b)
				}
				if ev := files["cot/ANDROID-ARCH.cot"]; !strings.Contains(ev, `uid="ANDROID-ARCH"`) || !strings.Contains(ev, "ARCHCALL") {
					t.Fatalf("%s: the uid's event: %q (entries %v)", path, ev, keys(files))
				}
				if got := files["contents/0_notes "+l+".txt"]; got != string(content) {
					t.Fatalf("%s: the file: %q (entries %v)", path, got, keys(files))
				}
				man := files["MANIFEST/manifest.xml"]
				for _, want := range []string{`<MissionPackageManifest version="2">`, `name="mission_guid" value="` + guid + `"`,
					`name="name" value="` + name + `"`, `zipEntry="cot/ANDROID-ARCH.cot"`, `<Parameter name="uid" value="ANDROID-ARCH">`,
					`zipEntry="contents/0_notes ` + l + `.txt"`, `<Group name="__ANON__">`} {
					if !strings.Contains(man, want) {
						t.Fatalf("%s: manifest lacks %s:\n%s", path, want, man)
					}
				}
			}

			wantRefusal(t, "unknown mission", e.do(t, l, "GET", "/Marti/api/missions/no-such-mission/archive", nil), 404, "no mission")
			wantRefusal(t, "unknown guid", e.do(t, l, "GET", "/Marti/api/missions/guid/00000000-0000-4000-8000-000000000000/archive", nil), 404, "no mission")
			wantRefusal(t, "bad guid", e.do(t, l, "GET", "/Marti/api/missions/guid/nope/archive", nil), 400, "guid: must be a UUID")
			e.call(t, l, "PUT", p+"/password?password=secret-pw&creatorUid=ARCH-1", nil, 200, nil)
			if l == both[0] {
				// Over HTTP nobody has subscribed; over HTTPS the
				// certificate holds the owner's uid.
				wantRefusal(t, "protected", e.do(t, l, "GET", p+"/archive", nil), 403, "password protected")
			} else if r := e.do(t, l, "GET", p+"/archive", nil); r.Status != 200 {
				t.Fatalf("the owner's archive of its protected mission: %d", r.Status)
			}
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
