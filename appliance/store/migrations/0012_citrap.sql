-- CI-TRAP reports (docs/api-marti.md "CI-TRAP reports"): the fields of a
-- report, read from its XML when it was posted, and the data package that
-- holds the report's mission package (whose groups and owner say who sees
-- the report; deleting the package deletes the report). A report is
-- replaced by deleting its row and inserting the new one, never updated:
-- the row holds the report's XML, last.
CREATE TABLE citrap_reports (
    id                    TEXT    PRIMARY KEY,
    package_id            INTEGER NOT NULL UNIQUE REFERENCES data_packages(id) ON DELETE CASCADE,
    type                  TEXT    NOT NULL DEFAULT '',
    title                 TEXT    NOT NULL DEFAULT '',
    user_callsign         TEXT    NOT NULL DEFAULT '',
    user_description      TEXT    NOT NULL DEFAULT '',
    date_time             TEXT    NOT NULL DEFAULT '',
    date_time_ms          INTEGER NOT NULL DEFAULT 0,  -- date_time as unix ms (0: none)
    date_time_description TEXT    NOT NULL DEFAULT '',
    location              TEXT    NOT NULL DEFAULT '', -- WKT, as given
    location_description  TEXT    NOT NULL DEFAULT '',
    event_scale           TEXT    NOT NULL DEFAULT '',
    importance            TEXT    NOT NULL DEFAULT '',
    status                TEXT    NOT NULL DEFAULT '',
    -- The extent of the location's coordinates (NULL: none), for bbox=.
    min_lon               REAL,
    min_lat               REAL,
    max_lon               REAL,
    max_lat               REAL,
    created_at            INTEGER NOT NULL,
    xml                   TEXT    NOT NULL
);
CREATE INDEX citrap_reports_time ON citrap_reports(date_time_ms);
