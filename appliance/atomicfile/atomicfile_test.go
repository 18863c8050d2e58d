package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestWriteReplacesWithMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "secret")
	for i, content := range []string{"first", "second, longer than the first"} {
		if err := Write(p, []byte(content), 0o600); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != content {
			t.Fatalf("after write %d: %q, %v; want %q", i, got, err, content)
		}
	}
	if runtime.GOOS != "windows" {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v, want 0600", st.Mode().Perm())
		}
	}
	assertNoTemporaries(t, dir)
}

func TestWriteFromFailureKeepsTheOldContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := Write(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFrom(p, 0o644, func(w io.Writer) error {
		io.WriteString(w, "half of the new")
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), p) {
		t.Fatalf("err %v: want boom, naming the file", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Fatalf("content %q after a failed write, want the old content", got)
	}
	assertNoTemporaries(t, dir)
}

func TestWriteIntoMissingDirectory(t *testing.T) {
	if err := Write(filepath.Join(t.TempDir(), "missing", "f"), []byte("x"), 0o600); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
}

func assertNoTemporaries(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file %s left behind", e.Name())
		}
	}
}

// TestWriteAllReplacesNothingWhenOneFails: the files of a set are written
// before any is renamed, so one that cannot be written (here: its
// directory is missing; on a full disk: no space) leaves the others old.
func TestWriteAllReplacesNothingWhenOneFails(t *testing.T) {
	dir := t.TempDir()
	key, cert := filepath.Join(dir, "server.key"), filepath.Join(dir, "server.pem")
	for _, p := range []string{key, cert} {
		if err := Write(p, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	err := WriteAll(File{key, []byte("new"), 0o600}, File{cert, []byte("new"), 0o644},
		File{filepath.Join(dir, "missing", "server.p12"), []byte("new"), 0o600})
	if err == nil || !strings.Contains(err.Error(), "server.p12") {
		t.Fatalf("err %v: want the failure naming server.p12", err)
	}
	for _, p := range []string{key, cert} {
		if got, _ := os.ReadFile(p); string(got) != "old" {
			t.Fatalf("%s is %q after a failed set, want the old content", p, got)
		}
	}
	assertNoTemporaries(t, dir)

	if err := WriteAll(File{key, []byte("new"), 0o600}, File{cert, []byte("new"), 0o644}); err != nil {
		t.Fatal(err)
	}
	for p, mode := range map[string]os.FileMode{key: 0o600, cert: 0o644} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != "new" || st.Mode().Perm() != mode {
			t.Fatalf("%s: %q, mode %v; want new, %v", p, got, st.Mode().Perm(), mode)
		}
	}
	assertNoTemporaries(t, dir)
}
