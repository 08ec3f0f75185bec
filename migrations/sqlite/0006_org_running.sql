-- Fair claims count, per node and lane, the edits each organization runs.
ALTER TABLE edits ADD COLUMN claimed_by TEXT;
CREATE INDEX edits_org_running ON edits (org_id, lane, claimed_by, status);
