-- The step a processing edit is on, as JSON: {"asset":0,"command":1,"name":"video-to-gif"}.
ALTER TABLE edits ADD COLUMN step TEXT;
