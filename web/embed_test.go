package web

import (
	"io/fs"
	"strings"
	"testing"
)

func TestIndexEmbedded(t *testing.T) {
	b, err := fs.ReadFile(FS(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "<title>Outpost</title>") {
		t.Fatalf("unexpected index.html: %q", b)
	}
}
