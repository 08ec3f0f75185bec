-- Mirrors migrations/sqlite/0011_token_prefix.sql.
ALTER TABLE api_tokens ADD COLUMN prefix TEXT;
CREATE INDEX api_tokens_prefix ON api_tokens (prefix);
