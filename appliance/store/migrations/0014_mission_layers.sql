-- Mission layers (docs/api-marti.md "Mission layers"): a tree of named
-- folders a mission's uids and files are sorted into, as the official TAK
-- server keeps them. A layer of type ITEM stands for one content of the
-- mission (a CoT uid, or a file's hash) placed in its parent layer.
CREATE TABLE mission_layers (
    mission_id INTEGER NOT NULL REFERENCES missions(id) ON DELETE CASCADE,
    uid        TEXT    NOT NULL,
    name       TEXT    NOT NULL DEFAULT '',
    type       TEXT    NOT NULL,  -- GROUP, UID, CONTENTS, MAPLAYER, ITEM
    parent_uid TEXT,              -- NULL: a top-level layer
    position   INTEGER NOT NULL,  -- order among its siblings
    PRIMARY KEY (mission_id, uid)
);
CREATE INDEX mission_layers_parent ON mission_layers(mission_id, parent_uid, position);
