-- The CoT history read event by event (the client API's cot/xml/{uid}/all
-- and cot/sa, docs/api-marti.md "CoT history").

-- The groups each stored event was sent to (a group mask; -1: every group),
-- so a reader sees the events of a uid that were sent to its groups and no
-- others, whatever the uid's latest event was sent to. Events stored before
-- this migration have none (NULL): they are read with the groups of their
-- uid's latest row, as they were until now, so this adds no rewrite of the
-- history to the upgrade.
ALTER TABLE cot_events ADD COLUMN groups INTEGER;

-- The events of one uid in a time window, newest first (id orders those
-- received in the same millisecond); with their groups, the events a
-- reader does not see are passed over in the index.
CREATE INDEX cot_events_uid_received ON cot_events(uid, received_at, id, groups);

-- Every group any stored event of the uid was sent to (the union of their
-- masks, kept by the history writer): a reader none of whose groups is in
-- it sees none of the uid's events, which is answered without reading
-- them. Rows from before this migration: every group (-1), until their
-- events are pruned.
ALTER TABLE cot_usage ADD COLUMN groups INTEGER NOT NULL DEFAULT -1;
