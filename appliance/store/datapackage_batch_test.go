package store

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func zipWith(t *testing.T, names ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("<kml xmlns=\"http://www.opengis.net/kml/2.2\"><Document/></kml>"))
	}
	zw.Close()
	return b.Bytes()
}

func TestDetectMIME(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"zip", zipWith(t, "MANIFEST/manifest.xml"), "application/zip"},
		{"kmz", zipWith(t, "doc.kml"), "application/vnd.google-earth.kmz"},
		{"pdf", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"), "application/pdf"},
		{"png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "image/png"},
		{"text", []byte("hello"), "text/plain; charset=utf-8"},
		{"empty", nil, "text/plain"},
	}
	for _, tc := range cases {
		if got := DetectMIME(tc.data); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	s := openTest(t, Options{})
	p, err := s.Files().PutDataPackage(context.Background(), DataPackageInput{Name: "x.kmz"}, bytes.NewReader(zipWith(t, "doc.kml")))
	if err != nil || p.MIMEType != "application/vnd.google-earth.kmz" {
		t.Fatalf("PutDataPackage detected %q (%v)", p.MIMEType, err)
	}
}

func TestKeywords(t *testing.T) {
	kw, err := ParseKeywords(" a, b,,a ,missionpackage")
	if err != nil || !slices.Equal(kw, []string{"a", "b", "missionpackage"}) {
		t.Fatalf("%q %v", kw, err)
	}
	many := make([]string, maxKeywords+1)
	for i := range many {
		many[i] = fmt.Sprint("k", i)
	}
	if _, err := ParseKeywords(strings.Join(many, ",")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("too many keywords: %v", err)
	}
	if _, err := CleanKeywords([]string{"a,b"}); !errors.Is(err, ErrInvalid) {
		t.Fatal("a keyword with a comma accepted")
	}
	if got := UploadKeywords("x", MissionPackageKeyword); !slices.Equal(got, []string{MissionPackageKeyword, "x"}) {
		t.Fatalf("UploadKeywords %q", got)
	}
	p := DataPackage{Keywords: []string{"missionpackage"}, Name: "f.zip", SubmissionUser: "ANDROID-1"}
	if got := SyncKeywords(p); !slices.Equal(got, []string{"missionpackage", "f.zip", "ANDROID-1"}) || JoinKeywords(got) != "missionpackage,f.zip,ANDROID-1" {
		t.Fatalf("SyncKeywords %q", got)
	}
}

func TestDataPackageBatches(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	a, _ := s.Files().PutDataPackage(ctx, DataPackageInput{Name: "a.txt", Keywords: UploadKeywords()}, strings.NewReader("aaa"))
	b, _ := s.Files().PutDataPackage(ctx, DataPackageInput{Name: "b.txt", Keywords: UploadKeywords()}, strings.NewReader("bbb"))

	name, kw, priv := "renamed.txt", []string{"x", "y"}, true
	err := s.Files().UpdateDataPackages(ctx, []DataPackageUpdate{{PrimaryKey: a.PrimaryKey, Name: &name}, {PrimaryKey: 9999, Private: &priv}})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "9999") {
		t.Fatalf("batch with an unknown key: %v", err)
	}
	if got, _ := s.Files().DataPackageByID(ctx, a.PrimaryKey); got.Name != "a.txt" {
		t.Fatal("a failed batch renamed a package")
	}
	bad := ""
	if err := s.Files().UpdateDataPackages(ctx, []DataPackageUpdate{{PrimaryKey: a.PrimaryKey, Name: &bad}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty name: %v", err)
	}
	if err := s.Files().UpdateDataPackages(ctx, []DataPackageUpdate{{PrimaryKey: a.PrimaryKey, Name: &name, Keywords: &kw, Private: &priv}, {PrimaryKey: b.PrimaryKey}}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Files().DataPackageByID(ctx, a.PrimaryKey)
	if got.Name != name || !slices.Equal(got.Keywords, kw) || got.Privacy != 1 || got.Tool != ToolPrivate {
		t.Fatalf("after update: %+v", got)
	}

	if err := s.Files().DeleteDataPackagesByHash(ctx, []string{a.Hash, strings.Repeat("0", 64)}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete with an unknown hash: %v", err)
	}
	if list, _ := s.Files().DataPackages(ctx); len(list) != 2 {
		t.Fatalf("a failed delete removed packages: %d left", len(list))
	}
	if err := s.Files().DeleteDataPackagesByHash(ctx, []string{strings.ToUpper(a.Hash), b.Hash, a.Hash}); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.Files().DataPackages(ctx); len(list) != 0 {
		t.Fatalf("%d packages left", len(list))
	}
	var blobs int
	s.r.QueryRow(`SELECT COUNT(*) FROM blobs`).Scan(&blobs)
	if blobs != 0 {
		t.Fatalf("%d blobs left", blobs)
	}
}
