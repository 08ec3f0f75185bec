-- Upload quotas and hashing once (docs/API.md, Uploads). Quotas count an
-- organization's unexpired uploads; `finishing_until` is the claim of the one node
-- hashing a finished upload (unix ms), so reads never hash it again meanwhile.
ALTER TABLE uploads ADD COLUMN finishing_until INTEGER;
CREATE INDEX uploads_org ON uploads (org_id, expires_at);
