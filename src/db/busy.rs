//! How a SQLite connection waits for the write lock another connection holds.
//!
//! SQLite's own busy handler sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50 and then
//! 100 ms between tries: a writer that loses the lock a few times in a row (an insert
//! under a stream of claims and ends, each holding the lock for well under a
//! millisecond) sleeps far longer than the lock was held, and that sleep is the tail
//! of `POST /v1/edits` under churn. This handler tries again every
//! [`RETRY_EVERY`] instead, for the same total of [`BUSY_TIMEOUT`]: a waiting writer
//! takes the lock within a fraction of a millisecond of its release. It runs on the
//! connection's own thread (sqlx gives each SQLite connection one), so its sleeps hold
//! up nothing else.

use std::ffi::{c_int, c_void};
use std::time::Duration;

use sqlx::sqlite::SqliteConnection;

/// Most time a writer waits for the lock before its statement fails with `SQLITE_BUSY`.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// Time between tries for the lock.
const RETRY_EVERY: Duration = Duration::from_micros(100);

/// Installs the handler on `conn`, replacing the one `busy_timeout` set.
pub async fn install(conn: &mut SqliteConnection) -> Result<(), sqlx::Error> {
    let mut handle = conn.lock_handle().await?;
    let raw = handle.as_raw_handle();
    // SAFETY: `raw` is the open connection `handle` keeps locked for this call; the
    // handler keeps no pointer and reads no argument but the count.
    let rc = unsafe {
        libsqlite3_sys::sqlite3_busy_handler(raw.as_ptr(), Some(retry_soon), std::ptr::null_mut())
    };
    if rc != libsqlite3_sys::SQLITE_OK {
        return Err(sqlx::Error::Protocol(format!(
            "sqlite3_busy_handler failed ({rc})"
        )));
    }
    Ok(())
}

/// Called by SQLite with the number of times it was called for this wait: 1 (try
/// again) until [`BUSY_TIMEOUT`] has passed, then 0 (give up with `SQLITE_BUSY`).
extern "C" fn retry_soon(_: *mut c_void, count: c_int) -> c_int {
    let tries = (BUSY_TIMEOUT.as_micros() / RETRY_EVERY.as_micros()) as c_int;
    if count >= tries {
        return 0;
    }
    std::thread::sleep(RETRY_EVERY);
    1
}
