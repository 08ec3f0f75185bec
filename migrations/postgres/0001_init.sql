-- The PostgreSQL schema mirrors migrations/sqlite/ (0001_init, 0002_edit_step,
-- 0003_lanes, 0004_settings): the same tables and columns, times in unix ms as BIGINT, so rows
-- render identically whichever database holds them.

-- Organizations own tokens and edits.
CREATE TABLE organizations (
    id         TEXT PRIMARY KEY,
    created_at BIGINT NOT NULL
);

-- API tokens, stored only as SHA-256 hashes (hex).
CREATE TABLE api_tokens (
    token_hash TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES organizations(id),
    created_at BIGINT NOT NULL
);

-- An edit is also its own job: the queue claims rows of this table.
CREATE TABLE edits (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES organizations(id),
    created_at   BIGINT NOT NULL,           -- unix ms
    updated_at   BIGINT NOT NULL,           -- unix ms
    status       TEXT NOT NULL,             -- queued | processing | done | failed
    request      TEXT NOT NULL,             -- {"assets","commands","options"?} as sent
    attempt      BIGINT NOT NULL DEFAULT 0, -- bumped by every claim; fences writes
    failures     BIGINT NOT NULL DEFAULT 0, -- retryable failures so far
    run_after    BIGINT NOT NULL,           -- unix ms; not claimable before
    lease_until  BIGINT,                    -- unix ms; a processing edit past it is reclaimable
    outputs      TEXT,                      -- JSON array of storage keys, when done
    error_code   TEXT,
    error_detail TEXT,
    progress     DOUBLE PRECISION,
    step         TEXT,                      -- JSON {"asset","command"?,"name"} while processing
    -- fast: only in-process image steps; slow: anything that runs ffmpeg.
    lane         TEXT NOT NULL DEFAULT 'slow'
);

CREATE INDEX edits_claimable ON edits (status, run_after);
CREATE INDEX edits_lease ON edits (status, lease_until);
CREATE INDEX edits_lane_claimable ON edits (lane, status, run_after);

-- Settings every node shares, such as the key that signs download URLs.
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
