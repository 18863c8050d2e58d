-- Version 14 belongs to a change on another branch. This file only keeps
-- the versions without a gap until that change is merged; the merge keeps
-- that branch's 0014 and drops this one.
SELECT 1;
