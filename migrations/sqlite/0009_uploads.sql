-- Uploads (decisions.md §7): direct and tus, resumable across restarts and nodes. The
-- offset and the parts live here and in the object store, never in one process.
CREATE TABLE uploads (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES organizations(id),
    created_at INTEGER NOT NULL,          -- unix ms
    expires_at INTEGER NOT NULL,          -- unix ms; swept after
    length     INTEGER,                   -- total bytes (Upload-Length); NULL while a direct upload streams without Content-Length
    received   INTEGER NOT NULL DEFAULT 0, -- the tus offset: bytes stored in parts
    sha256     TEXT,                      -- set once every byte is in: the upload is complete
    metadata   TEXT                       -- Upload-Metadata as sent
);
CREATE INDEX uploads_expiry ON uploads (expires_at);

-- The parts of an upload, in order: each PATCH (or direct body) is one object.
CREATE TABLE upload_parts (
    upload_id  TEXT NOT NULL,
    start      INTEGER NOT NULL,          -- its first byte's offset in the upload
    length     INTEGER NOT NULL,
    object_key TEXT NOT NULL,
    PRIMARY KEY (upload_id, start)
);
