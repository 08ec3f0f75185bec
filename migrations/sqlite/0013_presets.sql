-- Named presets of an organization (docs/API.md, "Presets"): a pipeline and its
-- options, stored as the JSON the organization sent once it was validated.
CREATE TABLE presets (
    org_id TEXT NOT NULL,
    name TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (org_id, name)
);
