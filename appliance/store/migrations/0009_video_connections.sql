-- Video connections that clients publish (the client API's /Marti/vcm and
-- /Marti/api/video). One row per connection uid; the connection and its
-- feeds are kept as one JSON document, which the store validates and bounds.
CREATE TABLE video_connections (
    uid        TEXT    PRIMARY KEY,
    body       TEXT    NOT NULL,  -- JSON of store.VideoConnection
    created_at INTEGER NOT NULL,  -- unix ms UTC
    updated_at INTEGER NOT NULL   -- unix ms UTC
);
CREATE INDEX video_connections_created ON video_connections(created_at);
