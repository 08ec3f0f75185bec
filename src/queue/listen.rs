//! PostgreSQL's notifications, heard on every node: new edits, cancels, endings and
//! chunks, each waking what waits for it here.

use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::PgListener;
use sqlx::PgPool;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::cancels::RunningEdits;
use super::finished::FinishedEdits;
use crate::db::{CANCELS_CHANNEL, CHUNKS_CHANNEL, FINISHED_CHANNEL, NEW_EDITS_CHANNEL};

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
