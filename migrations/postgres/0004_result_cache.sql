-- The result cache: an edit of an organization whose source (by content), pipeline,
-- options and recipes equal those of an asset of an earlier done edit reuses that
-- asset's outputs (copied under the new edit's keys, so deleting one never breaks
-- the other). Keyed by a SHA-256 over all of them (see queue/cache.rs).
CREATE TABLE result_cache (
    org_id     TEXT NOT NULL,
    cache_key  TEXT NOT NULL,
    edit_id    TEXT NOT NULL,
    outputs    TEXT NOT NULL,            -- JSON array of the asset's storage keys
    created_at BIGINT NOT NULL,          -- unix ms
    PRIMARY KEY (org_id, cache_key)
);

-- What a source URL answered last, per organization: its validators for a
-- conditional request next time, and the SHA-256 of the body they validate.
CREATE TABLE source_validators (
    org_id        TEXT NOT NULL,
    url           TEXT NOT NULL,
    etag          TEXT,
    last_modified TEXT,
    sha256        TEXT NOT NULL,
    updated_at    BIGINT NOT NULL,       -- unix ms
    PRIMARY KEY (org_id, url)
);

-- Whether every output of a done edit came from the result cache.
ALTER TABLE edits ADD COLUMN cached BIGINT NOT NULL DEFAULT 0;
