-- CoT history, written in batches by the asynchronous history writer.
-- Times are unix ms UTC. xml is the event's XML encoding.
CREATE TABLE cot_events (
    id          INTEGER PRIMARY KEY,
    uid         TEXT    NOT NULL,
    type        TEXT    NOT NULL,
    how         TEXT    NOT NULL,
    callsign    TEXT    NOT NULL DEFAULT '',
    time        INTEGER NOT NULL,
    start       INTEGER NOT NULL,
    stale       INTEGER NOT NULL,
    lat         REAL    NOT NULL,
    lon         REAL    NOT NULL,
    hae         REAL    NOT NULL,
    received_at INTEGER NOT NULL,
    source      TEXT    NOT NULL DEFAULT '',
    xml         BLOB    NOT NULL
);
-- "latest event for uid": newest id first within a uid.
CREATE INDEX cot_events_uid ON cot_events(uid, id);
-- retention pruning by receive time.
CREATE INDEX cot_events_received ON cot_events(received_at);

-- Newest event per uid (newest by received_at), upserted in the same batch.
-- No foreign key to cot_events (it would cost on every insert and prune):
-- pruning removes latest rows past the cutoff before and after the events,
-- and queries join the two tables, so a latest row whose event is gone is
-- never returned.
CREATE TABLE cot_latest (
    uid         TEXT    PRIMARY KEY,
    type        TEXT    NOT NULL,
    callsign    TEXT    NOT NULL DEFAULT '',
    lat         REAL    NOT NULL,
    lon         REAL    NOT NULL,
    stale       INTEGER NOT NULL,
    received_at INTEGER NOT NULL,
    event_id    INTEGER NOT NULL
);
CREATE INDEX cot_latest_geo ON cot_latest(lat, lon);
CREATE INDEX cot_latest_received ON cot_latest(received_at);
