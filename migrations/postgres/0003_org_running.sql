-- Fair claims count each organization's running edits per lane.
CREATE INDEX edits_org_running ON edits (org_id, lane, status);
