-- The life of an edit (decisions.md §6): every edit expires (its retention from
-- creation); an expired edit reads as gone at once and a sweeper deletes its row and
-- every stored object of it. DELETE /v1/edits/{id} expires the edit now (expires_at = 0),
-- so a delete interrupted by a crash is finished by the next sweep.
ALTER TABLE edits ADD COLUMN expires_at INTEGER NOT NULL DEFAULT 0;
UPDATE edits SET expires_at = created_at + 604800000;
CREATE INDEX edits_expiry ON edits (expires_at);
-- Listing an organization's edits, newest first, with or without a status filter.
CREATE INDEX edits_org_list ON edits (org_id, created_at, id);
CREATE INDEX edits_org_status_list ON edits (org_id, status, created_at, id);
