//! The one claim loop: edits (`worker`), webhook deliveries (`webhooks`) and the chunks
//! of encodes across nodes (`chunk_claims`) are rows claimed under a lease
//! (`db::lease`), and each node claims them the same way. A [`ClaimKind`] says what
//! makes room for a claim, how one is taken and how it runs; the loop does the rest
//! once: it registers for wake-ups before it looks (so a row added between the look
//! and the wait is not missed), runs each claim as a task of its own, waits for a
//! wake-up or the poll when there was nothing to take, and on stopping waits for the
//! claims it holds. [`renew_until_lost`] is the lease's heartbeat for the kinds that
//! run longer than a lease.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::futures::Notified;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The least time between looks once two in a row woken by wake-ups found nothing; until
/// then a wake-up is answered at once. A burst of new rows wakes the loop once per row:
/// while every organization is at its cap, those looks would find nothing each time.
const CLAIM_DEBOUNCE: Duration = Duration::from_millis(20);

/// What one look found.
pub(crate) enum Looked<C> {
    /// A claim, with the room it holds: run it, and look again at once.
    Claimed(C),
    /// Room was there but the row was taken meanwhile: look again at once.
    Again,
    /// Nothing to take (or no room): wait for a wake-up or the poll.
    Nothing,
    /// The node is stopping.
    Stopping,
}

/// A kind of leased row and how this node claims and runs it.
pub(crate) trait ClaimKind: Send + Sync + 'static {
    type Claim: Send + 'static;

    /// What wakes the loop before its poll: rows added, room freed.
    fn wakes(&self) -> Vec<&Notify>;

    /// How long the loop waits when nothing woke it.
    fn poll(&self) -> Duration;

    /// Waits for room (a slot, a share) unless `stopping`, then claims a row.
    fn look(
        &self,
        stopping: &CancellationToken,
    ) -> impl Future<Output = Looked<Self::Claim>> + Send;

    /// Runs a claim to its end (its span entered), the room it holds given back after.
    fn run(self: Arc<Self>, claim: Self::Claim) -> impl Future<Output = ()> + Send + 'static;
}

/// Claims and runs rows of `kind` until `stopping`, then waits for the claims running.
pub(crate) async fn claim_until_stopped<K: ClaimKind>(kind: Arc<K>, stopping: CancellationToken) {
    let mut running = JoinSet::new();
    // Whether the coming look was prompted by a wake-up, and how many such looks in a
    // row found nothing to take.
    let (mut woken, mut fruitless_wakes) = (false, 0u32);
    while !stopping.is_cancelled() {
        while running.try_join_next().is_some() {}
        let mut wakes: Vec<Pin<Box<Notified<'_>>>> = kind
            .wakes()
            .into_iter()
            .map(|n| Box::pin(n.notified()))
            .collect();
        for wake in &mut wakes {
            wake.as_mut().enable();
        }
        match kind.look(&stopping).await {
            Looked::Claimed(claim) => {
                running.spawn(kind.clone().run(claim));
                (woken, fruitless_wakes) = (false, 0);
                continue;
            }
            Looked::Again => continue,
            Looked::Nothing => {}
            Looked::Stopping => break,
        }
        if woken {
            fruitless_wakes += 1;
        }
        let looked = Instant::now();
        let any_wake = futures::future::select_all(wakes);
        tokio::select! {
            _ = any_wake => {
                if fruitless_wakes >= 2 {
                    tokio::select! {
                        _ = tokio::time::sleep_until(looked + CLAIM_DEBOUNCE) => {}
                        _ = stopping.cancelled() => {}
                    }
                }
                woken = true;
            }
            _ = tokio::time::sleep(kind.poll()) => (woken, fruitless_wakes) = (false, 0),
            _ = stopping.cancelled() => {}
        }
    }
    while running.join_next().await.is_some() {}
}

/// How renewing a lease ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Renewal {
    /// The row is no longer held by this claim (canceled, deleted, taken again).
    Lost,
    /// The node must stop now.
    Stopped,
}

/// Renews a lease every third of `lease` with `renew` (`Ok(false)`: the claim is no
/// longer current) until it is lost or `stop_now`; a failed renewal (a transient
/// database error) is tried again at the next beat. Never ends otherwise: race it
/// against the claim's work.
pub(crate) async fn renew_until_lost<F, Fut, E>(
    lease: Duration,
    stop_now: &CancellationToken,
    mut renew: F,
) -> Renewal
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<bool, E>>,
    E: std::fmt::Display,
{
    let mut beat = tokio::time::interval(lease / 3);
    beat.tick().await;
    loop {
        tokio::select! {
            _ = beat.tick() => match renew().await {
                Ok(true) => {}
                Ok(false) => return Renewal::Lost,
                Err(e) => tracing::warn!(error = %e, "renewing a lease failed"),
            },
            _ = stop_now.cancelled() => return Renewal::Stopped,
        }
    }
}
