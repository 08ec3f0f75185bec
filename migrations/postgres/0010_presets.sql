-- Mirrors migrations/sqlite/0013_presets.sql.
CREATE TABLE presets (
    org_id TEXT NOT NULL,
    name TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (org_id, name)
);
