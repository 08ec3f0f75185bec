//! Time as the database stores it: unix milliseconds, and "now" read from the
//! database's own clock.

use std::time::{SystemTime, UNIX_EPOCH};

/// "Now" in milliseconds since the Unix epoch, read from PostgreSQL's clock: every
/// node of a cluster compares leases and due times against one clock, so a node whose
/// clock runs ahead cannot steal live leases, nor one that runs behind keep dead ones.
/// `now()` is the transaction's start, constant within one statement.
pub const PG_NOW_MS: &str = "(EXTRACT(EPOCH FROM now()) * 1000)::BIGINT";

/// The same from SQLite's clock (one machine's clock anyway; written in SQL so that
/// both databases run the same statements). 'now' is constant within one statement.
pub const SQLITE_NOW_MS: &str = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";

/// Formats unix milliseconds (a stored time) as `2026-11-21T10:00:00.123Z`, the form
/// every document shows.
pub fn timestamp(ms: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Milliseconds since the Unix epoch, the unit of every stored time.
pub fn unix_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
