-- The federation protocol a managed federate's outbound link speaks
-- (docs/federation.md "Federates one by one"): 'v2' (gRPC, the default) or
-- 'v1' (the legacy TLS stream).
ALTER TABLE federates ADD COLUMN protocol TEXT NOT NULL DEFAULT 'v2';
