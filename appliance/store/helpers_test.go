package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"io"
	"path/filepath"
	"testing"
	"time"

	"outpost/appliance/cot"
	"outpost/internal/testkit"
)

// openTest opens a fresh store in t.TempDir() and closes it at cleanup.
// Password hashing is made cheap; TestPasswordFormatDefault checks the real
// count.
func openTest(t testing.TB, opts Options) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "outpost.db"), opts)
}

func openAt(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testkit.Logger(t)
	}
	s, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	s.passwordIter = 1000
	t.Cleanup(func() { s.Close() })
	return s
}

// patternReader yields n deterministic pseudo-random bytes (xorshift), so
// big blobs need no memory and no disk to produce.
type patternReader struct {
	n     int64
	state uint64
}

func newPattern(n int64, seed uint64) *patternReader { return &patternReader{n: n, state: seed | 1} }

func (r *patternReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	for i := range p {
		r.state ^= r.state << 13
		r.state ^= r.state >> 7
		r.state ^= r.state << 17
		p[i] = byte(r.state >> 32)
	}
	r.n -= int64(len(p))
	return len(p), nil
}

// patternBytes materialises a small pattern.
func patternBytes(n int64, seed uint64) []byte {
	b, _ := io.ReadAll(newPattern(n, seed))
	return b
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// putBlob stores b as a committed blob.
func putBlob(t testing.TB, s *Store, b []byte) BlobInfo {
	t.Helper()
	ctx := context.Background()
	w, err := s.Files().CreateBlob(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	info, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// countRows returns SELECT COUNT(*) FROM table (read pool).
func countRows(t testing.TB, s *Store, table string) int {
	t.Helper()
	var n int
	if err := s.r.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// testEvent builds a position report.
func testEvent(uid, callsign string, lat, lon float64, at time.Time) *cot.Event {
	return &cot.Event{
		Version: "2.0",
		UID:     uid,
		Type:    "a-f-G-U-C",
		How:     "m-g",
		Time:    at,
		Start:   at,
		Stale:   at.Add(2 * time.Minute),
		Point:   cot.Point{Lat: lat, Lon: lon, Hae: 12.5, Ce: 9999999, Le: 9999999},
		Detail: cot.Detail{
			XML:     []byte(`<contact callsign="` + callsign + `"/>`),
			Contact: &cot.Contact{Callsign: callsign},
		},
	}
}

func timeNow() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// sqlTx shortens commitWith callbacks in tests.
type sqlTx = sql.Tx
