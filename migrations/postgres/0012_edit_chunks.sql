-- Chunks across nodes (docs/ARCHITECTURE.md, "Chunk claims"): with
-- --chunk-across-nodes, each chunk of a chunked encode is a row claimed like an edit
-- (lease, attempt as the fencing token), so any node's CPU slot can encode it. The
-- rows stay, as the record of who ran what, until their edit is deleted.
CREATE TABLE edit_chunks (
    -- <edit id>/<step>/<plan>/<index>: the same chunk of the same encode has the same
    -- id on every attempt at the edit, so finished chunks are reused.
    id TEXT PRIMARY KEY,
    edit_id TEXT NOT NULL,
    org_id TEXT NOT NULL,
    -- Which file of which command of which asset (one edit may encode several).
    step TEXT NOT NULL,
    -- A digest of the source's bytes and every chunk's recipe.
    plan TEXT NOT NULL,
    idx INTEGER NOT NULL,
    -- The chunk's ffmpeg recipe and where its source is stored (JSON).
    spec TEXT NOT NULL,
    -- pending, done, failed, or dropped (its encode was given up).
    state TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_until BIGINT,
    claimed_by TEXT,
    -- Where the finishing attempt stored its chunk (the attempt is in the key).
    output_key TEXT,
    error TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX edit_chunks_pending ON edit_chunks (state, created_at);
CREATE INDEX edit_chunks_edit ON edit_chunks (edit_id, step, plan);
-- Ended edits whose scratch objects are not deleted yet, for the sweep.
CREATE INDEX edit_chunks_unforgotten ON edit_chunks (edit_id)
    WHERE state = 'pending' OR output_key IS NOT NULL;
