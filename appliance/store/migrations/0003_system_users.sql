-- System users (api.md §2.1). Secrets are never stored: password_hash is
-- "pbkdf2-sha256$<iter>$<salt b64>$<hash b64>", token_hash the SHA-256 hex
-- of the bearer token (api.md §5: lookup by token).
CREATE TABLE system_users (
    uid                      TEXT    PRIMARY KEY,
    name                     TEXT    NOT NULL UNIQUE,
    grp                      TEXT    NOT NULL DEFAULT '',
    password_hash            TEXT    NOT NULL,
    token_hash               TEXT    NOT NULL,
    certificate_package_name TEXT    NOT NULL DEFAULT '',
    device_type              TEXT    NOT NULL DEFAULT '',
    created_at               INTEGER NOT NULL
);
CREATE UNIQUE INDEX system_users_token ON system_users(token_hash);
