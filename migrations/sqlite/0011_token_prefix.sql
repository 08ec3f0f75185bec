-- The first characters of each token (`me_` and 8 more), shown by `token list` and
-- named by `token revoke`; too short to guess the token from. NULL for tokens made
-- before it was kept.
ALTER TABLE api_tokens ADD COLUMN prefix TEXT;
CREATE INDEX api_tokens_prefix ON api_tokens (prefix);
