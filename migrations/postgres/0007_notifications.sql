-- Mirrors migrations/sqlite/0010_notifications.sql: webhooks, idempotency keys; and
-- every ending of an edit announced on `mediaedit_finished` (long polls on any node).
ALTER TABLE edits ADD COLUMN webhook_url TEXT;

CREATE TABLE webhook_events (
    id TEXT PRIMARY KEY,
    edit_id TEXT NOT NULL,
    org_id TEXT NOT NULL,
    url TEXT NOT NULL,
    type TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    payload TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at BIGINT NOT NULL,
    lease_until BIGINT,
    state TEXT NOT NULL DEFAULT 'pending'
);
CREATE INDEX webhook_events_due ON webhook_events (state, next_at);
CREATE INDEX webhook_events_edit ON webhook_events (edit_id);

CREATE TABLE webhook_deliveries (
    event_id TEXT NOT NULL,
    edit_id TEXT NOT NULL,
    type TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    at BIGINT NOT NULL,
    status INTEGER,
    error TEXT,
    duration_ms BIGINT NOT NULL,
    PRIMARY KEY (event_id, attempt)
);
CREATE INDEX webhook_deliveries_edit ON webhook_deliveries (edit_id, at);

CREATE TABLE webhook_secrets (
    org_id TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    previous TEXT,
    rotated_at BIGINT
);

CREATE FUNCTION mediaedit_edit_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.webhook_url IS NOT NULL THEN
        INSERT INTO webhook_events (id, edit_id, org_id, url, type, created_at, next_at)
        VALUES ('msg_' || replace(gen_random_uuid()::text, '-', ''), NEW.id, NEW.org_id,
                NEW.webhook_url, 'edit.' || NEW.status, NEW.updated_at, NEW.updated_at);
    END IF;
    PERFORM pg_notify('mediaedit_finished', NEW.id);
    RETURN NULL;
END
$$;

CREATE TRIGGER edits_ended AFTER UPDATE OF status ON edits FOR EACH ROW
WHEN (NEW.status IN ('done', 'failed', 'canceled')
      AND OLD.status NOT IN ('done', 'failed', 'canceled'))
EXECUTE FUNCTION mediaedit_edit_ended();

CREATE TABLE idempotency_keys (
    org_id TEXT NOT NULL,
    key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    edit_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    status INTEGER,
    response TEXT,
    PRIMARY KEY (org_id, key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);
