//! `GET /metrics` (docs/API.md): Prometheus metrics of this node, in the
//! OpenMetrics text format Prometheus scrapes, through `prometheus-client` (the
//! Prometheus project's Rust client; one registry per process, no globals, so several
//! apps in one test process keep their own).
//!
//! Counters and histograms are updated where things happen (the HTTP layer, the
//! worker, the pipeline, the webhook dispatcher); what the database knows — edits by
//! status, the queue's depth and the age of its oldest edit — is read at scrape time,
//! so every node of a cluster reports the same figures for them.
//!
//! Nothing a client sends can add a series: the `method` label is one of eight fixed
//! values and `route` is a route's template or `unmatched`, so `/metrics` stays the
//! same size however many strangers call with made-up methods and paths. The
//! database is read at most once per [`CENSUS_TTL`], so scraping as fast as one likes
//! costs the database nothing more.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

use crate::commands::Command;
use crate::db::{unix_ms, Census, Db, DbError};

/// How long the database's figures are reused before a scrape reads them again.
pub const CENSUS_TTL: Duration = Duration::from_secs(5);

/// The `route` of a request that matched no route.
pub const UNMATCHED: &str = "unmatched";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// One of [`method_label`]'s fixed values.
    pub method: &'static str,
    /// The route's pattern (`/v1/edits/{id}`), never the path itself; [`UNMATCHED`]
    /// for a path no route matches.
    pub route: String,
    pub status: u16,
}

/// The `method` label: the methods the API answers by name, every other one (a
/// client may send any token as a method) as `other`.
pub fn method_label(method: &Method) -> &'static str {
    const KNOWN: [Method; 7] = [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
        Method::OPTIONS,
    ];
    KNOWN
        .iter()
        .find(|known| *known == method)
        .map_or("other", |known| known.as_str())
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct EditLabels {
    pub status: String,
    pub command: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CommandLabels {
    pub command: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StatusLabels {
    pub status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    pub outcome: String,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// Seconds from 10 ms to about 11 minutes.
fn seconds_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.01, 2.0, 17))
}

/// Every metric of this node.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    edits_ended: Family<EditLabels, Counter>,
    edit_seconds: Histograms<CommandLabels>,
    command_seconds: Histograms<CommandLabels>,
    bytes_fetched: Counter,
    bytes_stored: Counter,
    cache_hits: Counter,
    webhook_deliveries: Family<OutcomeLabels, Counter>,
    token_lookups: Family<OutcomeLabels, Counter>,
    renders: Family<OutcomeLabels, Counter>,
    render_seconds: Histogram,
    edits: Family<StatusLabels, Gauge>,
    queue_depth: Gauge,
    oldest_queued: Gauge<f64, AtomicU64>,
    /// The last census and when it was read. An async lock, so that scrapes arriving
    /// together while it is stale wait for one read instead of each making their own.
    census: tokio::sync::Mutex<Option<(Instant, Census)>>,
}

impl Metrics {
    pub fn new() -> Arc<Metrics> {
        let mut registry = Registry::with_prefix("mediaedit");
        let metrics = Metrics {
            requests: Family::default(),
            edits_ended: Family::default(),
            edit_seconds: Family::new_with_constructor(seconds_histogram),
            command_seconds: Family::new_with_constructor(seconds_histogram),
            bytes_fetched: Counter::default(),
            bytes_stored: Counter::default(),
            cache_hits: Counter::default(),
            webhook_deliveries: Family::default(),
            token_lookups: Family::default(),
            renders: Family::default(),
            render_seconds: seconds_histogram(),
            edits: Family::default(),
            queue_depth: Gauge::default(),
            oldest_queued: Gauge::default(),
            census: tokio::sync::Mutex::new(None),
            registry: Registry::default(),
        };
        registry.register(
            "http_requests",
            "HTTP requests answered, by route and status",
            metrics.requests.clone(),
        );
        registry.register(
            "edits_ended",
            "Edits that ended on this node, by status and by each command of their pipeline",
            metrics.edits_ended.clone(),
        );
        registry.register(
            "edit_duration_seconds",
            "Time of an attempt from claim to outcome, by each command of the edit's pipeline",
            metrics.edit_seconds.clone(),
        );
        registry.register("command_duration_seconds", "Time one command ran on one file (the ffmpeg run, or the in-process image step), by command", metrics.command_seconds.clone());
        registry.register(
            "fetched_bytes",
            "Source bytes fetched (or read from uploads)",
            metrics.bytes_fetched.clone(),
        );
        registry.register(
            "stored_bytes",
            "Output bytes stored",
            metrics.bytes_stored.clone(),
        );
        registry.register(
            "result_cache_hits",
            "Assets answered by the result cache",
            metrics.cache_hits.clone(),
        );
        registry.register(
            "webhook_deliveries",
            "Webhook attempts, by outcome (delivered, retry, failed)",
            metrics.webhook_deliveries.clone(),
        );
        registry.register(
            "token_lookups",
            "Bearer tokens looked up in the database (not answered by the token cache), by outcome (found, unknown)",
            metrics.token_lookups.clone(),
        );
        registry.register(
            "renders",
            "Render requests (GET /v1/render/…), by outcome (hit, not_modified, rendered, joined: answered by an identical render in flight, failed)",
            metrics.renders.clone(),
        );
        registry.register(
            "render_duration_seconds",
            "Time to answer a render that was not cached, fetch and wait for a slot included",
            metrics.render_seconds.clone(),
        );
        registry.register(
            "edits",
            "Edits in the database (unexpired), by status",
            metrics.edits.clone(),
        );
        registry.register(
            "queue_depth",
            "Edits queued (including retries waiting out their backoff)",
            metrics.queue_depth.clone(),
        );
        registry.register(
            "queue_oldest_age_seconds",
            "Age of the oldest queued edit (0 when none)",
            metrics.oldest_queued.clone(),
        );
        Arc::new(Metrics {
            registry,
            ..metrics
        })
    }

    pub fn request(&self, labels: RequestLabels) {
        self.requests.get_or_create(&labels).inc();
    }

    /// An edit with `commands` ended `status` after an attempt of `took`.
    pub fn edit_ended(&self, commands: &[Command], status: &str, took: Duration) {
        for command in commands {
            let command = command.name().to_string();
            self.edits_ended
                .get_or_create(&EditLabels {
                    status: status.into(),
                    command: command.clone(),
                })
                .inc();
            self.edit_seconds
                .get_or_create(&CommandLabels { command })
                .observe(took.as_secs_f64());
        }
    }

    pub fn command_ran(&self, command: Command, took: Duration) {
        let labels = CommandLabels {
            command: command.name().into(),
        };
        self.command_seconds
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
    }

    pub fn fetched(&self, bytes: u64) {
        self.bytes_fetched.inc_by(bytes);
    }

    pub fn stored(&self, bytes: u64) {
        self.bytes_stored.inc_by(bytes);
    }

    pub fn cache_hit(&self) {
        self.cache_hits.inc();
    }

    /// `outcome`: `delivered`, `retry` or `failed`.
    pub fn webhook_attempt(&self, outcome: &str) {
        let labels = OutcomeLabels {
            outcome: outcome.into(),
        };
        self.webhook_deliveries.get_or_create(&labels).inc();
    }

    /// A token was looked up in the database: `found` or not.
    pub fn token_lookup(&self, found: bool) {
        let outcome = if found { "found" } else { "unknown" };
        let labels = OutcomeLabels {
            outcome: outcome.into(),
        };
        self.token_lookups.get_or_create(&labels).inc();
    }

    /// A render request answered: `hit` and `not_modified` from the cache, `rendered`,
    /// `joined` or `failed` after `took`.
    pub fn render_answered(&self, outcome: &'static str, took: Duration) {
        let labels = OutcomeLabels {
            outcome: outcome.into(),
        };
        self.renders.get_or_create(&labels).inc();
        if !matches!(outcome, "hit" | "not_modified") {
            self.render_seconds.observe(took.as_secs_f64());
        }
    }

    /// The database's figures, read again only when the last read is older than
    /// [`CENSUS_TTL`].
    async fn census(&self, db: &Db) -> Result<Census, DbError> {
        let mut cached = self.census.lock().await;
        if let Some((at, census)) = cached.as_ref() {
            if at.elapsed() < CENSUS_TTL {
                return Ok(census.clone());
            }
        }
        let census = db.census(unix_ms(SystemTime::now())).await?;
        *cached = Some((Instant::now(), census.clone()));
        Ok(census)
    }

    /// The text a scrape gets, with the database's figures at most [`CENSUS_TTL`] old
    /// (the age of the oldest queued edit is computed now from its creation time).
    pub async fn render(&self, db: &Db) -> Result<String, DbError> {
        let now = unix_ms(SystemTime::now());
        let census = self.census(db).await?;
        for status in crate::db::EditStatus::ALL {
            let count = census
                .by_status
                .iter()
                .find(|(s, _)| s == status.as_str())
                .map_or(0, |(_, n)| *n);
            let labels = StatusLabels {
                status: status.as_str().into(),
            };
            self.edits.get_or_create(&labels).set(count);
        }
        self.queue_depth.set(census.queued);
        let age = census
            .oldest_queued
            .map_or(0.0, |at| (now - at).max(0) as f64 / 1000.0);
        self.oldest_queued.set(age);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)
            .expect("writing to a String does not fail");
        Ok(text)
    }
}

/// `GET /metrics`.
#[utoipa::path(get, path = "/metrics", operation_id = "metrics", tag = "operations", security(()),
    responses((status = 200, description = "Prometheus metrics", content_type = "application/openmetrics-text")))]
pub async fn serve(State((metrics, db)): State<(Arc<Metrics>, Db)>) -> Response {
    match metrics.render(&db).await {
        Ok(text) => (
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "reading metrics from the database failed");
            axum::http::StatusCode::SERVICE_UNAVAILABLE.into_response()
        }
    }
}

/// Middleware (a route layer, so the route is known): counts every answered request.
/// Requests no route matches are counted by the router's fallback, under [`UNMATCHED`].
pub async fn count_requests(
    State(metrics): State<Arc<Metrics>>,
    request: Request,
    next: Next,
) -> Response {
    let method = method_label(request.method());
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or(UNMATCHED, |p| p.as_str())
        .to_string();
    let response = next.run(request).await;
    let status = response.status().as_u16();
    metrics.request(RequestLabels {
        method,
        route,
        status,
    });
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_method_label_is_one_of_eight_values() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::OPTIONS), "OPTIONS");
        for made_up in ["QZ", "get", "PROPFIND", &"X".repeat(2000)] {
            let method = Method::from_bytes(made_up.as_bytes()).unwrap();
            assert_eq!(method_label(&method), "other", "{made_up}");
        }
    }
}
