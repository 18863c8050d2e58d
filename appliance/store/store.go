package store

// Open and Close (architecture.md "Storage"). Open: writer connection first
// (it puts a new file into WAL mode), migrations on the writer, then the
// query_only read pool, then the primary lock and the orphan-blob sweep.
// Close: running History writers are flushed and stopped first, then both
// pools are closed.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite" // the "sqlite" driver (pure Go), and its file control (keepWALFiles)

	"outpost/appliance/diskspace"
	"outpost/appliance/logx"
)

// Defaults of Options.
const (
	DefaultReadConns   = 4
	DefaultMaxBlobSize = 1 << 30 // 1 GiB
)

// Options configure Open. The zero value is valid.
type Options struct {
	// ReadConns is the size of the read pool (default 4).
	ReadConns int
	// MaxBlobSize is the largest blob CreateBlob accepts (default 1 GiB).
	MaxBlobSize int64
	// Logger receives the store's log lines (default slog.Default()).
	Logger *slog.Logger
	// PasswordChecksPerSecond bounds password checks started per second,
	// whoever asks (default 10; negative: unlimited), and
	// PasswordCheckConcurrency how many run at once (default: half the
	// CPUs, at least one). See passwordgate.go.
	PasswordChecksPerSecond  float64
	PasswordCheckConcurrency int
	// Budgets bound the tables clients can grow (budgets.go) and what one
	// mission may hold (Budgets.Missions, missions_budget.go); zero fields
	// of the tables take the defaults, of a mission mean no limit.
	Budgets Budgets
	// Space is the gauge of the database's filesystem: below its hard
	// floor every write that grows the database fails with ErrNoSpace
	// (deletions still run). nil: no floor, only SQLite's own "disk is
	// full", which is ErrNoSpace too.
	Space *diskspace.Gauge
}

// Store is the open database. It is safe for concurrent use. What it holds
// is reached by area, so that a caller states what it touches: Accounts
// (system users, API users, tokens, the audit log), Files (blobs and data
// packages), Missions, Checklists (ExCheck), Events (queries of the CoT
// history), Objects (the server's own objects) and Videos; the history
// writer starts from StartHistory.
type Store struct {
	*db
	accounts   *Accounts
	files      *Files
	missions   *Missions
	checklists *Checklists
	events     *Events
	objects    *Objects
	videos     *Videos
	federates  *Federates
}

// The areas of the store. Each is a view of the same database.
type (
	Accounts   struct{ *db }
	Files      struct{ *db }
	Missions   struct{ *db }
	Checklists struct{ *db }
	Events     struct{ *db }
	Objects    struct{ *db }
	Videos     struct{ *db }
	Federates  struct{ *db }
)

func newStore(d *db) *Store {
	return &Store{db: d, accounts: &Accounts{d}, files: &Files{d}, missions: &Missions{d}, checklists: &Checklists{d},
		events: &Events{d}, objects: &Objects{d}, videos: &Videos{d}, federates: &Federates{d}}
}

// Accounts is the area of system users, API users, bearer and login
// tokens, passwords and the audit log.
func (s *Store) Accounts() *Accounts { return s.accounts }

// Files is the area of blobs and data packages (enterprise sync).
func (s *Store) Files() *Files { return s.files }

// Missions is the area of missions: contents, uids, logs, subscriptions,
// invitations, change history.
func (s *Store) Missions() *Missions { return s.missions }

// Checklists is the area of ExCheck templates and checklists.
func (s *Store) Checklists() *Checklists { return s.checklists }

// Events is the area of queries over the stored CoT history.
func (s *Store) Events() *Events { return s.events }

// Objects is the area of the server's own objects (geo objects,
// emergencies).
func (s *Store) Objects() *Objects { return s.objects }

// Videos is the area of video connections.
func (s *Store) Videos() *Videos { return s.videos }

// Federates is the area of the federates managed through the API and the
// command line (docs/federation.md "Managing federates").
func (s *Store) Federates() *Federates { return s.federates }

// db is the open database's connections and state, shared by every area.
type db struct {
	path    string
	w       *sql.DB // the single writer connection (MaxOpenConns 1)
	r       *sql.DB // the query_only read pool
	log     *slog.Logger
	maxBlob int64
	budgets Budgets          // budgets.go
	audit   auditState       // the audit log's pruning (audit.go)
	space   *diskspace.Gauge // nil: no floor
	primary *primaryLock     // nil when another process holds the primary lock

	// passwordIter is the PBKDF2 iteration count for new hashes; tests lower it.
	passwordIter int
	pwGate       *passwordGate

	subs subscriberCache // active mission subscribers (missions_subs.go)

	closed atomic.Bool

	// mu guards closing, histories and closeErr.
	mu        sync.Mutex
	closing   bool // Close has begun: StartHistory starts nothing new
	histories map[*History]struct{}
	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating if needed) the database file at path, applies the
// pragmas and pending migrations, and removes orphaned blobs left by a crash.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.ReadConns <= 0 {
		opts.ReadConns = DefaultReadConns
	}
	if opts.MaxBlobSize <= 0 {
		opts.MaxBlobSize = DefaultMaxBlobSize
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.PasswordChecksPerSecond == 0 {
		opts.PasswordChecksPerSecond = DefaultPasswordChecksPerSecond
	}
	if opts.PasswordCheckConcurrency <= 0 {
		opts.PasswordCheckConcurrency = max(1, runtime.NumCPU()/2)
	}
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		return nil, err
	}
	wdsn, err := writerDSN(path)
	if err != nil {
		return nil, err
	}
	rdsn, err := readerDSN(path)
	if err != nil {
		return nil, err
	}
	s := &db{
		path:         path,
		log:          opts.Logger.With("component", "store"),
		maxBlob:      opts.MaxBlobSize,
		budgets:      opts.Budgets.withDefaults(),
		audit:        auditState{log: logx.NewLimiter(opts.Logger.With("component", "store"), 1, time.Hour)},
		space:        opts.Space,
		passwordIter: pbkdf2Iterations,
		pwGate:       newPasswordGate(opts.PasswordChecksPerSecond, opts.PasswordCheckConcurrency),
		histories:    make(map[*History]struct{}),
	}
	if err := privateFiles(path); err != nil {
		return nil, err
	}
	s.w, err = sql.Open("sqlite", wdsn)
	if err != nil {
		return nil, fmt.Errorf("store: open writer: %w", err)
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)
	s.w.SetConnMaxLifetime(0)
	s.w.SetConnMaxIdleTime(0)
	fail := func(err error) (*Store, error) {
		s.w.Close()
		if s.r != nil {
			s.r.Close()
		}
		s.primary.release()
		return nil, err
	}
	// The writer connects first: it switches a new file to WAL before any
	// query_only reader exists.
	if err := s.w.PingContext(ctx); err != nil {
		return fail(s.noSpaceAtOpen(path, fmt.Errorf("store: open %s: %w", path, err)))
	}
	applied, err := migrate(ctx, s.w, ms)
	if err != nil {
		return fail(s.noSpaceAtOpen(path, err))
	}
	s.r, err = sql.Open("sqlite", rdsn)
	if err != nil {
		return fail(fmt.Errorf("store: open read pool: %w", err))
	}
	s.r.SetMaxOpenConns(opts.ReadConns)
	s.r.SetMaxIdleConns(opts.ReadConns)
	s.r.SetConnMaxLifetime(0)
	s.r.SetConnMaxIdleTime(0)
	if err := s.r.PingContext(ctx); err != nil {
		return fail(fmt.Errorf("store: open read pool: %w", err))
	}
	s.primary, err = tryPrimaryLock(path)
	if err != nil {
		return fail(err)
	}
	if s.primary != nil {
		n, err := s.sweepBlobs(ctx)
		if err != nil && !isDiskFull(err) {
			return fail(err)
		}
		if err != nil {
			// Removing rows writes to the WAL too. What is left is
			// invisible; the next start sweeps it.
			s.log.Warn("no space left to remove the unfinished blobs of an earlier run; they stay invisible until the next start", "err", err)
		} else if n > 0 {
			s.log.Info("removed unfinished blobs left by an earlier run", "blobs", n)
		}
	} else {
		s.log.Info("another process has this database open; leaving its unfinished blobs alone")
	}
	s.log.Debug("database opened", "migrations_applied", applied, "schema_version", len(ms))
	return newStore(s), nil
}

// noSpaceAtOpen is the error of an Open that failed for lack of space (a
// new database, or a migration, could not be written): one sentence saying
// what to do, with SQLite's words in the log line before it. Any other
// error is returned as it is.
func (s *db) noSpaceAtOpen(path string, err error) error {
	if !isDiskFull(err) {
		return err
	}
	s.log.Error("the database could not be opened for lack of space", "file", path, "err", err)
	return noSpaceAtOpenError{dir: filepath.Dir(path)}
}

// noSpaceAtOpenError is ErrNoSpace (a 507, fault.NoSpace) worded for the
// operator who started the server.
type noSpaceAtOpenError struct{ dir string }

func (e noSpaceAtOpenError) Error() string {
	return "store: no space left on the data filesystem (" + e.dir + "): free some and start again"
}

func (e noSpaceAtOpenError) Unwrap() error { return ErrNoSpace }

// inTx runs fn in one writer transaction, committing when it returns nil.
// Errors that are not already sentinel-wrapped get op as context. Below the
// disk's hard floor it fails with ErrNoSpace before it begins.
func (s *db) inTx(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	if err := s.room(op); err != nil {
		return err
	}
	return s.inTxAnySpace(ctx, op, fn)
}

// room refuses a write that grows the database below the disk's hard floor.
func (s *db) room(op string) error {
	if err := s.space.CheckWrite(); err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	return nil
}

// inTxAnySpace is inTx whatever the free space: for what frees space
// (deletions, pruning), so an operator can always make room, and for what a
// start must do (adopting old group fields, which writes nothing once
// done), so a server below the floor still starts and relays.
func (s *db) inTxAnySpace(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.wrapErr(op, err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		if isSentinel(err) {
			return fmt.Errorf("store: %s: %w", op, err)
		}
		return s.wrapErr(op, err)
	}
	if err := tx.Commit(); err != nil {
		return s.wrapErr(op, err)
	}
	return nil
}

// Close stops every History still running (flushing it), then closes both
// connection pools. It is idempotent; later calls return the first result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		hs := make([]*History, 0, len(s.histories))
		for h := range s.histories {
			hs = append(hs, h)
		}
		s.mu.Unlock()
		var errs []error
		for _, h := range hs {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := h.Close(ctx); err != nil {
				errs = append(errs, err)
			}
			cancel()
		}
		s.closed.Store(true)
		if err := s.r.Close(); err != nil {
			errs = append(errs, fmt.Errorf("store: close read pool: %w", err))
		}
		s.keepWALFiles()
		if err := s.w.Close(); err != nil {
			errs = append(errs, fmt.Errorf("store: close writer: %w", err))
		}
		s.primary.release()
		s.mu.Lock()
		s.closeErr = errors.Join(errs...)
		s.mu.Unlock()
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closeErr
}

// keepWALFiles asks SQLite to keep the -wal and -shm files when the writer,
// the last connection to close, closes (SQLITE_FCNTL_PERSIST_WAL): the WAL
// is still checkpointed, and emptied (journal_size_limit), but not
// deleted. Otherwise the next Open would have to create a -shm file of 32
// KiB, which a start on a full disk cannot (SQLite's "disk I/O error"
// SHMSIZE): with the files kept, opening needs no new space (RELIABILITY.md
// "Starting on a full disk").
func (s *db) keepWALFiles() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		fc, ok := dc.(sqlite.FileControl)
		if !ok {
			return errors.New("the driver has no file control")
		}
		_, err := fc.FileControlPersistWAL("main", 1)
		return err
	})
	if err != nil {
		s.log.Warn("could not keep the -wal and -shm files for the next start; it will need space for them", "err", err)
	}
}

// Path returns the database file path given to Open.
func (s *Store) Path() string { return s.path }

// check returns ErrClosed after Close and the context's error when it is
// already done, so calls fail fast with a clear error.
func (s *db) check(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// wrapErr maps the driver's "database is closed" into ErrClosed when the
// store was closed during the call, and SQLite's "database or disk is full"
// into ErrNoSpace, and wraps everything with op.
func (s *db) wrapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if s.closed.Load() && !errors.Is(err, ErrClosed) {
		return fmt.Errorf("store: %s: %w (%w)", op, ErrClosed, err)
	}
	if !errors.Is(err, ErrNoSpace) && isDiskFull(err) {
		// SQLite's words stay in the chain, before the sentinel: a client
		// is told only what follows it (fault.Detail).
		return fmt.Errorf("store: %s (%w): %w: no space left on the data filesystem; nothing was stored", op, err, ErrNoSpace)
	}
	return fmt.Errorf("store: %s: %w", op, err)
}

// unixMilli and fromMilli are the one place times cross the database
// boundary: integer unix milliseconds, UTC.
func unixMilli(t time.Time) int64 { return t.UnixMilli() }

func fromMilli(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
