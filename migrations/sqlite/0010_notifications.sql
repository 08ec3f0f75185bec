-- Webhooks, idempotency keys (decisions.md §8).

-- The URL an edit's endings are posted to; NULL when it has none.
ALTER TABLE edits ADD COLUMN webhook_url TEXT;

-- One row per event (an edit with a webhook ended): the outbox the dispatcher claims
-- like jobs. `id` is the `webhook-id` every attempt carries; `payload` is fixed at the
-- first attempt, so every retry sends the same body.
CREATE TABLE webhook_events (
    id TEXT PRIMARY KEY,
    edit_id TEXT NOT NULL,
    org_id TEXT NOT NULL,
    url TEXT NOT NULL,
    type TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    payload TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at INTEGER NOT NULL,
    lease_until INTEGER,
    state TEXT NOT NULL DEFAULT 'pending'
);
CREATE INDEX webhook_events_due ON webhook_events (state, next_at);
CREATE INDEX webhook_events_edit ON webhook_events (edit_id);

-- Every attempt, as `GET /v1/edits/{id}/deliveries` lists it.
CREATE TABLE webhook_deliveries (
    event_id TEXT NOT NULL,
    edit_id TEXT NOT NULL,
    type TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    at INTEGER NOT NULL,
    status INTEGER,
    error TEXT,
    duration_ms INTEGER NOT NULL,
    PRIMARY KEY (event_id, attempt)
);
CREATE INDEX webhook_deliveries_edit ON webhook_deliveries (edit_id, at);

-- Each organization's signing secret, and the one before it during the overlap.
CREATE TABLE webhook_secrets (
    org_id TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    previous TEXT,
    rotated_at INTEGER
);

-- An event is recorded in the same write that ends the edit, whichever code path
-- ends it (done, failed, canceled, deleted while running): none can be forgotten.
CREATE TRIGGER edits_webhook_event AFTER UPDATE OF status ON edits
WHEN NEW.webhook_url IS NOT NULL
    AND NEW.status IN ('done', 'failed', 'canceled')
    AND OLD.status NOT IN ('done', 'failed', 'canceled')
BEGIN
    INSERT INTO webhook_events (id, edit_id, org_id, url, type, created_at, next_at)
    VALUES ('msg_' || lower(hex(randomblob(16))), NEW.id, NEW.org_id, NEW.webhook_url,
            'edit.' || NEW.status, NEW.updated_at, NEW.updated_at);
END;

-- `Idempotency-Key` of `POST /v1/edits`: the request's canonical hash, the edit it
-- creates (its id chosen before it is inserted), and the response once there is one
-- (`status` NULL while the first request is being handled).
CREATE TABLE idempotency_keys (
    org_id TEXT NOT NULL,
    key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    edit_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    status INTEGER,
    response TEXT,
    PRIMARY KEY (org_id, key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);
