-- Group mapping per federate (docs/federation.md "Groups"): each row maps,
-- for the federate named (configured, managed or known by its certificate's
-- name, so not a reference to the federates table), one local group to one
-- federate group, outbound ('out': the local group's events go out tagged
-- with the federate group) or inbound ('in': events tagged with the
-- federate group are published to the local group). A federate without
-- rows in a direction keeps __ANON__ that way.
CREATE TABLE federate_groups (
    federate       TEXT NOT NULL,
    direction      TEXT NOT NULL CHECK (direction IN ('in', 'out')),
    local_group    TEXT NOT NULL,
    federate_group TEXT NOT NULL,
    PRIMARY KEY (federate, direction, local_group, federate_group)
);
