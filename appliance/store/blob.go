package store

// Chunked blobs, the write side (architecture.md "Storage").
//
// A blob is a row in blobs (metadata, state) and its content in ChunkSize
// rows of blob_chunks. CreateBlob inserts the metadata row in state pending;
// BlobWriter buffers at most one chunk and writes each full chunk in its own
// short transaction, hashing with SHA-256 on the fly; Commit writes the last
// chunk and flips the state to complete in ONE transaction (with the
// caller's metadata, see commitWith). Until then the blob is invisible, and
// a crash leaves only a pending row that the next Open sweeps. Deletion
// first makes a blob invisible in one transaction (state "deleting"), then
// removes its chunks in bounded batches so the single writer is never held
// for long; an interrupted deletion is finished by the next sweep.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"
)

// ChunkSize is the size of every chunk row but a blob's last.
const ChunkSize = 256 << 10

// Blob states (column blobs.state).
const (
	blobPending  = 0
	blobComplete = 1
	blobDeleting = 2
)

// purgeBatch is how many chunk rows one deleting transaction removes (4 MiB).
const purgeBatch = 16

// errCommitted is the sticky error of a writer after a successful Commit.
var errCommitted = errors.New("store: blob writer already committed")

// BlobInfo describes a complete blob.
type BlobInfo struct {
	ID      int64
	SHA256  string // lower-case hex
	Size    int64
	Created time.Time
}

// BlobWriter streams a new blob into the database. It is an io.Writer and
// an io.ReaderFrom; it is not safe for concurrent use. The context given to
// CreateBlob bounds every chunk write. After any failed call the blob has
// been aborted and every later call returns the same error. The usual shape:
//
//	w, err := s.CreateBlob(ctx)
//	defer w.Abort() // no-op after Commit
//	io.Copy(w, body)
//	info, err := w.Commit(ctx)
type BlobWriter struct {
	s       *db
	ctx     context.Context
	id      int64
	created time.Time
	buf     []byte // the current, not yet written chunk; cap ChunkSize
	seq     int64  // number of the chunk in buf
	size    int64  // bytes accepted so far
	h       hash.Hash
	err     error // sticky
}

// CreateBlob starts a new pending blob.
func (s *Files) CreateBlob(ctx context.Context) (*BlobWriter, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: create blob: %w", err)
	}
	if err := s.room("create blob"); err != nil {
		return nil, err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	res, err := s.w.ExecContext(ctx, `INSERT INTO blobs(state, chunk_size, created_at) VALUES (?, ?, ?)`,
		blobPending, ChunkSize, unixMilli(now))
	if err != nil {
		return nil, s.wrapErr("create blob", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return nil, s.wrapErr("create blob", err)
	}
	return &BlobWriter{s: s.db, ctx: ctx, id: id, created: now, h: sha256.New()}, nil
}

// ID is the blob's id (not yet visible to readers before Commit).
func (w *BlobWriter) ID() int64 { return w.id }

// Size is the number of bytes accepted so far.
func (w *BlobWriter) Size() int64 { return w.size }

// Write buffers p, writing every full chunk as a row. A write that would
// grow the blob past MaxBlobSize aborts it and returns ErrTooLarge.
func (w *BlobWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if int64(len(p)) > w.s.maxBlob-w.size {
		return 0, w.fail(fmt.Errorf("%w: more than %d bytes", ErrTooLarge, w.s.maxBlob))
	}
	n := 0
	for len(p) > 0 {
		if err := w.makeRoom(); err != nil {
			return n, err
		}
		k := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf = w.buf[:len(w.buf)+k]
		w.h.Write(p[:k])
		w.size += int64(k)
		n += k
		p = p[k:]
	}
	return n, nil
}

// ReadFrom reads r to EOF straight into the chunk buffer (io.Copy uses it,
// avoiding a second buffer).
func (w *BlobWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	var total int64
	for {
		if err := w.makeRoom(); err != nil {
			return total, err
		}
		k, rerr := r.Read(w.buf[len(w.buf):cap(w.buf)])
		if k > 0 {
			if int64(k) > w.s.maxBlob-w.size {
				return total, w.fail(fmt.Errorf("%w: more than %d bytes", ErrTooLarge, w.s.maxBlob))
			}
			w.h.Write(w.buf[len(w.buf) : len(w.buf)+k])
			w.buf = w.buf[:len(w.buf)+k]
			w.size += int64(k)
			total += int64(k)
		}
		if rerr == io.EOF {
			return total, nil
		}
		if rerr != nil {
			return total, w.fail(fmt.Errorf("store: blob %d: read source: %w", w.id, rerr))
		}
	}
}

// makeRoom makes sure buf has free space: allocates it on first use and
// writes it out when it is full. A full chunk is written only when more
// data follows, so Commit always has the last chunk to write.
func (w *BlobWriter) makeRoom() error {
	if w.buf == nil {
		w.buf = make([]byte, 0, ChunkSize)
		return nil
	}
	if len(w.buf) < cap(w.buf) {
		return nil
	}
	if err := w.s.check(w.ctx); err != nil {
		return w.fail(fmt.Errorf("store: blob %d: write chunk: %w", w.id, err))
	}
	if err := w.s.insertChunk(w.ctx, w.id, w.seq, w.buf); err != nil {
		return w.fail(w.s.wrapErr(fmt.Sprintf("blob %d: write chunk %d", w.id, w.seq), err))
	}
	w.seq++
	w.buf = w.buf[:0]
	return nil
}

// insertChunk writes one intermediate chunk in its own short transaction.
// It needs no fsync of its own: the blob is invisible until Commit, whose
// synchronous=FULL commit syncs the WAL together with every frame written
// before it, and a crash before that loses only a pending blob, which the
// sweep removes anyway. So the chunk is written with synchronous=NORMAL and
// the connection is put back to FULL before anyone else can use it; if that
// fails the connection is discarded (the pool reopens one with the DSN's
// FULL). On an SD card this saves one fsync per 256 KiB and keeps each
// chunk's hold on the single writer to the write itself.
func (s *db) insertChunk(ctx context.Context, id, seq int64, data []byte) error {
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Restored whatever happens below: even a failed (interrupted) PRAGMA
	// may have taken effect.
	_, err = conn.ExecContext(ctx, `PRAGMA synchronous = NORMAL`)
	if err == nil {
		_, err = conn.ExecContext(ctx, `INSERT INTO blob_chunks(blob_id, seq, data) VALUES (?, ?, ?)`, id, seq, data)
	}
	if _, rerr := conn.ExecContext(context.Background(), `PRAGMA synchronous = FULL`); rerr != nil {
		s.log.Warn("could not restore synchronous=FULL on the writer connection; discarding it", "err", rerr)
		conn.Raw(func(any) error { return driver.ErrBadConn })
		if err == nil {
			err = rerr
		}
	}
	return err
}

// Commit writes the last chunk and marks the blob complete, in one
// transaction. On failure the blob is aborted.
func (w *BlobWriter) Commit(ctx context.Context) (BlobInfo, error) {
	return w.commitWith(ctx, nil)
}

// commitWith is Commit with fn run inside the final transaction, after the
// blob is marked complete, so a repository commits its metadata together
// with the last chunk. fn must use only tx (using the Store's writer inside
// it would deadlock on the single connection). If fn fails nothing is
// committed and the blob is aborted; fn's error is returned wrapped.
func (w *BlobWriter) commitWith(ctx context.Context, fn func(tx *sql.Tx, info BlobInfo) error) (BlobInfo, error) {
	if w.err != nil {
		return BlobInfo{}, w.err
	}
	if err := w.s.check(ctx); err != nil {
		return BlobInfo{}, w.fail(fmt.Errorf("store: blob %d: commit: %w", w.id, err))
	}
	info := BlobInfo{ID: w.id, SHA256: hex.EncodeToString(w.h.Sum(nil)), Size: w.size, Created: w.created}
	err := func() error {
		tx, err := w.s.w.BeginTx(ctx, nil)
		if err != nil {
			return w.s.wrapErr("commit blob: begin", err)
		}
		defer tx.Rollback()
		if len(w.buf) > 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO blob_chunks(blob_id, seq, data) VALUES (?, ?, ?)`,
				w.id, w.seq, w.buf); err != nil {
				return w.s.wrapErr("commit blob: last chunk", err)
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE blobs SET state = ?, size = ?, sha256 = ? WHERE id = ? AND state = ?`,
			blobComplete, info.Size, info.SHA256, w.id, blobPending)
		if err != nil {
			return w.s.wrapErr("commit blob", err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("store: commit blob %d: %w: the pending blob disappeared (swept by another process?)", w.id, ErrNotFound)
		}
		if fn != nil {
			if err := fn(tx, info); err != nil {
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return w.s.wrapErr("commit blob", err)
		}
		return nil
	}()
	if err != nil {
		return BlobInfo{}, w.fail(err)
	}
	w.err = errCommitted
	w.buf = nil
	return info, nil
}

// Abort removes everything written so far. It is a no-op after Commit and
// after a failure (which already aborted), so `defer w.Abort()` is safe.
func (w *BlobWriter) Abort() error {
	if w.err != nil {
		return nil
	}
	w.err = fmt.Errorf("store: blob %d: %w: aborted", w.id, ErrClosed)
	return w.remove()
}

// fail records err as the sticky error, aborts the blob and returns err.
func (w *BlobWriter) fail(err error) error {
	if w.err != nil {
		return w.err
	}
	w.err = err
	if rerr := w.remove(); rerr != nil {
		// The pending row stays invisible; the next Open sweeps it.
		w.s.log.Warn("could not remove an aborted blob; it will be removed at next start", "blob", w.id, "err", rerr)
	}
	return err
}

func (w *BlobWriter) remove() error {
	w.buf = nil
	if w.s.closed.Load() {
		return ErrClosed
	}
	// Not w.ctx: the upload's context is typically what was cancelled.
	return w.s.purgeBlob(context.Background(), w.id)
}

// DeleteBlob makes a complete blob invisible and removes its chunks. It
// fails with ErrNotFound for an unknown or pending blob and with
// ErrConflict while a data package still refers to it.
func (s *Files) DeleteBlob(ctx context.Context, id int64) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: delete blob: %w", err)
	}
	err := s.inTxAnySpace(ctx, "delete blob", func(tx *sql.Tx) error {
		var used int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM data_packages WHERE blob_id = ?`, id).Scan(&used); err != nil {
			return err
		}
		if used > 0 {
			return fmt.Errorf("%w: blob %d belongs to a data package", ErrConflict, id)
		}
		return markBlobDeleting(ctx, tx, id)
	})
	if err != nil {
		return err
	}
	return s.purgeBlob(context.WithoutCancel(ctx), id)
}

// markBlobDeleting makes a complete blob invisible inside tx.
func markBlobDeleting(ctx context.Context, tx *sql.Tx, id int64) error {
	res, err := tx.ExecContext(ctx, `UPDATE blobs SET state = ? WHERE id = ? AND state = ?`, blobDeleting, id, blobComplete)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("%w: blob %d", ErrNotFound, id)
	}
	return nil
}

// purgeBlob deletes an invisible blob's chunks in bounded transactions,
// then its row.
func (s *db) purgeBlob(ctx context.Context, id int64) error {
	for {
		res, err := s.w.ExecContext(ctx, `DELETE FROM blob_chunks WHERE id IN
			(SELECT id FROM blob_chunks WHERE blob_id = ? LIMIT ?)`, id, purgeBatch)
		if err != nil {
			return s.wrapErr(fmt.Sprintf("remove blob %d chunks", id), err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return s.wrapErr(fmt.Sprintf("remove blob %d chunks", id), err)
		}
		if n < purgeBatch {
			break
		}
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM blobs WHERE id = ? AND state <> ?`, id, blobComplete); err != nil {
		return s.wrapErr(fmt.Sprintf("remove blob %d", id), err)
	}
	return nil
}

// sweepBlobs removes every pending or half-deleted blob (run at Open by the
// primary-lock holder only). It returns how many it removed.
func (s *db) sweepBlobs(ctx context.Context) (int, error) {
	rows, err := s.w.QueryContext(ctx, `SELECT id FROM blobs WHERE state <> ?`, blobComplete)
	if err != nil {
		return 0, s.wrapErr("find unfinished blobs", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, s.wrapErr("find unfinished blobs", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, s.wrapErr("find unfinished blobs", err)
	}
	for _, id := range ids {
		if err := s.purgeBlob(ctx, id); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}

func isSentinel(err error) bool {
	for _, e := range []error{ErrNotFound, ErrConflict, ErrInvalid, ErrTooLarge, ErrHashMismatch, ErrBadCredentials, ErrClosed, ErrForbidden, ErrBusy, ErrNoSpace} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
