//! The handle to the database: one pool of either backend, opened and migrated, and
//! the macro that runs one body against whichever pool it holds.

use crate::db::busy;
use crate::db::error::DbError;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{PgPool, SqlitePool};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

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

    pub(super) async fn open_sqlite_with(path: &Path, max_connections: u32) -> Result<Db, DbError> {
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
