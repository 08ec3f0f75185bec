-- The nodes that run chunks (--chunk-across-nodes) and how many CPU slots each has:
-- a chunked encode is cut into as many chunks as the live nodes have slots together
-- (docs/ARCHITECTURE.md, "Chunk claims"). Each node writes its row every few seconds;
-- a row not written for a while is a node gone, and is not counted.
CREATE TABLE chunk_nodes (
    node_id TEXT PRIMARY KEY,
    slots INTEGER NOT NULL,
    seen_at INTEGER NOT NULL
);
-- The slots an encode's chunks were planned for: an edit run again (its node was
-- lost) is planned for as many, so its chunks keep their ids and those done are
-- reused, however many nodes run now.
ALTER TABLE edit_chunks ADD COLUMN slots INTEGER;
