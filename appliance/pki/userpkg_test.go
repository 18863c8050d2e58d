package pki

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// memorySink stands in for the store at the edge of this package: it keeps
// what it is given and answers with the SHA-256, as the real data-package
// store does.
type memorySink struct {
	mu    sync.Mutex
	files map[string][]byte
	who   map[string]string
	fail  error
}

func (s *memorySink) PutPackage(ctx context.Context, filename, submitter, owner string, r io.Reader) (string, error) {
	if s.fail != nil {
		return "", s.fail
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files, s.who = map[string][]byte{}, map[string]string{}
	}
	s.files[filename], s.who[filename] = data, submitter+"|"+owner
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

func TestIssueUserPackage(t *testing.T) {
	a := newTestAuthority(t)
	for _, d := range []Device{DeviceATAK, DeviceITAK, DeviceWinTAK} {
		t.Run(string(d), func(t *testing.T) {
			sink := &memorySink{}
			up, err := a.IssueUserPackage(t.Context(), "kim "+string(d), d, sink)
			if err != nil {
				t.Fatal(err)
			}
			onDisk, err := os.ReadFile(filepath.Join(a.cfg.ClientPackagesDir, up.FileName))
			if err != nil {
				t.Fatal(err)
			}
			stored := sink.files[up.FileName]
			if !bytes.Equal(onDisk, stored) {
				t.Fatal("the stored package differs from the file")
			}
			sum := sha256.Sum256(stored)
			if up.Hash != hex.EncodeToString(sum[:]) || sink.who[up.FileName] != a.ServerName()+"|kim "+string(d) {
				t.Errorf("hash %q submitter|owner %q", up.Hash, sink.who[up.FileName])
			}
			if runtime.GOOS != "windows" {
				if st, _ := os.Stat(filepath.Join(a.cfg.ClientPackagesDir, up.FileName)); st.Mode().Perm() != 0o600 {
					t.Errorf("package mode %v, want 0600 (it holds a private key)", st.Mode().Perm())
				}
			}
			if up.Cert == nil || up.Cert.Name != "kim "+string(d) || up.Device != d {
				t.Fatalf("UserPackage %+v", up)
			}
			files, _ := unzip(t, stored)
			found := false
			for name, b := range files {
				if strings.HasSuffix(name, ".p12") && !strings.Contains(name, "truststore") {
					checkClientP12(t, a, b, up.Cert.Name)
					found = true
				}
			}
			if !found {
				t.Error("no client .p12 in the package")
			}
			if err := a.RemoveUserPackageFile(up.FileName); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(a.cfg.ClientPackagesDir, up.FileName)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("package file still there: %v", err)
			}
			if err := a.RemoveUserPackageFile(up.FileName); err != nil {
				t.Fatalf("removing a missing file: %v", err)
			}
			for _, bad := range []string{"", "../secrets.yaml", "a/b.zip", ".."} {
				if err := a.RemoveUserPackageFile(bad); err == nil {
					t.Errorf("RemoveUserPackageFile(%q) accepted", bad)
				}
			}
		})
	}
}

func TestIssueUserPackageFailures(t *testing.T) {
	a := newTestAuthority(t)
	t.Run("sink fails: certificate revoked, file removed", func(t *testing.T) {
		sink := &memorySink{fail: errors.New("disk full")}
		_, err := a.IssueUserPackage(t.Context(), "lee", DeviceATAK, sink)
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Fatalf("err = %v", err)
		}
		list, _ := a.Issued("lee")
		if len(list) != 1 || !list[0].Revoked {
			t.Fatalf("the orphan certificate is not revoked: %+v", list)
		}
		entries, _ := os.ReadDir(a.cfg.ClientPackagesDir)
		for _, e := range entries {
			if strings.Contains(e.Name(), "lee") {
				t.Errorf("left behind %s", e.Name())
			}
		}
	})
	for _, tc := range []struct {
		name, user string
		device     Device
	}{
		{"bad name", "../etc/passwd", DeviceATAK},
		{"bad device", "mia", "symbian"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &memorySink{}
			if _, err := a.IssueUserPackage(t.Context(), tc.user, tc.device, sink); err == nil {
				t.Fatal("no error")
			}
			if list, _ := a.Issued(tc.user); len(list) != 0 || len(sink.files) != 0 {
				t.Fatal("bad input still issued or stored something")
			}
		})
	}
	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := a.IssueUserPackage(ctx, "ned", DeviceATAK, nil); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no sink", func(t *testing.T) {
		up, err := a.IssueUserPackage(t.Context(), "olga", DeviceITAK, nil)
		if err != nil || up.Hash != "" {
			t.Fatalf("%+v, %v", up, err)
		}
	})
}

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"alice", true}, {"Alice Smith", true}, {"a.b_c-d 1", true}, {strings.Repeat("x", 64), true},
		{"", false}, {strings.Repeat("x", 65), false}, {"..", false}, {".hidden", false},
		{"a/b", false}, {`a\b`, false}, {"-rf", false}, {" lead", false}, {"trail ", false},
		{"nul\x00", false}, {"émile", false}, {"a:b", false}, {"semi;colon", false},
	}
	for _, tc := range tests {
		if err := ValidateName(tc.name); (err == nil) != tc.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestWriteClientFiles(t *testing.T) {
	a := newTestAuthority(t)
	cc := issue(t, a, "pat o")
	dir := filepath.Join(t.TempDir(), "out")
	files, err := a.WriteClientFiles(cc, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]os.FileMode{"pat_o.pem": 0o644, "pat_o.key": 0o600, "pat_o.p12": 0o600}
	if len(files) != len(want) {
		t.Fatalf("files %v", files)
	}
	for _, f := range files {
		mode, ok := want[filepath.Base(f)]
		if !ok {
			t.Fatalf("unexpected file %s", f)
		}
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if runtime.GOOS != "windows" && st.Mode().Perm() != mode {
			t.Errorf("%s mode %v, want %v", f, st.Mode().Perm(), mode)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "pat_o.key")); !bytes.Equal(got, cc.KeyPEM) {
		t.Error("key file content differs")
	}
	if _, err := a.WriteClientFiles(nil, dir); err == nil {
		t.Error("nil certificate accepted")
	}
	// A name that is a valid CN but not a safe file name is sanitised.
	odd := issue(t, a, "../q@unit")
	files, err = a.WriteClientFiles(odd, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Dir(f) != dir || !strings.HasPrefix(filepath.Base(f), "_q_unit.") {
			t.Errorf("unsafe file name %s", f)
		}
	}
}
