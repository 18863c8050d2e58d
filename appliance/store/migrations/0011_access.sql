-- Who may see and do what (docs/access.md): groups (TAK channels), their
-- members, roles, the uids bound to certificate identities, and the groups
-- stamped on stored records.

-- A group's bit is its place in every group mask (bit n: the group whose
-- bit is n). __ANON__ is bit 2, as on the official server, and always
-- exists.
CREATE TABLE groups (
    name        TEXT    PRIMARY KEY,
    bit         INTEGER NOT NULL UNIQUE CHECK (bit BETWEEN 0 AND 63),
    description TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL
);
INSERT INTO groups(name, bit, description, created_at)
VALUES ('__ANON__', 2, 'everyone without a group', CAST(strftime('%s', 'now') AS INTEGER) * 1000);

-- Memberships: in (what the user sends goes to the group), out (what the
-- group carries reaches the user); each direction switched on and off by
-- the user's client (ATAK's channels).
CREATE TABLE group_members (
    user_uid   TEXT    NOT NULL REFERENCES system_users(uid) ON DELETE CASCADE,
    group_name TEXT    NOT NULL REFERENCES groups(name) ON DELETE CASCADE,
    dir_in     INTEGER NOT NULL CHECK (dir_in IN (0, 1)),
    dir_out    INTEGER NOT NULL CHECK (dir_out IN (0, 1)),
    active_in  INTEGER NOT NULL DEFAULT 1 CHECK (active_in IN (0, 1)),
    active_out INTEGER NOT NULL DEFAULT 1 CHECK (active_out IN (0, 1)),
    PRIMARY KEY (user_uid, group_name),
    CHECK (dir_in = 1 OR dir_out = 1)
);
CREATE INDEX group_members_group ON group_members(group_name);

ALTER TABLE system_users ADD COLUMN role TEXT NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin'));

-- A uid belongs to the first certificate identity (common name) that used
-- it; kept across restarts.
CREATE TABLE uid_bindings (
    uid      TEXT    PRIMARY KEY,
    identity TEXT    NOT NULL,
    bound_at INTEGER NOT NULL
);
CREATE INDEX uid_bindings_identity ON uid_bindings(identity);

-- The groups a record was sent to (a group mask; -1: every group). Rows
-- stored before groups existed were visible to everyone, and stay so.
ALTER TABLE cot_latest ADD COLUMN groups INTEGER NOT NULL DEFAULT -1;
ALTER TABLE server_objects ADD COLUMN groups INTEGER NOT NULL DEFAULT -1;
ALTER TABLE server_objects ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE data_packages ADD COLUMN groups INTEGER NOT NULL DEFAULT -1;
ALTER TABLE data_packages ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE excheck_templates ADD COLUMN groups INTEGER NOT NULL DEFAULT -1;
ALTER TABLE excheck_checklists ADD COLUMN groups INTEGER NOT NULL DEFAULT -1;

-- A user's certificate package (its private key inside) is the user's
-- alone: no group sees it, its owner and administrators do.
UPDATE data_packages SET groups = 0,
    owner = COALESCE((SELECT name FROM system_users u WHERE u.certificate_package_hash = data_packages.hash), '')
WHERE EXISTS (SELECT 1 FROM json_each(data_packages.keywords) k WHERE k.value = 'connection');

-- Geo object queries read only these columns (see 0008): groups joins them.
DROP INDEX cot_latest_geo;
CREATE INDEX cot_latest_geo ON cot_latest(lat, lon, position, stale, type, groups, uid);

-- Bumped by every change of who may see what (roles, memberships, their
-- switches, groups, deleted users), so a running server notices changes
-- another process made (the command line) and applies them to open
-- connections.
CREATE TABLE access_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
);
INSERT INTO access_generation(id, n) VALUES (1, 0);
