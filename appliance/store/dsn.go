package store

// DSN construction. The driver hands a DSN that starts with "file:" to
// SQLite as a URI (SQLITE_OPEN_URI), and reads its own parameters from the
// text after the first '?'. The path part must therefore be percent-encoded:
// a literal '?' would end the path, '#' would start a fragment, and '%'
// starts an escape. Windows paths use forward slashes and a drive letter is
// written as "/C:/..." (SQLite's Windows VFS drops that leading slash).

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
)

// Pragmas for every connection of the store (architecture.md "Storage").
// busy_timeout is applied first by the driver whatever the order here.
var basePragmas = []string{
	"busy_timeout(5000)",
	"foreign_keys(1)",
	"journal_mode(WAL)",
	// FULL: an acknowledged write survives a power cut (architecture.md "Storage").
	"synchronous(FULL)",
	// After a checkpoint the WAL is truncated to this size, so a big upload
	// does not leave a huge -wal file behind.
	"journal_size_limit(67108864)",
	// A small page cache, 2 MiB per connection (writer plus four readers:
	// 10 MiB at most), keeps the appliance within a Raspberry Pi's memory;
	// the OS page cache holds the rest of a hot database anyway.
	"cache_size(-2048)",
}

// writerDSN is the DSN of the single writer connection.
func writerDSN(path string) (string, error) {
	return buildDSN(path, basePragmas, "_txlock=immediate")
}

// readerDSN is the DSN of the read pool's connections.
func readerDSN(path string) (string, error) {
	return buildDSN(path, append(append([]string(nil), basePragmas...), "query_only(1)"))
}

// backupDSN opens an existing database read-only: no journal-mode change,
// no migrations, works beside a running server.
func backupDSN(path string) (string, error) {
	return buildDSN(path, []string{"busy_timeout(5000)"}, "mode=ro")
}

func buildDSN(path string, pragmas []string, extra ...string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("%w: empty database path", ErrInvalid)
	}
	if strings.IndexByte(path, 0) >= 0 {
		return "", fmt.Errorf("%w: database path contains a NUL byte", ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("store: resolve database path: %w", err)
	}
	var b strings.Builder
	b.WriteString(fileURI(abs, runtime.GOOS == "windows"))
	sep := byte('?')
	for _, p := range pragmas {
		b.WriteByte(sep)
		sep = '&'
		b.WriteString("_pragma=")
		b.WriteString(p)
	}
	for _, e := range extra {
		b.WriteByte(sep)
		sep = '&'
		b.WriteString(e)
	}
	return b.String(), nil
}

// fileURI turns an absolute path into a SQLite "file:" URI with an empty
// authority. windows selects Windows path rules (backslashes, drive letters)
// so both can be tested on any OS.
func fileURI(abs string, windows bool) string {
	p := abs
	if windows {
		p = strings.ReplaceAll(p, `\`, "/")
		if len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]) {
			p = "/" + p
		}
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len("file://") + len(p) + 16)
	b.WriteString("file://")
	for i := 0; i < len(p); i++ {
		c := p[i]
		if isASCIILetter(c) || c >= '0' && c <= '9' || strings.IndexByte("/-._~:", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
