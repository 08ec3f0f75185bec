//! Webhook delivery (docs/API.md): when an edit with a `webhook` ends, its URL
//! receives `{"type": "edit.done" | "edit.failed" | "edit.canceled", "timestamp",
//! "data": <the Edit document>}`, signed (see [`signing`]), at least once.
//!
//! Durable by construction: the event row is written by a database trigger in the
//! same statement that ends the edit, and every node's dispatcher claims due events
//! like jobs (a lease, the attempt number as fencing token), so a restart or a lost
//! node loses none and no attempt is sent by two nodes. A 2xx within 10 s is
//! delivered; anything else is tried again after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h
//! and 14 h (≈ 1 day in all), then given up. Sending obeys the rules sources are
//! fetched by: public addresses only (names checked at connect time), no redirects.
//!
//! One organization has at most `--webhook-concurrency-per-org` deliveries in flight
//! on a node ([`shares`]): a receiver that never answers holds that many of the
//! node's slots, and the other organizations' events are claimed past its backlog.
//! What a failed attempt records says what happened in general words, never the
//! address, port or host it reached, so the record cannot be used to map a network;
//! the server log has the cause, and the URL only as `telemetry::url_for_log` shows
//! it (no query, no userinfo: either may hold the receiver's token).

mod shares;
pub mod signing;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::json;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::db::{unix_ms, AfterAttempt, Db, DeliveryRow, WebhookEvent};
use crate::edits::{render_signed, timestamp};
use crate::queue::claim_loop::{claim_until_stopped, ClaimKind, Looked};
use crate::queue::FinishedEdits;
use crate::storage::Storage;
use shares::OrgShares;

/// Waits after failed attempts 1, 2, …: the decisions' schedule. An event has one
/// attempt more than waits.
pub const RETRY_SCHEDULE: [Duration; 7] = [
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 3600),
    Duration::from_secs(5 * 3600),
    Duration::from_secs(10 * 3600),
    Duration::from_secs(14 * 3600),
];

/// How long a receiver has to answer.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// How long connecting to a receiver may take, within [`TIMEOUT`]: an address that
/// drops the connection attempt gives its slot back after this.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// A claim's lease: well past the timeout, so a live sender never loses its claim.
const LEASE: Duration = Duration::from_secs(60);
/// Deliveries one node sends at once.
const IN_FLIGHT: usize = 16;
/// How often the dispatcher looks for due retries when nothing wakes it.
const POLL: Duration = Duration::from_secs(1);
/// The most of a receiver's answer read (and thrown away).
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// What delivering needs.
#[derive(Clone)]
pub struct Dispatcher {
    pub db: Db,
    pub storage: Storage,
    pub client: reqwest::Client,
    /// Receivers may be on private addresses (tests, intranets): `--allow-private-sources`.
    pub allow_private: bool,
    pub metrics: Arc<crate::metrics::Metrics>,
    /// Deliveries in flight per organization (`--webhook-concurrency-per-org`).
    shares: Arc<OrgShares>,
}

impl Dispatcher {
    pub fn new(
        db: Db,
        storage: Storage,
        allow_private: bool,
        metrics: Arc<crate::metrics::Metrics>,
        per_org: usize,
    ) -> anyhow::Result<Dispatcher> {
        let client = crate::fetch::guarded_client(allow_private)
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(TIMEOUT)
            .build()?;
        Ok(Dispatcher {
            db,
            storage,
            client,
            allow_private,
            metrics,
            shares: OrgShares::new(per_org),
        })
    }

    /// Claims and sends due events until `shutdown`: at once when an edit ends on
    /// any node (`finished`) or a delivery of this node ends, else every second for
    /// retries that came due. An organization whose share is taken up is passed over:
    /// its events wait in the queue, not in front of the others'.
    pub fn run(
        self,
        finished: Arc<FinishedEdits>,
        shutdown: CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        let deliveries = Arc::new(Deliveries {
            dispatcher: self,
            finished,
            slots: Arc::new(Semaphore::new(IN_FLIGHT)),
        });
        tokio::spawn(claim_until_stopped(deliveries, shutdown))
    }

    /// One attempt at `event`, recorded.
    async fn attempt(&self, event: WebhookEvent) {
        let started = Instant::now();
        let at = unix_ms(SystemTime::now());
        let sent = match self.body(&event).await {
            Ok(Some(body)) => self.send(&event, &body).await,
            Ok(None) => Err(Failure::Final("edit deleted".into())),
            Err(e) => {
                tracing::warn!(error = %e, "preparing a webhook delivery failed");
                Err(Failure::Retry(None, INTERNAL.into()))
            }
        };
        let (status, error, after) = match sent {
            Ok(status) => (Some(status), None, AfterAttempt::Delivered),
            Err(Failure::Final(error)) => (None, Some(error), AfterAttempt::GiveUp),
            Err(Failure::Retry(status, error)) => {
                let after = match RETRY_SCHEDULE.get(event.attempt.max(1) as usize - 1) {
                    Some(wait) => AfterAttempt::RetryAt(at + wait.as_millis() as i64),
                    None => AfterAttempt::GiveUp,
                };
                (status, Some(error), after)
            }
        };
        let delivery = DeliveryRow {
            event_id: event.id.clone(),
            kind: event.kind.clone(),
            attempt: event.attempt,
            at,
            status: status.map(i32::from),
            error,
            duration_ms: started.elapsed().as_millis() as i64,
        };
        match self
            .db
            .record_webhook_attempt(&event, &delivery, after)
            .await
        {
            Ok(true) => {
                self.metrics.webhook_attempt(match after {
                    AfterAttempt::Delivered => "delivered",
                    AfterAttempt::RetryAt(_) => "retry",
                    AfterAttempt::GiveUp => "failed",
                });
                tracing::info!(status = ?delivery.status, error = ?delivery.error, next = ?after, "webhook attempt")
            }
            Ok(false) => {
                tracing::warn!("webhook attempt not recorded: the claim is no longer current")
            }
            Err(e) => {
                tracing::warn!(error = %e, "recording a webhook attempt failed; its lease will run out and it is sent again")
            }
        }
    }

    /// The event's body: fixed at its first attempt, so every retry sends the same
    /// bytes. `None` when the edit is gone.
    async fn body(&self, event: &WebhookEvent) -> anyhow::Result<Option<String>> {
        if let Some(payload) = &event.payload {
            return Ok(Some(payload.clone()));
        }
        let now = unix_ms(SystemTime::now());
        let Some(row) = self
            .db
            .get_edit(
                &event.org_id.as_str().into(),
                &event.edit_id.as_str().into(),
                now,
            )
            .await?
        else {
            return Ok(None);
        };
        let body = json!({
            "type": event.kind,
            "timestamp": timestamp(event.created_at),
            "data": render_signed(&row, &self.storage),
        })
        .to_string();
        anyhow::ensure!(
            self.db.set_webhook_payload(event, &body).await?,
            "the claim is no longer current"
        );
        Ok(Some(body))
    }

    /// Posts `body`, signed; the receiver's status when it is a 2xx.
    async fn send(&self, event: &WebhookEvent, body: &str) -> Result<u16, Failure> {
        let url = crate::fetch::check_url(&event.url, self.allow_private).map_err(|e| {
            let words = match e {
                crate::fetch::FetchError::ForbiddenAddress(_) => "address not allowed",
                _ => "invalid URL",
            };
            Failure::Retry(None, words.into())
        })?;
        let now = SystemTime::now();
        let secrets = self
            .db
            .webhook_secrets(&event.org_id, &signing::new_secret())
            .await
            .map_err(|e| internal("reading the signing secret failed", &e))?;
        let timestamp = unix_ms(now) / 1000;
        let signature = signing::signature(&secrets, unix_ms(now), &event.id, timestamp, body)
            .map_err(|e| internal("signing failed", &e))?;
        let response = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", &event.id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| {
                // The full error names the address reached: for the log only, and
                // without the URL, whose query or userinfo may hold a credential.
                let words = crate::fetch::general_words(&e);
                tracing::info!(error = %error_chain(&e.without_url()), "a webhook attempt failed");
                Failure::Retry(None, words.into())
            })?;
        let status = response.status();
        drain(response).await;
        if status.is_success() {
            Ok(status.as_u16())
        } else {
            let error = format!("HTTP {}", status.as_u16());
            Err(Failure::Retry(Some(status.as_u16()), error))
        }
    }
}

/// Why an attempt did not deliver.
enum Failure {
    /// Worth another attempt (the receiver's status, when it answered).
    Retry(Option<u16>, String),
    /// Never worth another.
    Final(String),
}

/// Reads a little of the answer so the connection can be reused; never all of it.
async fn drain(mut response: reqwest::Response) {
    let mut read = 0;
    while let Ok(Some(chunk)) = response.chunk().await {
        read += chunk.len();
        if read > MAX_ANSWER_BYTES {
            break;
        }
    }
}

/// What a delivery records when our side failed; the cause goes to the log.
const INTERNAL: &str = "internal error";

/// A failure of ours (database, signing), logged here and recorded as [`INTERNAL`].
fn internal(what: &str, error: &dyn std::fmt::Display) -> Failure {
    tracing::warn!(error = %error, "{what}");
    Failure::Retry(None, INTERNAL.into())
}

/// Every message in the chain, for the log.
fn error_chain(error: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = Some(error);
    let mut chain = Vec::new();
    while let Some(e) = source {
        chain.push(e.to_string());
        source = e.source();
    }
    chain.join(": ")
}

/// Webhook events as the claim loop takes them: a place among the node's
/// [`IN_FLIGHT`] deliveries and one in the organization's share.
struct Deliveries {
    dispatcher: Dispatcher,
    finished: Arc<FinishedEdits>,
    slots: Arc<Semaphore>,
}

impl ClaimKind for Deliveries {
    type Claim = (WebhookEvent, OwnedSemaphorePermit);

    fn wakes(&self) -> Vec<&Notify> {
        vec![self.finished.any(), self.dispatcher.shares.freed_notify()]
    }

    fn poll(&self) -> Duration {
        POLL
    }

    async fn look(&self, _stopping: &CancellationToken) -> Looked<Self::Claim> {
        // No room: the delivery that ends gives its slot and its share back together,
        // and the share's wake-up looks again.
        let Ok(slot) = self.slots.clone().try_acquire_owned() else {
            return Looked::Nothing;
        };
        let full = self.dispatcher.shares.full();
        match self
            .dispatcher
            .db
            .claim_webhook_event(LEASE.as_millis() as i64, &full)
            .await
        {
            Ok(Some(event)) => Looked::Claimed((event, slot)),
            Ok(None) => Looked::Nothing,
            Err(e) => {
                tracing::warn!(error = %e, "claiming a webhook event failed");
                Looked::Nothing
            }
        }
    }

    fn run(
        self: Arc<Self>,
        (event, slot): Self::Claim,
    ) -> impl Future<Output = ()> + Send + 'static {
        let share = self.dispatcher.shares.take(&event.org_id);
        // Every line of the attempt names the receiver, as logs may show it.
        let url = crate::telemetry::url_text_for_log(&event.url);
        let span = tracing::info_span!("webhook", event_id = %event.id, edit_id = %event.edit_id, org = %event.org_id, attempt = event.attempt, %url);
        async move {
            self.dispatcher.attempt(event).await;
            drop((share, slot));
        }
        .instrument(span)
    }
}
