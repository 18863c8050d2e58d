package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data, mode perm whatever the umask.
func Write(path string, data []byte, perm fs.FileMode) error {
	return WriteFrom(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFrom replaces path with what fill writes, mode perm whatever the
// umask. When fill fails nothing is replaced and the temporary file is
// removed; fill's error is returned wrapped.
func WriteFrom(path string, perm fs.FileMode, fill func(w io.Writer) error) error {
	tmp, err := prepare(path, perm, fill)
	if err != nil {
		return err
	}
	return replace(tmp, path)
}

// File is one file of WriteAll.
type File struct {
	Path string
	Data []byte
	Perm fs.FileMode
}

// WriteAll replaces several files that belong together (a key and its
// certificate): every temporary file is written and synced before the
// first rename, so a failure while writing (a full disk) leaves every old
// file in place; only the renames, which need no space, can then leave
// some replaced and others not.
func WriteAll(files ...File) error {
	tmps := make([]string, 0, len(files))
	cleanup := func() {
		for _, tmp := range tmps {
			_ = os.Remove(tmp)
		}
	}
	for _, f := range files {
		tmp, err := prepare(f.Path, f.Perm, func(w io.Writer) error {
			_, err := w.Write(f.Data)
			return err
		})
		if err != nil {
			cleanup()
			return err
		}
		tmps = append(tmps, tmp)
	}
	for i, f := range files {
		if err := replace(tmps[i], f.Path); err != nil {
			tmps = tmps[i+1:]
			cleanup()
			return err
		}
	}
	return nil
}

// prepare writes what fill writes to a new temporary file beside path, with
// mode perm, synced, and returns its name; on failure nothing is left.
func prepare(path string, perm fs.FileMode, fill func(w io.Writer) error) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) (string, error) {
		_ = f.Close()
		_ = os.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	// The mode is set before any byte is written: a secret is never
	// readable by others, not even for a moment.
	if err := f.Chmod(perm); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return fail(err)
	}
	if err := fill(f); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return tmp, nil
}

// replace renames tmp over path and makes the rename durable.
func replace(tmp, path string) error {
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	SyncDir(filepath.Dir(path))
	return nil
}

// SyncDir makes the entries of dir durable (a rename, a new file), where the
// platform allows syncing a directory; elsewhere (Windows) it does nothing.
func SyncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
