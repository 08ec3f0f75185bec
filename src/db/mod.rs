//! The database: connection pool, migrations, and the rows every layer above shares.
//!
//! SQLite is the embedded default; PostgreSQL lets several nodes share one queue. Both
//! hold the same schema (`migrations/sqlite/`, `migrations/postgres/`), with times in
//! unix ms, so everything above renders rows the same way. The edit row doubles as the
//! job row, so creating an edit and enqueueing its job is one insert.

mod busy;
mod cache;
mod census;
mod channels;
mod chunk_nodes;
mod chunks;
pub mod edit_queue;
mod edits;
mod idempotency;
pub mod lease;
mod lifecycle;
mod orgs;
mod outputs;
mod presets;
mod render;
mod settings;
mod upload_quotas;
mod uploads;
mod webhooks;

pub use cache::SourceValidators;
pub use census::Census;
pub use channels::{CANCELS_CHANNEL, CHUNKS_CHANNEL, FINISHED_CHANNEL, NEW_EDITS_CHANNEL};
pub use chunks::{ChunkClaim, ChunkSet, ChunkState};
pub use edits::{EditRow, EditStatus, Lane, StoredRequest};
pub use idempotency::KeyClaim;
pub use lifecycle::{Cancel, EditPage, PageCursor, Retry};
pub use orgs::{hash_token, token_prefix, valid_org_id, Revoked, TokenListing};
pub use outputs::StoredOutput;
pub use presets::PresetRow;
pub use render::{RenderCacheRow, RenderKeyRow, RENDER_KEY_PREFIX_LEN};
pub use upload_quotas::{QuotaRefusal, UploadQuota, UploadUsage};
pub use uploads::{UploadPart, UploadRow};
pub use webhooks::{AfterAttempt, DeliveryRow, WebhookEvent, WebhookSecrets};

use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{PgPool, SqlitePool};

/// Runs one body against whichever pool a [`Db`] holds, for statements that read the
/// same on both databases. In the body, `$pool` is the pool and `$sql("…")` turns SQL
/// written with PostgreSQL's `$1, $2, …` placeholders into the pool's own dialect
/// (SQLite reads `?1, ?2, …`). A macro, because the two pools' query types differ.
macro_rules! with_pool {
    ($db:expr, |$pool:ident, $sql:ident| $body:expr) => {
        match $db {
            Db::Sqlite($pool) => {
                let $sql = |text: &str| text.replace('$', "?");
                $body
            }
            Db::Postgres($pool) => {
                let $sql = |text: &str| text.to_string();
                $body
            }
        }
    };
}
pub(crate) use with_pool;

/// "Now" in milliseconds since the Unix epoch, read from PostgreSQL's clock: every
/// node of a cluster compares leases and due times against one clock, so a node whose
/// clock runs ahead cannot steal live leases, nor one that runs behind keep dead ones.
/// `now()` is the transaction's start, constant within one statement.
pub const PG_NOW_MS: &str = "(EXTRACT(EPOCH FROM now()) * 1000)::BIGINT";
/// The same from SQLite's clock (one machine's clock anyway; written in SQL so that
/// both databases run the same statements). 'now' is constant within one statement.
pub const SQLITE_NOW_MS: &str = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";

/// Why a database operation failed. Always an internal error to clients.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("database error: {0}")]
    Sqlx(#[from] sqlx::Error),
    #[error("migration error: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    #[error("{0}")]
    Url(String),
}

/// Handle to the database; cheap to clone. One variant per backend: each method
/// matches on it and runs that backend's SQL (placeholders and a few functions differ).
#[derive(Clone)]
pub enum Db {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl std::fmt::Debug for Db {
    // Connection options may carry a password; say only which backend this is.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.backend())
    }
}

impl Db {
    /// Opens the database at `url` (`sqlite://PATH` or `postgres://…`/`postgresql://…`)
    /// with at most `max_connections` connections, and runs migrations.
    ///
    /// Several nodes may start at once: on PostgreSQL the migrator holds an advisory
    /// lock while it runs, so each migration is applied once and the others wait.
    pub async fn open(url: &str, max_connections: u32) -> Result<Db, DbError> {
        if let Some(path) = url.strip_prefix("sqlite://") {
            return Db::open_sqlite_with(Path::new(path), max_connections).await;
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let options = PgConnectOptions::from_str(url)?;
            let pool = PgPoolOptions::new()
                .max_connections(max_connections.max(2))
                .acquire_timeout(Duration::from_secs(10))
                .connect_with(options)
                .await?;
            sqlx::migrate!("./migrations/postgres").run(&pool).await?;
            return Ok(Db::Postgres(pool));
        }
        Err(DbError::Url(
            "the database URL must start with sqlite:// or postgres://".into(),
        ))
    }

    /// Opens (creating if needed) the SQLite database at `path` and runs migrations.
    pub async fn open_sqlite(path: &Path) -> Result<Db, DbError> {
        Db::open_sqlite_with(path, 8).await
    }

    async fn open_sqlite_with(path: &Path, max_connections: u32) -> Result<Db, DbError> {
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))?
            .create_if_missing(true)
            // WAL lets readers (GET /v1/edits) proceed while a worker writes.
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            // Writers queue behind each other rather than failing with SQLITE_BUSY (the
            // handler `busy` installs replaces this one's waits, not its total).
            .busy_timeout(busy::BUSY_TIMEOUT);
        let pool = SqlitePoolOptions::new()
            .max_connections(max_connections.max(1))
            .after_connect(|conn, _| Box::pin(busy::install(conn)))
            .connect_with(options)
            .await?;
        sqlx::migrate!("./migrations/sqlite").run(&pool).await?;
        Ok(Db::Sqlite(pool))
    }

    /// Runs a trivial query: whether the database answers.
    pub async fn ping(&self) -> Result<(), DbError> {
        with_pool!(self, |pool, _sql| {
            sqlx::query("SELECT 1").execute(pool).await?;
        });
        Ok(())
    }

    /// `"sqlite"` or `"postgres"`, for logs.
    pub fn backend(&self) -> &'static str {
        match self {
            Db::Sqlite(_) => "sqlite",
            Db::Postgres(_) => "postgres",
        }
    }
}

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
