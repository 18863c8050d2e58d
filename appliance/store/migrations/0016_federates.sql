-- Federates managed through the management API and the command line
-- (docs/federation.md "Managing federates"): a name, the address of its
-- federation listener to connect to (empty: it connects to us), the PEM
-- CA certificates its certificate must chain to, and whether it is used.
CREATE TABLE federates (
    name       TEXT    PRIMARY KEY,
    address    TEXT    NOT NULL DEFAULT '',
    ca_pem     TEXT    NOT NULL DEFAULT '',
    enabled    INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL
);
