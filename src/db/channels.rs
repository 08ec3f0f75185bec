//! The PostgreSQL notification channels the database layer speaks on. They live here,
//! with the statements that notify, so the queue (which listens) depends on the
//! database and never the other way round.

/// `Db::insert_edit` notifies here so idle workers on every node claim at once.
pub const NEW_EDITS_CHANNEL: &str = "mediaedit_edits";

/// A cancel is announced here, with the edit id as payload, so the node running the
/// edit stops it.
pub const CANCELS_CHANNEL: &str = "mediaedit_cancels";

/// An edit that reached a final status is announced here (by a trigger on the edits
/// table, migration 0007), so long polls on every node wake.
pub const FINISHED_CHANNEL: &str = "mediaedit_finished";

/// Chunks of an encode run across nodes were added, or one finished (`db::chunks`):
/// idle nodes claim the new ones, and the edit's node joins once all are done.
pub const CHUNKS_CHANNEL: &str = "mediaedit_chunks";
