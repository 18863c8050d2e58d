-- CoT objects the server keeps itself (objects package): geo objects made
-- through the management API, and emergencies (made through the API or
-- raised by clients over CoT) until they are cancelled. xml is the event as
-- it is replayed to clients; times are unix ms UTC.
CREATE TABLE server_objects (
    uid        TEXT    PRIMARY KEY,
    kind       TEXT    NOT NULL CHECK (kind IN ('geo', 'emergency')),
    origin     TEXT    NOT NULL CHECK (origin IN ('api', 'client')),
    type       TEXT    NOT NULL,
    label      TEXT    NOT NULL DEFAULT '', -- emergency type words ("911 Alert"); '' for geo objects
    name       TEXT    NOT NULL DEFAULT '', -- callsign or description
    lat        REAL    NOT NULL,
    lon        REAL    NOT NULL,
    stale      INTEGER NOT NULL,            -- gone after this time
    replay     INTEGER NOT NULL,            -- 1: queued to every client that connects
    repeat     INTEGER NOT NULL,            -- 1: also re-broadcast to everyone periodically
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    xml        BLOB    NOT NULL
);
CREATE INDEX server_objects_geo ON server_objects(kind, lat, lon);
CREATE INDEX server_objects_stale ON server_objects(stale);

-- A client's report of its own position (an SA carrying <contact endpoint>,
-- <takv> or <__group>), as opposed to a marker it placed: geo object
-- queries leave those out. Rows written before this migration count as
-- markers until their uid's next event.
ALTER TABLE cot_latest ADD COLUMN position INTEGER NOT NULL DEFAULT 0;

-- Geo object queries read only these columns: with all of them in the
-- latitude/longitude index, a radius query never visits the table.
DROP INDEX cot_latest_geo;
CREATE INDEX cot_latest_geo ON cot_latest(lat, lon, position, stale, type, uid);
