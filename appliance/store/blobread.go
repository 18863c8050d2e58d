package store

// Chunked blobs, the read side. A BlobReader holds one chunk in memory and
// reads the next from the read pool when it needs it, one short query per
// chunk, so any number of concurrent downloads of any size cost about one
// chunk each. It implements io.ReadSeeker and io.ReaderAt, which is what
// http.ServeContent needs to honour Range requests.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"sync"
)

// BlobReader reads a complete blob. Read and Seek share one offset and,
// like any io.ReadSeeker, are meant for one goroutine; ReadAt may be called
// concurrently with anything (mu serialises them).
type BlobReader struct {
	s    *db
	ctx  context.Context
	info BlobInfo
	csz  int64 // chunk size of this blob

	// mu guards off, seq, buf and closed.
	mu     sync.Mutex
	off    int64  // Read/Seek offset
	seq    int64  // number of the chunk in buf, -1 for none
	buf    []byte // one chunk
	closed bool
}

// OpenBlob opens a complete blob for reading. Pending and unknown blobs are
// ErrNotFound. The context bounds every later chunk read.
func (s *Files) OpenBlob(ctx context.Context, id int64) (*BlobReader, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: open blob: %w", err)
	}
	var (
		r       = &BlobReader{s: s.db, ctx: ctx, seq: -1}
		created int64
	)
	err := s.r.QueryRowContext(ctx, `SELECT id, size, sha256, chunk_size, created_at FROM blobs WHERE id = ? AND state = ?`,
		id, blobComplete).Scan(&r.info.ID, &r.info.Size, &r.info.SHA256, &r.csz, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: open blob: %w: blob %d", ErrNotFound, id)
	}
	if err != nil {
		return nil, s.wrapErr("open blob", err)
	}
	if r.csz <= 0 {
		return nil, fmt.Errorf("store: open blob %d: corrupt chunk size %d", id, r.csz)
	}
	r.info.Created = fromMilli(created)
	return r, nil
}

// Size is the blob's length in bytes.
func (r *BlobReader) Size() int64 { return r.info.Size }

// Info describes the blob.
func (r *BlobReader) Info() BlobInfo { return r.info }

// Read implements io.Reader.
func (r *BlobReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	n, err := r.readAtLocked(p, r.off)
	r.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil // report EOF on the next call, as io.Reader prefers
	}
	return n, err
}

// ReadAt implements io.ReaderAt.
func (r *BlobReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("store: blob %d: negative offset %d", r.info.ID, off)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.readAtLocked(p, off)
}

// Seek implements io.Seeker. Seeking past the end is allowed (reads then
// return io.EOF); seeking before the start is an error.
func (r *BlobReader) Seek(offset int64, whence int) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = r.off + offset
	case io.SeekEnd:
		abs = r.info.Size + offset
	default:
		return 0, fmt.Errorf("store: blob %d: seek: invalid whence %d", r.info.ID, whence)
	}
	if abs < 0 {
		return 0, fmt.Errorf("store: blob %d: seek to negative position %d", r.info.ID, abs)
	}
	r.off = abs
	return abs, nil
}

// Close releases the chunk buffer; later reads fail with ErrClosed.
func (r *BlobReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	r.buf = nil
	r.seq = -1
	return nil
}

// readAtLocked fills p from off, loading chunks as needed. Caller holds mu.
func (r *BlobReader) readAtLocked(p []byte, off int64) (int, error) {
	if r.closed {
		return 0, fmt.Errorf("store: blob %d: %w", r.info.ID, ErrClosed)
	}
	n := 0
	for n < len(p) {
		if off >= r.info.Size {
			return n, io.EOF
		}
		seq := off / r.csz
		if seq != r.seq {
			if err := r.load(seq); err != nil {
				return n, err
			}
		}
		k := copy(p[n:], r.buf[off-seq*r.csz:])
		n += k
		off += int64(k)
	}
	return n, nil
}

// load reads chunk seq into buf (reusing it) and checks its length.
func (r *BlobReader) load(seq int64) error {
	if err := r.s.check(r.ctx); err != nil {
		return fmt.Errorf("store: blob %d: read chunk %d: %w", r.info.ID, seq, err)
	}
	want := r.csz
	if last := (r.info.Size - 1) / r.csz; seq == last {
		want = r.info.Size - seq*r.csz
	}
	r.seq = -1
	rows, err := r.s.r.QueryContext(r.ctx, `SELECT data FROM blob_chunks WHERE blob_id = ? AND seq = ?`, r.info.ID, seq)
	if err != nil {
		return r.s.wrapErr(fmt.Sprintf("blob %d: read chunk %d", r.info.ID, seq), err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return r.s.wrapErr(fmt.Sprintf("blob %d: read chunk %d", r.info.ID, seq), err)
		}
		return fmt.Errorf("store: blob %d: chunk %d: %w (deleted while being read?)", r.info.ID, seq, ErrNotFound)
	}
	var raw sql.RawBytes // the driver's bytes, valid until Next/Close: copied out below
	if err := rows.Scan(&raw); err != nil {
		return r.s.wrapErr(fmt.Sprintf("blob %d: read chunk %d", r.info.ID, seq), err)
	}
	if int64(len(raw)) != want {
		return fmt.Errorf("store: blob %d: chunk %d has %d bytes, want %d: database is damaged", r.info.ID, seq, len(raw), want)
	}
	if r.buf == nil {
		r.buf = make([]byte, 0, min(r.csz, r.info.Size))
	}
	r.buf = append(r.buf[:0], raw...)
	r.seq = seq
	return rows.Close()
}

// BlobCounts is how many blobs and chunk rows the database holds.
type BlobCounts struct {
	Complete int64 // visible blobs
	Other    int64 // pending (an upload in progress) or being deleted
	Chunks   int64 // rows of blob_chunks, whatever their blob
}

// CountBlobs counts the blobs and their chunk rows (what a failed upload
// must not leave behind).
func (s *Files) CountBlobs(ctx context.Context) (BlobCounts, error) {
	if err := s.check(ctx); err != nil {
		return BlobCounts{}, fmt.Errorf("store: count blobs: %w", err)
	}
	var c BlobCounts
	err := s.r.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM blobs WHERE state = ?), (SELECT COUNT(*) FROM blobs WHERE state <> ?),
		(SELECT COUNT(*) FROM blob_chunks)`, blobComplete, blobComplete).Scan(&c.Complete, &c.Other, &c.Chunks)
	if err != nil {
		return BlobCounts{}, s.wrapErr("count blobs", err)
	}
	return c, nil
}
