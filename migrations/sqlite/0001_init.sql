-- Organizations own tokens and edits.
CREATE TABLE organizations (
    id         TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL
);

-- API tokens, stored only as SHA-256 hashes (hex).
CREATE TABLE api_tokens (
    token_hash TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES organizations(id),
    created_at INTEGER NOT NULL
);

-- An edit is also its own job: the queue claims rows of this table.
CREATE TABLE edits (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES organizations(id),
    created_at   INTEGER NOT NULL,           -- unix ms
    updated_at   INTEGER NOT NULL,           -- unix ms
    status       TEXT NOT NULL,              -- queued | processing | done | failed
    request      TEXT NOT NULL,              -- {"assets","commands","options"?} as sent
    attempt      INTEGER NOT NULL DEFAULT 0, -- bumped by every claim; fences writes
    failures     INTEGER NOT NULL DEFAULT 0, -- retryable failures so far
    run_after    INTEGER NOT NULL,           -- unix ms; not claimable before
    lease_until  INTEGER,                    -- unix ms; a processing edit past it is reclaimable
    outputs      TEXT,                       -- JSON array of storage keys, when done
    error_code   TEXT,
    error_detail TEXT,
    progress     REAL
);

CREATE INDEX edits_claimable ON edits (status, run_after);
CREATE INDEX edits_lease ON edits (status, lease_until);
