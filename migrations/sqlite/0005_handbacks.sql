-- Hand-backs at shutdown: a claim that ended because its node stopped, not because the
-- edit failed. `attempt` still bumps on every claim (it fences writes); the tries that
-- count against --max-attempts are `attempt - handbacks`.
ALTER TABLE edits ADD COLUMN handbacks INTEGER NOT NULL DEFAULT 0;
