-- Audit of management API calls made as a system user (api.md §5.5).
-- body is the request body with secrets masked and clipped, or a note
-- (uploads are recorded by size); body_size is the body's length in bytes.
CREATE TABLE audit_log (
    id        INTEGER PRIMARY KEY,
    at        INTEGER NOT NULL, -- unix ms UTC
    user_uid  TEXT    NOT NULL,
    user_name TEXT    NOT NULL,
    remote    TEXT    NOT NULL DEFAULT '',
    method    TEXT    NOT NULL,
    endpoint  TEXT    NOT NULL,
    status    INTEGER NOT NULL,
    body      TEXT    NOT NULL DEFAULT '',
    body_size INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX audit_log_at ON audit_log(at);
CREATE INDEX audit_log_user ON audit_log(user_name, at);
