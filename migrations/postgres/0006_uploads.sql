-- Mirrors migrations/sqlite/0009_uploads.sql.
CREATE TABLE uploads (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES organizations(id),
    created_at BIGINT NOT NULL,          -- unix ms
    expires_at BIGINT NOT NULL,          -- unix ms; swept after
    length     BIGINT,                   -- total bytes (Upload-Length); NULL while a direct upload streams without Content-Length
    received   BIGINT NOT NULL DEFAULT 0, -- the tus offset: bytes stored in parts
    sha256     TEXT,                      -- set once every byte is in: the upload is complete
    metadata   TEXT                       -- Upload-Metadata as sent
);
CREATE INDEX uploads_expiry ON uploads (expires_at);

-- The parts of an upload, in order: each PATCH (or direct body) is one object.
CREATE TABLE upload_parts (
    upload_id  TEXT NOT NULL,
    start      BIGINT NOT NULL,          -- its first byte's offset in the upload
    length     BIGINT NOT NULL,
    object_key TEXT NOT NULL,
    PRIMARY KEY (upload_id, start)
);
