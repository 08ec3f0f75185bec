-- Images by URL (docs/API.md, "Render"): the keys an organization signs render URLs
-- with, and the index of the render cache (results and fetched sources, stored as
-- objects under `render/`), whose least recently used entries go first.
CREATE TABLE render_keys (
    org_id TEXT NOT NULL,
    -- `rk_` and 8 characters: what `render-key list` shows and `revoke` takes.
    prefix TEXT NOT NULL,
    -- The key itself: an HMAC key must be kept to check signatures with it.
    secret TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (org_id, prefix)
);
CREATE TABLE render_cache (
    object_key TEXT PRIMARY KEY,
    bytes INTEGER NOT NULL,
    -- The stored file's extension (`jpg`, `webp`, …); `bin` for a source.
    format TEXT NOT NULL,
    -- The strong ETag, quoted.
    etag TEXT NOT NULL,
    last_used INTEGER NOT NULL
);
CREATE INDEX render_cache_last_used ON render_cache (last_used);
