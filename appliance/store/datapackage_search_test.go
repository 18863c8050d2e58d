package store

import (
	"context"
	"strings"
	"testing"
)

func TestSearchDataPackages(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	put := func(name, user string, private bool, kw ...string) DataPackage {
		t.Helper()
		p, err := s.Files().PutDataPackage(ctx, DataPackageInput{Name: name, SubmissionUser: user, Keywords: UploadKeywords(kw...), Private: private},
			strings.NewReader(name+user))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := put("alpha.zip", "ANDROID-1", false)
	b := put("bravo.zip", "ANDROID-2", false, "maps")
	put("secret.zip", "ANDROID-1", true, "maps")
	names := func(kw string) string {
		t.Helper()
		list, err := s.Files().SearchDataPackages(ctx, kw)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range list {
			out = append(out, p.Name)
		}
		return strings.Join(out, ",")
	}
	for kw, want := range map[string]string{
		"missionpackage": "bravo.zip,alpha.zip", // newest first; the private one never
		"maps":           "bravo.zip",
		"alpha.zip":      "alpha.zip", // the file name is a keyword (api.md §2.9)
		"ANDROID-1":      "alpha.zip", // so is the submitter
		"":               "bravo.zip,alpha.zip",
		"nothing":        "",
		"Maps":           "",
	} {
		if got := names(kw); got != want {
			t.Errorf("keyword %q: %q, want %q", kw, got, want)
		}
	}
	private := true
	if err := s.Files().UpdateDataPackages(ctx, []DataPackageUpdate{{PrimaryKey: b.PrimaryKey, Private: &private}}); err != nil {
		t.Fatal(err)
	}
	if got := names("missionpackage"); got != a.Name {
		t.Fatalf("after bravo went private: %q", got)
	}
}
