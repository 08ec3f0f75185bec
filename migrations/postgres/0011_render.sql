-- Mirrors migrations/sqlite/0014_render.sql.
CREATE TABLE render_keys (
    org_id TEXT NOT NULL,
    -- `rk_` and 8 characters: what `render-key list` shows and `revoke` takes.
    prefix TEXT NOT NULL,
    -- The key itself: an HMAC key must be kept to check signatures with it.
    secret TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (org_id, prefix)
);
CREATE TABLE render_cache (
    object_key TEXT PRIMARY KEY,
    bytes BIGINT NOT NULL,
    -- The stored file's extension (`jpg`, `webp`, …); `bin` for a source.
    format TEXT NOT NULL,
    -- The strong ETag, quoted.
    etag TEXT NOT NULL,
    last_used BIGINT NOT NULL
);
CREATE INDEX render_cache_last_used ON render_cache (last_used);
