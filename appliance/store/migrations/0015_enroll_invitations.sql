-- Enrollment invitations (protocol.md §8 "Enrolling with an invitation"):
-- a one-time (or few-times) secret a device presents to the enrollment
-- port in place of its user's password. Only the SHA-256 hex of the
-- random token is kept. An invitation goes with its user.
CREATE TABLE enroll_invitations (
    id         TEXT    PRIMARY KEY,
    user_uid   TEXT    NOT NULL REFERENCES system_users(uid) ON DELETE CASCADE,
    token_hash TEXT    NOT NULL UNIQUE,
    device     TEXT    NOT NULL CHECK (device IN ('atak', 'itak', 'wintak')),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    uses       INTEGER NOT NULL CHECK (uses > 0),
    uses_left  INTEGER NOT NULL CHECK (uses_left BETWEEN 0 AND uses),
    revoked_at INTEGER NOT NULL DEFAULT 0,
    created_by TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX enroll_invitations_user ON enroll_invitations(user_uid, created_at);
