-- Mirrors migrations/sqlite/0008_lifecycle.sql: retention, deletes, listing.
ALTER TABLE edits ADD COLUMN expires_at BIGINT NOT NULL DEFAULT 0;
UPDATE edits SET expires_at = created_at + 604800000;
CREATE INDEX edits_expiry ON edits (expires_at);
CREATE INDEX edits_org_list ON edits (org_id, created_at, id);
CREATE INDEX edits_org_status_list ON edits (org_id, status, created_at, id);
