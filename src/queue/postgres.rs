//! The queue on PostgreSQL: many nodes claim from one table at once. A claim is one
//! statement whose inner `SELECT … FOR UPDATE SKIP LOCKED` locks the oldest claimable
//! row and skips rows other claimers hold, so concurrent claims never block on each
//! other nor take the same edit. Leases and `(id, attempt)` fencing work exactly as on
//! SQLite; new edits are announced with `NOTIFY` (see [`listen_for_new_edits`]).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::postgres::PgListener;
use sqlx::PgPool;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::cancels::RunningEdits;
use super::finished::FinishedEdits;
use super::{
    fenced_sql, run_claim, run_fenced, Bind, Claim, Fairness, JobQueue, JobRef, StoredClaim,
};
use crate::db::{
    DbError, CANCELS_CHANNEL, CHUNKS_CHANNEL, FINISHED_CHANNEL, NEW_EDITS_CHANNEL, PG_NOW_MS,
};

/// The advisory lock claims take turns on (any constant; this one spells "mediaedt").
const CLAIM_LOCK: i64 = 0x6d65_6469_6165_6474;

pub struct PgQueue {
    pool: PgPool,
}

impl PgQueue {
    pub fn new(pool: PgPool) -> Self {
        PgQueue { pool }
    }
}

#[async_trait]
impl JobQueue for PgQueue {
    async fn claim_fair(
        &self,
        lease: Duration,
        fairness: Fairness<'_>,
    ) -> Result<Option<Claim>, DbError> {
        let sql = super::claim_sql(PG_NOW_MS, "FOR UPDATE SKIP LOCKED");
        let mut tx = self.pool.begin().await?;
        // Claims take turns (each is one short statement), so the per-organization
        // count one claim reads includes the claim committed just before it: two
        // nodes claiming at the same instant could otherwise both take an
        // organization's last share. SQLite's single writer gives this for free.
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(CLAIM_LOCK)
            .execute(&mut *tx)
            .await?;
        let claim = run_claim!(&mut *tx, &sql, lease, fairness);
        tx.commit().await?;
        claim
    }

    async fn fenced(&self, set: &str, job: &JobRef, binds: Vec<Bind<'_>>) -> Result<bool, DbError> {
        let sql = fenced_sql(set, binds.len(), PG_NOW_MS);
        run_fenced!(&self.pool, &sql, binds, job)
    }
}

/// Feeds `wake` from `LISTEN mediaedit_edits` until `shutdown`, so an edit created on
/// any node wakes idle workers on this one at once, and `running` from `LISTEN
/// mediaedit_cancels`, so a cancel on any node stops the edit here at once (see
/// `cancels`), and `finished` from `LISTEN mediaedit_finished`, so a long poll on any
/// node wakes when its edit ends anywhere, and `chunks` from `LISTEN
/// mediaedit_chunks`, so chunk workers claim new chunks and an edit waiting for its
/// chunks joins at once (see `chunk_claims`). The listener holds one connection
/// of `pool` and reconnects by itself; notifications sent while it was disconnected are
/// lost, which is why workers also poll. Every idle worker is woken on purpose: a
/// fast-lane-only worker cannot take a slow edit, so waking just one could pick it.
pub fn listen(
    pool: PgPool,
    wake: Arc<Notify>,
    running: Arc<RunningEdits>,
    finished: Arc<FinishedEdits>,
    chunks: Arc<Notify>,
    shutdown: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut listener: Option<PgListener> = None;
        while !shutdown.is_cancelled() {
            let current = match listener.as_mut() {
                Some(l) => l,
                None => {
                    let connected = async {
                        let mut l = PgListener::connect_with(&pool).await?;
                        let channels = [
                            NEW_EDITS_CHANNEL,
                            CANCELS_CHANNEL,
                            FINISHED_CHANNEL,
                            CHUNKS_CHANNEL,
                        ];
                        l.listen_all(channels).await?;
                        Ok::<_, sqlx::Error>(l)
                    };
                    match connected.await {
                        Ok(l) => {
                            // Edits created while nobody listened are claimable now,
                            // and edits waited on may have ended meanwhile.
                            wake.notify_waiters();
                            finished.look_again();
                            chunks.notify_waiters();
                            listener.insert(l)
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "listening for new edits failed; polling until it works");
                            tokio::select! {
                                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                                _ = shutdown.cancelled() => {}
                            }
                            continue;
                        }
                    }
                }
            };
            let failed = tokio::select! {
                received = current.recv() => match received {
                    Ok(notification) if notification.channel() == CANCELS_CHANNEL => {
                        running.cancel(notification.payload());
                        false
                    }
                    Ok(notification) if notification.channel() == FINISHED_CHANNEL => {
                        finished.finished(notification.payload());
                        false
                    }
                    Ok(notification) if notification.channel() == CHUNKS_CHANNEL => {
                        chunks.notify_waiters();
                        false
                    }
                    Ok(_) => {
                        wake.notify_waiters();
                        false
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "the new-edit listener failed; reconnecting");
                        true
                    }
                },
                _ = shutdown.cancelled() => false,
            };
            if failed {
                listener = None;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    })
}
