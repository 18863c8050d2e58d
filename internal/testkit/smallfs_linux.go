//go:build linux

package testkit

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// SmallFS mounts a tmpfs of size bytes on a new directory and returns it;
// it is unmounted when the test ends. A full disk is then something a test
// can make on purpose: an appliance's data directory on it runs out of
// space at size. Mounting needs root on Linux; elsewhere, or where the
// kernel refuses, the test is skipped with the reason (a failure where tools
// are required: ToolsRequired).
func SmallFS(t testing.TB, size int64) string {
	t.Helper()
	skip := func(why string) { MissingTool(t, "a small filesystem for the full-disk tests: "+why) }
	if os.Geteuid() != 0 {
		skip("mounting a tmpfs needs root")
	}
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	opts := "size=" + strconv.FormatInt(size, 10) + ",mode=0700"
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		skip("mount -t tmpfs refused: " + err.Error() + ": " + string(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// FreeBytes is what an unprivileged process may still write on the
// filesystem holding dir.
func FreeBytes(t testing.TB, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// Fill writes a file named name in dir until the filesystem has at most
// leave bytes free (0: until it is full), and returns its path; removing
// the file frees the space again.
func Fill(t testing.TB, dir, name string, leave int64) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		free := FreeBytes(t, dir)
		if free <= leave {
			return path
		}
		n := int64(len(buf))
		if free-leave < n {
			n = free - leave
		}
		if _, err := f.Write(buf[:n]); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return path
			}
			t.Fatal(err)
		}
	}
}
