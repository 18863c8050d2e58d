-- Missions (DataSync, api.md §4.4) and ExCheck checklists (api.md §4.3).
-- Times are unix ms UTC; lists are JSON arrays of strings.
CREATE TABLE missions (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT    NOT NULL UNIQUE,
    guid           TEXT    NOT NULL UNIQUE,
    description    TEXT    NOT NULL DEFAULT '',
    chat_room      TEXT    NOT NULL DEFAULT '',
    base_layer     TEXT    NOT NULL DEFAULT '',
    bbox           TEXT    NOT NULL DEFAULT '',
    path           TEXT    NOT NULL DEFAULT '',
    classification TEXT    NOT NULL DEFAULT '',
    tool           TEXT    NOT NULL DEFAULT 'public',
    keywords       TEXT    NOT NULL DEFAULT '[]',
    groups         TEXT    NOT NULL DEFAULT '[]',
    creator_uid    TEXT    NOT NULL DEFAULT '',
    default_role   TEXT    NOT NULL DEFAULT 'MISSION_SUBSCRIBER',
    invite_only    INTEGER NOT NULL DEFAULT 0,
    password_hash  TEXT    NOT NULL DEFAULT '',  -- PBKDF2 (password.go); '' when not protected
    expiration     INTEGER NOT NULL DEFAULT -1,
    parent_id      INTEGER REFERENCES missions(id) ON DELETE SET NULL,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);
CREATE INDEX missions_parent ON missions(parent_id);

-- Enterprise sync files in a mission (the data_packages rows).
CREATE TABLE mission_contents (
    mission_id  INTEGER NOT NULL REFERENCES missions(id) ON DELETE CASCADE,
    package_id  INTEGER NOT NULL REFERENCES data_packages(id) ON DELETE CASCADE,
    creator_uid TEXT    NOT NULL DEFAULT '',
    added_at    INTEGER NOT NULL,
    PRIMARY KEY (mission_id, package_id)
);
CREATE INDEX mission_contents_package ON mission_contents(package_id);

-- CoT uids in a mission (their latest events come from cot_latest).
CREATE TABLE mission_uids (
    mission_id  INTEGER NOT NULL REFERENCES missions(id) ON DELETE CASCADE,
    uid         TEXT    NOT NULL,
    creator_uid TEXT    NOT NULL DEFAULT '',
    added_at    INTEGER NOT NULL,
    PRIMARY KEY (mission_id, uid)
);

CREATE TABLE mission_subscriptions (
    mission_id INTEGER NOT NULL REFERENCES missions(id) ON DELETE CASCADE,
    client_uid TEXT    NOT NULL,
    token      TEXT    NOT NULL UNIQUE,
    username   TEXT    NOT NULL DEFAULT '',
    role       TEXT    NOT NULL,
    active     INTEGER NOT NULL DEFAULT 1,  -- 0: disconnected (disconnectOnly), data kept
    created_at INTEGER NOT NULL,
    PRIMARY KEY (mission_id, client_uid)
);
CREATE INDEX mission_subscriptions_client ON mission_subscriptions(client_uid);

CREATE TABLE mission_logs (
    id             TEXT    PRIMARY KEY,
    entry_uid      TEXT    NOT NULL DEFAULT '',
    content        TEXT    NOT NULL,
    creator_uid    TEXT    NOT NULL DEFAULT '',
    dtg            INTEGER NOT NULL,
    created_at     INTEGER NOT NULL,
    server_time    INTEGER NOT NULL,
    content_hashes TEXT    NOT NULL DEFAULT '[]',
    keywords       TEXT    NOT NULL DEFAULT '[]'
);
CREATE TABLE mission_log_missions (
    log_id     TEXT    NOT NULL REFERENCES mission_logs(id) ON DELETE CASCADE,
    mission_id INTEGER NOT NULL REFERENCES missions(id) ON DELETE CASCADE,
    PRIMARY KEY (log_id, mission_id)
);
CREATE INDEX mission_log_missions_mission ON mission_log_missions(mission_id);

CREATE TABLE mission_external_data (
    mission_id  INTEGER NOT NULL REFERENCES missions(id) ON DELETE CASCADE,
    uid         TEXT    NOT NULL,
    name        TEXT    NOT NULL DEFAULT '',
    tool        TEXT    NOT NULL DEFAULT '',
    url_data    TEXT    NOT NULL DEFAULT '',
    url_view    TEXT    NOT NULL DEFAULT '',
    notes       TEXT    NOT NULL DEFAULT '',
    creator_uid TEXT    NOT NULL DEFAULT '',
    added_at    INTEGER NOT NULL,
    PRIMARY KEY (mission_id, uid)
);

CREATE TABLE mission_invitations (
    mission_id  INTEGER NOT NULL REFERENCES missions(id) ON DELETE CASCADE,
    type        TEXT    NOT NULL,  -- clientUid, callsign, userName, group, team
    invitee     TEXT    NOT NULL,
    creator_uid TEXT    NOT NULL DEFAULT '',
    role        TEXT    NOT NULL,
    token       TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (mission_id, type, invitee)
);
CREATE INDEX mission_invitations_invitee ON mission_invitations(invitee);

-- Change history: one row per change, body the change's JSON fields
-- besides type, mission, time and creator.
CREATE TABLE mission_changes (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    mission_id  INTEGER NOT NULL REFERENCES missions(id) ON DELETE CASCADE,
    type        TEXT    NOT NULL,
    creator_uid TEXT    NOT NULL DEFAULT '',
    at          INTEGER NOT NULL,
    body        TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX mission_changes_mission ON mission_changes(mission_id, at);

-- ExCheck documents as the client sent them (the XML kept whole).
-- Templates are also the contents of the mission exchecktemplates (the
-- list ATAK reads), downloadable by hash through enterprise sync.
CREATE TABLE excheck_templates (
    uid         TEXT    PRIMARY KEY,
    name        TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    creator_uid TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    hash        TEXT    NOT NULL,  -- SHA-256 of xml, lower-case hex
    xml         BLOB    NOT NULL
);
CREATE INDEX excheck_templates_hash ON excheck_templates(hash);
CREATE TABLE excheck_checklists (
    uid          TEXT    PRIMARY KEY,
    name         TEXT    NOT NULL,
    template_uid TEXT    NOT NULL DEFAULT '',
    creator_uid  TEXT    NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    xml          BLOB    NOT NULL
);

-- The templates' mission exists from the start, as on the official server:
-- ATAK subscribes to it before anyone uploaded a template.
INSERT INTO missions(name, guid, tool, creator_uid, created_at, updated_at)
VALUES ('exchecktemplates',
        lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||
              substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))),
        'ExCheck', 'ExCheck', CAST(strftime('%s', 'now') AS INTEGER) * 1000, CAST(strftime('%s', 'now') AS INTEGER) * 1000);
