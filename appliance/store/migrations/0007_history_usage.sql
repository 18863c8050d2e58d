-- Bytes and events of CoT history per uid, kept by the history writer in the
-- same transactions that insert and prune cot_events. It makes the history
-- size cap cheap: the total is a sum over this small table, and pruning
-- starts with the uid that holds the most bytes, so one noisy client cannot
-- push everyone else's history out.
CREATE TABLE cot_usage (
    uid    TEXT    PRIMARY KEY,
    bytes  INTEGER NOT NULL,
    events INTEGER NOT NULL
);
CREATE INDEX cot_usage_bytes ON cot_usage(bytes);
INSERT INTO cot_usage(uid, bytes, events)
    SELECT uid, SUM(length(xml)), COUNT(*) FROM cot_events GROUP BY uid;
