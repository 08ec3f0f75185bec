-- The typed plan an edit runs (its assets, commands and options as validated when
-- it was created), stored beside the request as sent: a worker runs it without
-- parsing the request again. NULL for an edit created before this column, whose
-- request is parsed instead.
ALTER TABLE edits ADD COLUMN plan TEXT;
