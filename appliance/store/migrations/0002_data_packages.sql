-- Data packages (api.md §2.8, §2.9). One row per content hash: re-uploading
-- identical content updates the existing row and keeps its blob.
CREATE TABLE data_packages (
    id              INTEGER PRIMARY KEY AUTOINCREMENT, -- spec PrimaryKey, never reused
    uid             TEXT    NOT NULL UNIQUE,
    name            TEXT    NOT NULL,                  -- file name
    hash            TEXT    NOT NULL,                  -- SHA-256, lower-case hex
    blob_id         INTEGER NOT NULL REFERENCES blobs(id),
    submission_user TEXT    NOT NULL DEFAULT '',
    creator_uid     TEXT    NOT NULL DEFAULT '',
    keywords        TEXT    NOT NULL DEFAULT '[]',     -- JSON array of strings
    mime_type       TEXT    NOT NULL DEFAULT '',
    size            INTEGER NOT NULL,
    privacy         INTEGER NOT NULL DEFAULT 0 CHECK (privacy IN (0, 1)),
    tool            TEXT    NOT NULL DEFAULT 'public' CHECK (tool IN ('public', 'private')),
    submitted_at    INTEGER NOT NULL                   -- unix ms UTC
);
CREATE UNIQUE INDEX data_packages_hash ON data_packages(hash);
CREATE INDEX data_packages_blob ON data_packages(blob_id);
CREATE INDEX data_packages_submitted ON data_packages(submitted_at);
