// Package store owns Outpost's single SQLite database file: opening it with
// the right pragmas, the embedded numbered schema migrations, and the
// repositories that read and write it:
//
//   - chunked blobs (data-package contents), streamed in and out in 256 KiB
//     rows so memory stays flat whatever the file size;
//   - data-package metadata (api.md §2.8, §2.9);
//   - system users with PBKDF2 password hashes and hashed bearer tokens
//     (api.md §2.1, api.md §5), API users (api.md §2.2), login tokens, and
//     the one-query token lookup of every management API request;
//   - the audit log of the management API (api.md §5.5);
//   - the keyword rules and content-based MIME detection of data packages,
//     shared by both HTTP interfaces;
//   - the asynchronous, batched CoT history writer and its queries;
//   - online backups (VACUUM INTO).
//
// It is the only package of the module that imports database/sql and the
// SQLite driver (modernc.org/sqlite, pure Go). Of this module it imports
// outpost/appliance/cot only; it never imports the broker or a transport
// (architecture.md "Import rules").
//
// Connections. One writer *sql.DB with a single connection whose
// transactions begin IMMEDIATE, so writers queue in Go instead of failing
// with SQLITE_BUSY, and a separate small read pool whose connections are
// query_only. In WAL mode readers never block the writer and the writer
// never blocks readers. Every write transaction is short: a slow upload
// writes one chunk per transaction and never holds the writer while it
// waits for the network.
//
// Files. Everything lives in the one database file; SQLite adds its -wal
// and -shm files beside it (kept, the WAL emptied, when the store closes,
// so that the next Open needs no new space: keepWALFiles), and the store
// adds "<db>.lock", an empty file whose OS lock tells the first Store on a
// database (the server) from a second one (a CLI command): only the first
// sweeps unfinished uploads at Open (lock.go).
//
// A full disk. SQLite's "database or disk is full" is ErrNoSpace (kind
// fault.NoSpace): the write changed nothing, reads go on, and the next
// write after space is freed succeeds. Open writes nothing when no
// migration is pending, puts off the sweep of unfinished uploads when
// there is no room for it, and fails a migration that cannot be written
// with one sentence (noSpaceAtOpen).
//
// Times are stored as integer unix milliseconds (UTC) and returned in UTC.
//
// Errors are wrapped with %w; callers test them with errors.Is against the
// sentinels in errors.go (ErrNotFound, ErrConflict, ErrInvalid, ...).
package store
