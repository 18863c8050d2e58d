-- The persistent outbound queue of each outbound federate
-- (docs/federation.md "Disruption tolerance"): what was to be sent while
-- its link was down, in order (id), each an encoded FederatedEvent, kept
-- within an age and a byte bound (oldest dropped first).
CREATE TABLE federate_queue (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    federate TEXT    NOT NULL,
    at       INTEGER NOT NULL,
    size     INTEGER NOT NULL,
    body     BLOB    NOT NULL
);
CREATE INDEX federate_queue_by_federate ON federate_queue(federate, id);
