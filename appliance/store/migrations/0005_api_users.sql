-- API users (api.md §2.2) and login tokens (api.md §5.7). As for system
-- users, no secret is stored: token_hash is the SHA-256 hex of the token.
CREATE TABLE api_users (
    name       TEXT    PRIMARY KEY,
    token_hash TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL -- unix ms UTC
);

-- A login token is a system user's bearer token with an expiry, issued by
-- POST /api/login. It goes with its user.
CREATE TABLE login_tokens (
    token_hash TEXT    PRIMARY KEY,
    user_uid   TEXT    NOT NULL REFERENCES system_users(uid) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX login_tokens_user ON login_tokens(user_uid);
CREATE INDEX login_tokens_expires ON login_tokens(expires_at);

-- The SHA-256 of the user's certificate package (a private data package),
-- so it can be downloaded by user.
ALTER TABLE system_users ADD COLUMN certificate_package_hash TEXT NOT NULL DEFAULT '';
