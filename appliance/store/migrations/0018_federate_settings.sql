-- A managed federate's own settings (docs/federation.md "Federates one by
-- one"): the SHA-256 fingerprint its certificate must have besides
-- chaining to its CA (empty: any certificate of its CA), and its reconnect
-- back-off in milliseconds (0: the defaults).
ALTER TABLE federates ADD COLUMN pin TEXT NOT NULL DEFAULT '';
ALTER TABLE federates ADD COLUMN backoff_min_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE federates ADD COLUMN backoff_max_ms INTEGER NOT NULL DEFAULT 0;
