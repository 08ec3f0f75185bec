-- Lanes keep short image edits from waiting behind long video edits: some workers
-- claim only from the fast lane.
ALTER TABLE edits ADD COLUMN lane TEXT NOT NULL DEFAULT 'slow';
CREATE INDEX edits_lane_claimable ON edits (lane, status, run_after);
