package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

func TestBlobRoundTripSizes(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	sizes := []int64{0, 1, 100, ChunkSize - 1, ChunkSize, ChunkSize + 1, 2 * ChunkSize, 3*ChunkSize + 12345}
	for _, size := range sizes {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			data := patternBytes(size, uint64(size)+7)
			w, err := s.Files().CreateBlob(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// Odd write sizes cross chunk boundaries in every way.
			for rest := data; len(rest) > 0; {
				n := min(len(rest), 1+rand.IntN(100_000))
				if k, err := w.Write(rest[:n]); err != nil || k != n {
					t.Fatalf("Write = %d, %v", k, err)
				}
				rest = rest[n:]
			}
			info, err := w.Commit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if info.Size != size || info.SHA256 != sha256Hex(data) || info.ID == 0 || info.Created.IsZero() {
				t.Fatalf("info = %+v, want size %d sha %s", info, size, sha256Hex(data))
			}
			wantChunks := (size + ChunkSize - 1) / ChunkSize
			var chunks int64
			s.r.QueryRow(`SELECT COUNT(*) FROM blob_chunks WHERE blob_id = ?`, info.ID).Scan(&chunks)
			if chunks != wantChunks {
				t.Errorf("%d chunk rows, want %d", chunks, wantChunks)
			}
			r, err := s.Files().OpenBlob(ctx, info.ID)
			if err != nil {
				t.Fatal(err)
			}
			if r.Size() != size || r.Info() != info {
				t.Errorf("reader size %d info %+v, want %d %+v", r.Size(), r.Info(), size, info)
			}
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes differing from the %d written", len(got), len(data))
			}
			if err := w.Abort(); err != nil {
				t.Errorf("Abort after Commit: %v", err)
			}
			if _, err := s.Files().OpenBlob(ctx, info.ID); err != nil {
				t.Errorf("Abort after Commit removed the blob: %v", err)
			}
		})
	}
}

func TestBlobReadFromAndCopy(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	const size = 5*ChunkSize + 99
	w, err := s.Files().CreateBlob(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(w, io.LimitReader(newPattern(size, 3), size)) // LimitReader hides WriterTo: ReadFrom is used
	if err != nil || n != size {
		t.Fatalf("io.Copy = %d, %v", n, err)
	}
	info, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := sha256Hex(patternBytes(size, 3)); info.SHA256 != want {
		t.Errorf("sha %s, want %s", info.SHA256, want)
	}
}

func TestBlobRangeReads(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	const size = 4*ChunkSize + 777
	data := patternBytes(size, 11)
	info := putBlob(t, s, data)
	r, err := s.Files().OpenBlob(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	type rng struct{ off, n int64 }
	cases := []rng{
		{0, 1}, {0, size}, {ChunkSize - 1, 2}, {ChunkSize, ChunkSize}, {size - 1, 1},
		{3*ChunkSize - 10, ChunkSize + 20}, {size - 100, 100},
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		off := rnd.Int64N(size)
		cases = append(cases, rng{off, 1 + rnd.Int64N(min(size-off, 3*ChunkSize))})
	}
	for _, c := range cases {
		buf := make([]byte, c.n)
		k, err := r.ReadAt(buf, c.off)
		if err != nil && !(err == io.EOF && c.off+c.n == size) {
			t.Fatalf("ReadAt(%d, %d) = %d, %v", c.off, c.n, k, err)
		}
		if int64(k) != c.n || !bytes.Equal(buf, data[c.off:c.off+c.n]) {
			t.Fatalf("ReadAt(%d, %d) returned wrong bytes (%d)", c.off, c.n, k)
		}
		// Same through Seek + Read.
		if pos, err := r.Seek(c.off, io.SeekStart); err != nil || pos != c.off {
			t.Fatalf("Seek(%d) = %d, %v", c.off, pos, err)
		}
		if _, err := io.ReadFull(r, buf); err != nil || !bytes.Equal(buf, data[c.off:c.off+c.n]) {
			t.Fatalf("Seek(%d)+Read(%d): %v", c.off, c.n, err)
		}
	}
	t.Run("edges", func(t *testing.T) {
		buf := make([]byte, 10)
		if k, err := r.ReadAt(buf, size-4); k != 4 || err != io.EOF {
			t.Errorf("ReadAt across the end = %d, %v; want 4, EOF", k, err)
		}
		if k, err := r.ReadAt(buf, size+5); k != 0 || err != io.EOF {
			t.Errorf("ReadAt past the end = %d, %v; want 0, EOF", k, err)
		}
		if _, err := r.ReadAt(buf, -1); err == nil {
			t.Error("ReadAt at a negative offset succeeded")
		}
		if pos, err := r.Seek(-10, io.SeekEnd); err != nil || pos != size-10 {
			t.Errorf("Seek(-10, End) = %d, %v", pos, err)
		}
		if pos, err := r.Seek(3, io.SeekCurrent); err != nil || pos != size-7 {
			t.Errorf("Seek(3, Current) = %d, %v", pos, err)
		}
		if _, err := r.Seek(-1, io.SeekStart); err == nil {
			t.Error("Seek before the start succeeded")
		}
		if _, err := r.Seek(0, 42); err == nil {
			t.Error("Seek with a bad whence succeeded")
		}
		if _, err := r.Seek(size+10, io.SeekStart); err != nil {
			t.Errorf("Seek past the end: %v", err)
		}
		if k, err := r.Read(buf); k != 0 || err != io.EOF {
			t.Errorf("Read past the end = %d, %v; want 0, EOF", k, err)
		}
		r.Close()
		if _, err := r.ReadAt(buf, 0); !errors.Is(err, ErrClosed) {
			t.Errorf("ReadAt after Close: %v, want ErrClosed", err)
		}
	})
}

// TestBlobServeContentRange serves a blob through http.ServeContent on a
// real socket and checks Range answers.
func TestBlobServeContentRange(t *testing.T) {
	s := openTest(t, Options{})
	const size = 3*ChunkSize + 5
	data := patternBytes(size, 5)
	info := putBlob(t, s, data)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r, err := s.Files().OpenBlob(req.Context(), info.ID)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		defer r.Close()
		http.ServeContent(w, req, "p.zip", info.Created, r)
	}))
	defer srv.Close()
	tests := []struct {
		rng        string
		status     int
		start, end int64 // inclusive
	}{
		{"", 200, 0, size - 1},
		{"bytes=0-0", 206, 0, 0},
		{"bytes=100-199", 206, 100, 199},
		{fmt.Sprintf("bytes=%d-%d", ChunkSize-3, 2*ChunkSize+3), 206, ChunkSize - 3, 2*ChunkSize + 3},
		{"bytes=-10", 206, size - 10, size - 1},
		{fmt.Sprintf("bytes=%d-", size-7), 206, size - 7, size - 1},
		{fmt.Sprintf("bytes=%d-", size+1), 416, 0, -1},
	}
	for _, tt := range tests {
		t.Run(tt.rng, func(t *testing.T) {
			req, _ := http.NewRequest("GET", srv.URL, nil)
			if tt.rng != "" {
				req.Header.Set("Range", tt.rng)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.status == 416 {
				return
			}
			if !bytes.Equal(body, data[tt.start:tt.end+1]) {
				t.Errorf("body: %d bytes, want bytes %d-%d", len(body), tt.start, tt.end)
			}
		})
	}
}

func TestBlobPendingInvisibleAndAbort(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	w, err := s.Files().CreateBlob(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(patternBytes(3*ChunkSize+1, 1)); err != nil {
		t.Fatal(err)
	}
	if got := countRows(t, s, "blob_chunks"); got != 3 {
		t.Fatalf("%d chunk rows while writing, want 3 (full chunks written, last one buffered)", got)
	}
	if _, err := s.Files().OpenBlob(ctx, w.ID()); !errors.Is(err, ErrNotFound) {
		t.Errorf("OpenBlob of a pending blob: %v, want ErrNotFound", err)
	}
	if err := s.Files().DeleteBlob(ctx, w.ID()); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteBlob of a pending blob: %v, want ErrNotFound", err)
	}
	// Chunks are written with synchronous=NORMAL; the writer must be back
	// to FULL for everyone else.
	var sync int
	if err := s.w.QueryRow(`PRAGMA synchronous`).Scan(&sync); err != nil || sync != 2 {
		t.Errorf("writer synchronous = %d (%v) after chunk writes, want 2 (FULL)", sync, err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if c, b := countRows(t, s, "blob_chunks"), countRows(t, s, "blobs"); c != 0 || b != 0 {
		t.Errorf("after Abort: %d chunks, %d blobs; want none", c, b)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("Write after Abort succeeded")
	}
	if _, err := w.Commit(ctx); err == nil {
		t.Error("Commit after Abort succeeded")
	}
}

func TestBlobErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, s *Store) error
		is   error
	}{
		{"write past limit", func(t *testing.T, s *Store) error {
			w, _ := s.Files().CreateBlob(ctx)
			if _, err := w.Write(make([]byte, 2*ChunkSize)); err != nil {
				return fmt.Errorf("first write: %w", err)
			}
			_, err := w.Write(make([]byte, ChunkSize+1))
			return err
		}, ErrTooLarge},
		{"ReadFrom past limit", func(t *testing.T, s *Store) error {
			w, _ := s.Files().CreateBlob(ctx)
			_, err := w.ReadFrom(newPattern(3*ChunkSize+1, 1))
			return err
		}, ErrTooLarge},
		{"commit after too large", func(t *testing.T, s *Store) error {
			w, _ := s.Files().CreateBlob(ctx)
			w.Write(make([]byte, 3*ChunkSize+1))
			_, err := w.Commit(ctx)
			return err
		}, ErrTooLarge},
		{"source read error", func(t *testing.T, s *Store) error {
			w, _ := s.Files().CreateBlob(ctx)
			_, err := w.ReadFrom(io.MultiReader(newPattern(ChunkSize+3, 1), errReader{}))
			return err
		}, errBoom},
		{"context canceled mid-upload", func(t *testing.T, s *Store) error {
			cctx, cancel := context.WithCancel(ctx)
			w, _ := s.Files().CreateBlob(cctx)
			w.Write(make([]byte, ChunkSize))
			cancel()
			_, err := w.Write(make([]byte, ChunkSize))
			return err
		}, context.Canceled},
		{"commit with canceled context", func(t *testing.T, s *Store) error {
			w, _ := s.Files().CreateBlob(ctx)
			w.Write(make([]byte, ChunkSize+1))
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := w.Commit(cctx)
			return err
		}, context.Canceled},
		{"commitWith callback fails", func(t *testing.T, s *Store) error {
			w, _ := s.Files().CreateBlob(ctx)
			w.Write(make([]byte, ChunkSize+1))
			_, err := w.commitWith(ctx, func(*sqlTx, BlobInfo) error { return ErrConflict })
			return err
		}, ErrConflict},
		{"open unknown", func(t *testing.T, s *Store) error { _, err := s.Files().OpenBlob(ctx, 12345); return err }, ErrNotFound},
		{"delete unknown", func(t *testing.T, s *Store) error { return s.Files().DeleteBlob(ctx, 12345) }, ErrNotFound},
		{"delete twice", func(t *testing.T, s *Store) error {
			info := putBlob(t, s, []byte("abc"))
			if err := s.Files().DeleteBlob(ctx, info.ID); err != nil {
				return fmt.Errorf("first delete: %w", err)
			}
			return s.Files().DeleteBlob(ctx, info.ID)
		}, ErrNotFound},
		{"delete blob of a data package", func(t *testing.T, s *Store) error {
			p, err := s.Files().PutDataPackage(ctx, DataPackageInput{Name: "a.zip"}, bytes.NewReader([]byte("abc")))
			if err != nil {
				return fmt.Errorf("put: %w", err)
			}
			return s.Files().DeleteBlob(ctx, p.BlobID)
		}, ErrConflict},
		{"read a blob deleted while open", func(t *testing.T, s *Store) error {
			info := putBlob(t, s, patternBytes(2*ChunkSize, 1))
			r, err := s.Files().OpenBlob(ctx, info.ID)
			if err != nil {
				return err
			}
			if err := s.Files().DeleteBlob(ctx, info.ID); err != nil {
				return err
			}
			_, err = io.ReadAll(r)
			return err
		}, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t, Options{MaxBlobSize: 3 * ChunkSize})
			err := tt.run(t, s)
			if !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want %v", err, tt.is)
			}
			var sync int
			if err := s.w.QueryRow(`PRAGMA synchronous`).Scan(&sync); err != nil || sync != 2 {
				t.Errorf("writer synchronous = %d (%v) afterwards, want 2 (FULL)", sync, err)
			}
			// Whatever failed left nothing behind but complete blobs.
			var pending int
			s.r.QueryRow(`SELECT COUNT(*) FROM blobs WHERE state <> 1`).Scan(&pending)
			var orphans int
			s.r.QueryRow(`SELECT COUNT(*) FROM blob_chunks WHERE blob_id NOT IN (SELECT id FROM blobs WHERE state = 1)`).Scan(&orphans)
			if pending != 0 || orphans != 0 {
				t.Errorf("left %d unfinished blobs and %d orphan chunks", pending, orphans)
			}
		})
	}
}

var errBoom = errors.New("boom")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBoom }

// TestBlobConcurrentReadersWhileWriting reads complete blobs from several
// goroutines while another goroutine uploads.
func TestBlobConcurrentReadersWhileWriting(t *testing.T) {
	s := openTest(t, Options{ReadConns: 4})
	ctx := context.Background()
	const size = 6*ChunkSize + 3
	data := patternBytes(size, 9)
	want := sha256Hex(data)
	info := putBlob(t, s, data)

	var wg sync.WaitGroup
	errs := make(chan error, 16)
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // the writer: uploads until the readers are done
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			w, err := s.Files().CreateBlob(ctx)
			if err != nil {
				errs <- err
				return
			}
			if _, err := w.ReadFrom(newPattern(3*ChunkSize, uint64(i))); err != nil {
				errs <- err
				return
			}
			if _, err := w.Commit(ctx); err != nil {
				errs <- err
				return
			}
		}
	}()
	var readers sync.WaitGroup
	for g := range 6 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for i := range 5 {
				r, err := s.Files().OpenBlob(ctx, info.ID)
				if err != nil {
					errs <- err
					return
				}
				var got []byte
				if (g+i)%2 == 0 {
					got, err = io.ReadAll(r)
				} else { // backwards by chunk through ReadAt
					got = make([]byte, size)
					for off := int64(size/ChunkSize) * ChunkSize; off >= 0 && err == nil; off -= ChunkSize {
						_, err = r.ReadAt(got[off:min(off+ChunkSize, size)], off)
						if err == io.EOF {
							err = nil
						}
					}
				}
				if err != nil {
					errs <- err
					return
				}
				if sha256Hex(got) != want {
					errs <- fmt.Errorf("reader %d: wrong content", g)
					return
				}
			}
		}()
	}
	readers.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestBlobSharedReaderAt: one reader, ReadAt from many goroutines (as
// io.ReaderAt allows).
func TestBlobSharedReaderAt(t *testing.T) {
	s := openTest(t, Options{})
	const size = 4 * ChunkSize
	data := patternBytes(size, 2)
	info := putBlob(t, s, data)
	r, err := s.Files().OpenBlob(context.Background(), info.ID)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(g), 1))
			buf := make([]byte, 1000)
			for range 50 {
				off := rnd.Int64N(size - 1000)
				if _, err := r.ReadAt(buf, off); err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(buf, data[off:off+1000]) {
					t.Errorf("ReadAt(%d): wrong bytes", off)
					return
				}
			}
		}()
	}
	wg.Wait()
}
