package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"testing"
)

func TestPutPackageIsPrivate(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	content := []byte("PK\x03\x04 pretend zip with a private key")
	hash, err := s.Files().PutPackage(ctx, "alice-outpost.zip", "admin", "alice", bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	if hash != hex.EncodeToString(sum[:]) {
		t.Fatalf("hash %s", hash)
	}
	p, err := s.Files().DataPackageByHash(ctx, hash)
	if err != nil {
		t.Fatal(err)
	}
	if p.Privacy != 1 || p.Tool != ToolPrivate || p.MIMEType != "application/zip" || p.Name != "alice-outpost.zip" ||
		p.Owner != "alice" || p.Groups != 0 {
		t.Fatalf("package %+v", p)
	}
	br, err := s.Files().OpenBlob(ctx, p.BlobID)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	got, _ := io.ReadAll(br)
	if !bytes.Equal(got, content) {
		t.Fatal("content differs")
	}
	if _, err := s.Files().PutPackage(ctx, "", "admin", "alice", bytes.NewReader(content)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty file name: %v", err)
	}
}
