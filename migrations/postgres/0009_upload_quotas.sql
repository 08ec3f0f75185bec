-- Mirrors migrations/sqlite/0012_upload_quotas.sql.
ALTER TABLE uploads ADD COLUMN finishing_until BIGINT;
CREATE INDEX uploads_org ON uploads (org_id, expires_at);
