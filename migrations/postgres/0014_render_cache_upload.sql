-- The upload a cached render was made from (docs/API.md, "Render"): deleting the
-- upload deletes every render of it, objects and entries, so no render URL made
-- before the delete serves it after. NULL for a render of a URL, and for a fetched
-- source.
ALTER TABLE render_cache ADD COLUMN upload_id TEXT;
CREATE INDEX render_cache_upload ON render_cache (upload_id);
