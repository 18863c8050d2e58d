package marti_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"outpost/appliance/config"
	"outpost/appliance/netx"
)

// fileOut is an item of /Marti/api/files/metadata.
type fileOut struct {
	Name, User, Creator, Size, Time, MimeType, Keywords, Expiration, Hash, Groups, Tool string
}

// files lists /Marti/api/files/metadata with query on a listener.
func (e *env) files(t *testing.T, listener, query string) []fileOut {
	t.Helper()
	var out []fileOut
	env := e.call(t, listener, "GET", "/Marti/api/files/metadata"+query, nil, 200, &out)
	if env.Type != "Files" {
		t.Fatalf("files/metadata%s: type %q", query, env.Type)
	}
	return out
}

// fileCount reads /Marti/api/files/metadata/count with query.
func (e *env) fileCount(t *testing.T, listener, query string) int {
	t.Helper()
	var n int
	if env := e.call(t, listener, "GET", "/Marti/api/files/metadata/count"+query, nil, 200, &n); env.Type != "Count" {
		t.Fatalf("files/metadata/count%s: type %q", query, env.Type)
	}
	return n
}

// uploadFile stores content as name through /Marti/sync/upload and returns
// its record.
func (e *env) uploadFile(t *testing.T, listener, name, creator string, content []byte) record {
	t.Helper()
	resp := e.do(t, listener, "POST", "/Marti/sync/upload?filename="+url.QueryEscape(name)+"&creatorUid="+creator, content,
		"Content-Type", "text/plain")
	if resp.Status != 200 {
		t.Fatalf("upload %s on %s: %d %s", name, listener, resp.Status, resp.Body)
	}
	return decodeRecord(t, resp.Body)
}

func names(list []fileOut) string {
	var out []string
	for _, f := range list {
		out = append(out, f.Name)
	}
	return strings.Join(out, ",")
}

// TestFileManager runs the official file manager's routes on both
// listeners: /Marti/api/files/metadata with its filters, sorting and paging,
// its count, and /files/api/config; every bad parameter is a 400 naming it.
func TestFileManager(t *testing.T) {
	e := start(t, func(c *config.Config) { c.MaxUploadBytes = 64 << 20 })
	for i, l := range both {
		t.Run(l, func(t *testing.T) {
			creator := fmt.Sprintf("FM-%d", i)
			submitter := creator
			if l == netx.ListenerHTTPS {
				submitter = "alice"
			}
			big := e.uploadFile(t, l, l+"-big.kml", creator, bytes.Repeat([]byte("k"), 3000))
			small := e.uploadFile(t, l, l+"-small.txt", creator, []byte(l+" five"))
			pkg := e.uploadFile(t, l, l+"-pkg.zip", creator, missionPackage(t, "fm-"+l))

			all := e.files(t, l, "")
			byHash := map[string]fileOut{}
			for _, f := range all {
				byHash[f.Hash] = f
			}
			b := byHash[big.Hash]
			if b.Name != l+"-big.kml" || b.User != submitter || b.Creator != creator || b.Size != "2kB" || b.Expiration != "none" ||
				b.Tool != "public" || b.Groups != "__ANON__" || !strings.Contains(b.Keywords, "missionpackage") || b.MimeType == "" {
				t.Fatalf("the big file: %+v", b)
			}
			if _, err := time.Parse("2006-01-02T15:04:05.000Z", b.Time); err != nil {
				t.Fatalf("Time %q", b.Time)
			}
			if s := byHash[small.Hash].Size; s != fmt.Sprintf("%dB", len(l+" five")) {
				t.Fatalf("the small file's Size %q", s)
			}
			if n := e.fileCount(t, l, ""); n != len(all) {
				t.Fatalf("count %d for %d files", n, len(all))
			}

			// One name; sorted by size, by name; a page at a time.
			if got := names(e.files(t, l, "?name="+url.QueryEscape(l+"-small.txt"))); got != l+"-small.txt" {
				t.Fatalf("name=: %s", got)
			}
			sizes := e.files(t, l, "?sort=size&ascending=false")
			if sizes[0].Hash != big.Hash {
				t.Fatalf("sort=size descending starts with %s", sizes[0].Name)
			}
			byName := e.files(t, l, "?sort=name")
			for j := 1; j < len(byName); j++ {
				if byName[j-1].Name > byName[j].Name {
					t.Fatalf("sort=name: %s", names(byName))
				}
			}
			p0, p1 := e.files(t, l, "?sort=name&page=0&limit=2"), e.files(t, l, "?sort=name&page=1&limit=2")
			if names(p0) != names(byName[:2]) || len(p1) == 0 || p1[0].Name != byName[2].Name {
				t.Fatalf("pages: %s then %s of %s", names(p0), names(p1), names(byName))
			}

			// missionPackage=true: the files tagged missionpackage; the
			// small one loses the tag.
			resp := e.do(t, l, "PUT", "/Marti/api/sync/metadata/"+small.Hash+"/keywords", []string{"notes"})
			if resp.Status != 200 || len(resp.Body) != 0 {
				t.Fatalf("keywords: %d %s", resp.Status, resp.Body)
			}
			for _, f := range e.files(t, l, "?missionPackage=true") {
				if f.Hash == small.Hash {
					t.Fatalf("missionPackage=true lists the untagged file")
				}
			}
			tagged := 0
			for _, f := range e.files(t, l, "") {
				if strings.Contains(","+f.Keywords+",", ",missionpackage,") {
					tagged++
				}
			}
			if n := e.fileCount(t, l, "?missionPackage=true"); n != tagged || n != len(e.files(t, l, "?missionPackage=true")) {
				t.Fatalf("count of missionPackage=true: %d, %d files tagged", n, tagged)
			}

			// mission=: the files of a mission.
			mission := "fm-mission-" + l
			e.call(t, l, "PUT", "/Marti/api/missions/"+mission+"?creatorUid="+creator, nil, 201, nil)
			e.call(t, l, "PUT", "/Marti/api/missions/"+mission+"/contents?creatorUid="+creator,
				map[string][]string{"hashes": {pkg.Hash}}, 200, nil)
			if got := e.files(t, l, "?mission="+mission); len(got) != 1 || got[0].Hash != pkg.Hash {
				t.Fatalf("mission=: %+v", got)
			}
			if n := e.fileCount(t, l, "?mission="+mission); n != 1 {
				t.Fatalf("count of mission=: %d", n)
			}

			for _, c := range []struct{ path, msg string }{
				{"?sort=colour", "sort: must be name, updateTime or size"},
				{"?page=x&limit=1", "page: must be -1 or a whole number"},
				{"?page=0&limit=0", "limit: must be -1 or a whole number from 1 to 10000"},
				{"?limit=10001", "limit:"},
				{"?ascending=maybe", "ascending: must be true or false"},
				{"?missionPackage=yes", "missionPackage: must be true or false"},
				{"?name=a%00b", "name: contains a control character"},
				{"/count?missionPackage=2", "missionPackage: must be true or false"},
			} {
				wantRefusal(t, "files/metadata"+c.path, e.do(t, l, "GET", "/Marti/api/files/metadata"+c.path, nil), 400, c.msg)
			}
			for _, p := range []string{"", "/count"} {
				wantRefusal(t, "an unknown mission", e.do(t, l, "GET", "/Marti/api/files/metadata"+p+"?mission=nowhere", nil), 404, "mission: ")
			}

			var cfg struct {
				UploadSizeLimit json.Number `json:"uploadSizeLimit"`
			}
			e.do(t, l, "GET", "/files/api/config", nil).JSON(t, &cfg)
			if cfg.UploadSizeLimit != "64" {
				t.Fatalf("uploadSizeLimit %s, want 64 (MiB)", cfg.UploadSizeLimit)
			}
		})
	}
}

// TestSyncMetadataKeywordsDelete runs the metadata record of a file, its
// keywords and its deletion on both listeners, with every refusal changing
// nothing, and the /Marti/api spelling of the search.
func TestSyncMetadataKeywordsDelete(t *testing.T) {
	e := start(t, nil)
	for i, l := range both {
		t.Run(l, func(t *testing.T) {
			creator := fmt.Sprintf("META-%d", i)
			rec := e.uploadFile(t, l, "notes-"+l+".txt", creator, []byte("metadata of "+l))
			unknown := sha([]byte("never stored"))

			resp := e.do(t, l, "GET", "/Marti/sync/"+rec.Hash+"/metadata", nil)
			meta := decodeRecord(t, resp.Body)
			var raw map[string]any
			resp.JSON(t, &raw)
			if resp.Status != 200 || meta.Hash != rec.Hash || meta.PrimaryKey != rec.PrimaryKey || raw["EXPIRATION"] != "-1" {
				t.Fatalf("metadata: %d %s", resp.Status, resp.Body)
			}
			// The official server's types where the interface leaves them
			// open: strings here; the upload's PrimaryKey an integer (§2.9's
			// upload answer), the search's PrimaryKey a string and its Size
			// the integer §2.9 fixes.
			if _, ok := raw["PrimaryKey"].(string); !ok {
				t.Fatalf("metadata PrimaryKey not a string: %s", resp.Body)
			}
			if raw["Size"] != fmt.Sprint(len("metadata of "+l)) {
				t.Fatalf("metadata Size not the size as a string: %s", resp.Body)
			}
			var search struct{ Results []map[string]any }
			e.do(t, l, "GET", "/Marti/sync/search?keyword=&uid="+rec.UID, nil).JSON(t, &search)
			if len(search.Results) != 1 || search.Results[0]["PrimaryKey"] != string(rec.PrimaryKey) || search.Results[0]["Size"] != float64(len("metadata of "+l)) {
				t.Fatalf("search record types: %+v", search.Results)
			}
			wantRefusal(t, "metadata of an unknown hash", e.do(t, l, "GET", "/Marti/sync/"+unknown+"/metadata", nil), 404, "hash: no file")
			wantRefusal(t, "metadata of a bad hash", e.do(t, l, "GET", "/Marti/sync/xyz/metadata", nil), 400, "hash: must be a SHA-256")

			// Keywords: replaced; refusals change nothing.
			kwPath := "/Marti/api/sync/metadata/" + rec.Hash + "/keywords"
			wantStatus(t, "keywords", e.do(t, l, "PUT", kwPath, []string{"alpha", " beta ", "alpha"}), 200)
			for _, c := range []struct {
				body   any
				status int
				msg    string
			}{
				{`{"keywords": ["x"]}`, 400, "must be an array"},
				{"null", 400, "body: must be an array of keywords"},
				{`["a,b"]`, 400, "contains a comma"},
				{`["bad` + "\\u0007" + `"]`, 400, "control character"},
				{"[" + strings.Repeat(`"k",`, 200) + `"k"]`, 200, ""}, // duplicates count once
				{`[` + strings.TrimSuffix(strings.Repeat(`"`+strings.Repeat("x", 300)+`",`, 1), ",") + `]`, 400, "keyword must be 1 to 256 bytes"},
				{"", 400, "request body is empty"},
				{strings.Repeat(" ", 70<<10), 413, "larger than"},
			} {
				r := e.do(t, l, "PUT", kwPath, c.body, "Content-Type", "application/json")
				if c.status == 200 {
					wantStatus(t, "keywords "+c.msg, r, 200)
					wantStatus(t, "keywords back", e.do(t, l, "PUT", kwPath, []string{"alpha", "beta"}), 200)
					continue
				}
				wantRefusal(t, fmt.Sprintf("keywords %.40s", c.body), r, c.status, c.msg)
			}
			wantRefusal(t, "keywords of an unknown hash", e.do(t, l, "PUT", "/Marti/api/sync/metadata/"+unknown+"/keywords", []string{"x"}), 404, "hash: no file")
			wantRefusal(t, "keywords of a bad hash", e.do(t, l, "PUT", "/Marti/api/sync/metadata/nothex/keywords", []string{"x"}), 400, "hash:")
			meta = decodeRecord(t, e.do(t, l, "GET", "/Marti/sync/"+rec.Hash+"/metadata", nil).Body)
			if got := strings.Join(meta.Keywords, ","); got != "alpha,beta,notes-"+l+".txt,"+meta.SubmissionUser {
				t.Fatalf("keywords after the refusals: %s", got)
			}
			if _, ok := e.search(t, l, "?keyword=alpha")[rec.Hash]; !ok {
				t.Fatalf("the search by the new keyword misses the file")
			}

			// The /Marti/api spelling: the envelope of resources.
			var res []struct {
				Filename, Name, Hash, UID, MimeType, Submitter, SubmissionTime, CreatorUid, Tool string
				Size                                                                             json.Number
				Keywords                                                                         []string
			}
			env := e.call(t, l, "GET", "/Marti/api/sync/search?keyword=alpha&hash="+strings.ToUpper(rec.Hash), nil, 200, &res)
			if env.Type != "Resource" || len(res) != 1 || res[0].Hash != rec.Hash || res[0].Size.String() != fmt.Sprint(len("metadata of "+l)) ||
				res[0].Filename != "notes-"+l+".txt" || res[0].UID != rec.UID || res[0].CreatorUid != creator {
				t.Fatalf("api search: %+v", res)
			}
			e.call(t, l, "GET", "/Marti/api/sync/search?keyword=alpha&uid=other", nil, 200, &res)
			if len(res) != 0 {
				t.Fatalf("uid=other found %+v", res)
			}
			wantRefusal(t, "api search with a bad hash", e.do(t, l, "GET", "/Marti/api/sync/search?hash=12", nil), 400, "hash:")
			if got := e.search(t, l, "?keyword=alpha&uid="+rec.UID); len(got) != 1 {
				t.Fatalf("search by uid: %d results", len(got))
			}

			// Delete: refusals first, then DELETE, then POST of another.
			n := e.packages(t)
			wantRefusal(t, "delete without a hash", e.do(t, l, "DELETE", "/Marti/sync/delete", nil), 400, "hash: required")
			wantRefusal(t, "delete of a bad hash", e.do(t, l, "DELETE", "/Marti/sync/delete?hash=abc", nil), 400, "hash: must be")
			wantRefusal(t, "delete of an unknown hash", e.do(t, l, "DELETE", "/Marti/sync/delete?hash="+unknown, nil), 404, "hash: no file")
			if e.packages(t) != n {
				t.Fatal("a refused delete removed a file")
			}
			wantRefusal(t, "delete", e.do(t, l, "DELETE", "/Marti/sync/delete?hash="+rec.Hash, nil), 200, "deleted the file "+rec.Hash)
			if e.packages(t) != n-1 || e.do(t, l, "GET", "/Marti/sync/content?hash="+rec.Hash, nil).Status != 404 ||
				e.do(t, l, "GET", "/Marti/sync/"+rec.Hash+"/metadata", nil).Status != 404 {
				t.Fatal("the deleted file is still there")
			}
			wantRefusal(t, "delete again", e.do(t, l, "DELETE", "/Marti/sync/delete?hash="+rec.Hash, nil), 404, "hash: no file")
			other := e.uploadFile(t, l, "other-"+l+".txt", creator, []byte("other of "+l))
			wantStatus(t, "POST delete", e.do(t, l, "POST", "/Marti/sync/delete?hash="+other.Hash, nil), 200)
			if e.packages(t) != n-1 {
				t.Fatal("POST delete left the file")
			}
		})
	}
}
