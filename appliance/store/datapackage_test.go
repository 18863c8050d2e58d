package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestDataPackagePutGetListDelete(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	content := patternBytes(2*ChunkSize+10, 4)
	at := time.Date(2026, 11, 22, 10, 0, 0, 123_000_000, time.UTC)
	in := DataPackageInput{
		Name:           "mission.zip",
		SubmissionUser: "ANDROID-1",
		CreatorUID:     "ANDROID-1",
		Keywords:       []string{"missionpackage", "mission.zip"},
		MIMEType:       "application/x-zip-compressed",
		Private:        true,
		ExpectedHash:   strings.ToUpper(sha256Hex(content)),
		SubmittedAt:    at,
	}
	p, err := s.Files().PutDataPackage(ctx, in, bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	if p.PrimaryKey == 0 || p.UID == "" || p.Hash != sha256Hex(content) || p.Size != int64(len(content)) ||
		p.Privacy != 1 || p.Tool != ToolPrivate || !p.SubmittedAt.Equal(at) || p.BlobID == 0 {
		t.Fatalf("put returned %+v", p)
	}
	if len(p.UID) != 36 || p.UID[14] != '4' {
		t.Errorf("generated uid %q is not a v4 UUID", p.UID)
	}
	for name, get := range map[string]func() (DataPackage, error){
		"by hash":            func() (DataPackage, error) { return s.Files().DataPackageByHash(ctx, p.Hash) },
		"by hash upper-case": func() (DataPackage, error) { return s.Files().DataPackageByHash(ctx, strings.ToUpper(p.Hash)) },
		"by uid":             func() (DataPackage, error) { return s.Files().DataPackageByUID(ctx, p.UID) },
	} {
		got, err := get()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !equalPackages(got, p) {
			t.Errorf("%s: got %+v, want %+v", name, got, p)
		}
	}
	r, err := s.Files().OpenBlob(ctx, p.BlobID)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(r); !bytes.Equal(got, content) {
		t.Error("content read back differs")
	}

	// A second, newer package lists first.
	p2, err := s.Files().PutDataPackage(ctx, DataPackageInput{Name: "b.txt", UID: "fixed-uid", SubmittedAt: at.Add(time.Hour)},
		strings.NewReader("other"))
	if err != nil {
		t.Fatal(err)
	}
	if p2.UID != "fixed-uid" || p2.Privacy != 0 || p2.Tool != ToolPublic || len(p2.Keywords) != 0 {
		t.Errorf("second package %+v", p2)
	}
	list, err := s.Files().DataPackages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].PrimaryKey != p2.PrimaryKey || list[1].PrimaryKey != p.PrimaryKey {
		t.Fatalf("list order: %+v", list)
	}

	if err := s.Files().DeleteDataPackageByHash(ctx, p.Hash); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Files().DataPackageByHash(ctx, p.Hash); !errors.Is(err, ErrNotFound) {
		t.Errorf("after delete: %v, want ErrNotFound", err)
	}
	if _, err := s.Files().OpenBlob(ctx, p.BlobID); !errors.Is(err, ErrNotFound) {
		t.Errorf("blob after delete: %v, want ErrNotFound", err)
	}
	var chunks int
	s.r.QueryRow(`SELECT COUNT(*) FROM blob_chunks WHERE blob_id = ?`, p.BlobID).Scan(&chunks)
	if chunks != 0 {
		t.Errorf("%d chunks left after delete", chunks)
	}
	// A new package never reuses the deleted one's PrimaryKey.
	p3, err := s.Files().PutDataPackage(ctx, DataPackageInput{Name: "c.txt"}, strings.NewReader("third"))
	if err != nil {
		t.Fatal(err)
	}
	if p3.PrimaryKey <= p2.PrimaryKey {
		t.Errorf("PrimaryKey %d reused or out of order (previous %d)", p3.PrimaryKey, p2.PrimaryKey)
	}
}

func equalPackages(a, b DataPackage) bool {
	return a.PrimaryKey == b.PrimaryKey && a.UID == b.UID && a.Name == b.Name && a.Hash == b.Hash &&
		a.BlobID == b.BlobID && a.SubmissionUser == b.SubmissionUser && a.CreatorUID == b.CreatorUID &&
		strings.Join(a.Keywords, "\x00") == strings.Join(b.Keywords, "\x00") && a.MIMEType == b.MIMEType &&
		a.Size == b.Size && a.Privacy == b.Privacy && a.Tool == b.Tool && a.SubmittedAt.Equal(b.SubmittedAt)
}

func TestDataPackageSameContentKeepsOneBlob(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	content := patternBytes(ChunkSize+5, 8)
	first, err := s.Files().PutDataPackage(ctx, DataPackageInput{Name: "a.zip", SubmissionUser: "u1", Keywords: []string{"k1"}},
		bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Files().PutDataPackage(ctx, DataPackageInput{Name: "renamed.zip", SubmissionUser: "u2", Private: true},
		bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	if second.PrimaryKey != first.PrimaryKey || second.UID != first.UID || second.BlobID != first.BlobID {
		t.Errorf("identity changed on re-upload: first %+v second %+v", first, second)
	}
	if second.Name != "renamed.zip" || second.SubmissionUser != "u2" || second.Privacy != 1 || len(second.Keywords) != 0 {
		t.Errorf("metadata not replaced by the newer submission: %+v", second)
	}
	got, err := s.Files().DataPackageByHash(ctx, first.Hash)
	if err != nil || !equalPackages(got, second) {
		t.Errorf("stored %+v (%v), want %+v", got, err, second)
	}
	if n := countRows(t, s, "data_packages"); n != 1 {
		t.Errorf("%d package rows, want 1", n)
	}
	if n := countRows(t, s, "blobs"); n != 1 {
		t.Errorf("%d blobs, want 1", n)
	}
	if n := countRows(t, s, "blob_chunks"); n != 2 {
		t.Errorf("%d chunks, want 2", n)
	}
}

func TestDataPackageErrors(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("x", 300)
	many := make([]string, maxKeywords+1)
	for i := range many {
		many[i] = "k"
	}
	tests := []struct {
		name    string
		in      DataPackageInput
		content io.Reader
		is      error
	}{
		{"no name", DataPackageInput{}, strings.NewReader("x"), ErrInvalid},
		{"name too long", DataPackageInput{Name: long}, strings.NewReader("x"), ErrInvalid},
		{"name with control char", DataPackageInput{Name: "a\nb.zip"}, strings.NewReader("x"), ErrInvalid},
		{"name not UTF-8", DataPackageInput{Name: "a\xffb.zip"}, strings.NewReader("x"), ErrInvalid},
		{"uid too long", DataPackageInput{Name: "a", UID: long}, strings.NewReader("x"), ErrInvalid},
		{"MIME too long", DataPackageInput{Name: "a", MIMEType: long}, strings.NewReader("x"), ErrInvalid},
		{"too many keywords", DataPackageInput{Name: "a", Keywords: many}, strings.NewReader("x"), ErrInvalid},
		{"empty keyword", DataPackageInput{Name: "a", Keywords: []string{""}}, strings.NewReader("x"), ErrInvalid},
		{"bad expected hash", DataPackageInput{Name: "a", ExpectedHash: "abc"}, strings.NewReader("x"), ErrInvalid},
		{"hash mismatch", DataPackageInput{Name: "a", ExpectedHash: sha256Hex([]byte("y"))}, strings.NewReader("x"), ErrHashMismatch},
		{"too large", DataPackageInput{Name: "a"}, newPattern(2*ChunkSize+1, 1), ErrTooLarge},
		{"reader fails", DataPackageInput{Name: "a"}, io.MultiReader(strings.NewReader("abc"), errReader{}), errBoom},
		{"duplicate uid", DataPackageInput{Name: "a", UID: "taken"}, strings.NewReader("different content"), ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t, Options{MaxBlobSize: 2 * ChunkSize})
			if _, err := s.Files().PutDataPackage(ctx, DataPackageInput{Name: "existing", UID: "taken"}, strings.NewReader("x")); err != nil {
				t.Fatal(err)
			}
			_, err := s.Files().PutDataPackage(ctx, tt.in, tt.content)
			if !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want %v", err, tt.is)
			}
			if n, b, c := countRows(t, s, "data_packages"), countRows(t, s, "blobs"), countRows(t, s, "blob_chunks"); n != 1 || b != 1 || c != 1 {
				t.Errorf("failed put changed the database: %d packages, %d blobs, %d chunks; want 1 each", n, b, c)
			}
		})
	}
	t.Run("lookups", func(t *testing.T) {
		s := openTest(t, Options{})
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		lookups := []struct {
			name string
			err  error
			is   error
		}{
			{"by hash missing", second(s.Files().DataPackageByHash(ctx, sha256Hex([]byte("none")))), ErrNotFound},
			{"by uid missing", second(s.Files().DataPackageByUID(ctx, "none")), ErrNotFound},
			{"delete missing", s.Files().DeleteDataPackageByHash(ctx, sha256Hex([]byte("none"))), ErrNotFound},
			{"by hash canceled", second(s.Files().DataPackageByHash(canceled, "x")), context.Canceled},
			{"list canceled", second(s.Files().DataPackages(canceled)), context.Canceled},
			{"put canceled", second(s.Files().PutDataPackage(canceled, DataPackageInput{Name: "a"}, strings.NewReader("x"))), context.Canceled},
		}
		for _, l := range lookups {
			if !errors.Is(l.err, l.is) {
				t.Errorf("%s: err = %v, want %v", l.name, l.err, l.is)
			}
		}
	})
}

// second returns the error of a two-result call.
func second[T any](_ T, err error) error { return err }
