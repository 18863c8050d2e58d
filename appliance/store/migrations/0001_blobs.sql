-- Chunked blob store (architecture.md "Storage").
-- blobs holds metadata only and is the only table whose rows are updated;
-- blob_chunks rows hold up to one chunk (256 KiB) each and are only ever
-- inserted and deleted, never updated (SQLite would rewrite the whole row).
-- state: 0 pending (being written, invisible), 1 complete, 2 being deleted
-- (invisible). Rows not in state 1 are swept at startup.
-- AUTOINCREMENT: a deleted blob's id is never reused, so a reader that
-- still holds an old id can never read another blob's bytes.
CREATE TABLE blobs (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    state      INTEGER NOT NULL DEFAULT 0 CHECK (state IN (0, 1, 2)),
    size       INTEGER NOT NULL DEFAULT 0,
    sha256     TEXT    NOT NULL DEFAULT '',
    chunk_size INTEGER NOT NULL CHECK (chunk_size > 0),
    created_at INTEGER NOT NULL
);
CREATE INDEX blobs_unfinished ON blobs(state) WHERE state <> 1;

-- The large column comes last so the small ones stay in the row's local part.
CREATE TABLE blob_chunks (
    id      INTEGER PRIMARY KEY,
    blob_id INTEGER NOT NULL REFERENCES blobs(id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    data    BLOB    NOT NULL,
    UNIQUE (blob_id, seq)
);
