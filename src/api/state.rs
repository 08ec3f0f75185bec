//! What every handler shares, and the limits of uploads.

use crate::api::body_rate::BodyRate;
use crate::api::health::Readiness;
use crate::api::in_flight::InFlight;
use crate::api::rate_limit::{RateLimiter, RateLimits};
use crate::api::token_cache::TokenCache;
use crate::api::uploads::in_flight::InFlightUploads;
use crate::db::Db;
use crate::edits::ValidationRules;
use crate::metrics::Metrics;
use crate::queue::{FinishedEdits, RunningEdits};
use crate::storage::Storage;
use std::sync::Arc;
use tokio::sync::Notify;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub db: Db,
    pub storage: Storage,
    /// Notified on every new edit, to wake a worker of this process at once.
    pub wake: Arc<Notify>,
    pub rules: ValidationRules,
    pub max_body_bytes: usize,
    /// Each organization's read and write budgets.
    pub rate_limits: Arc<RateLimits>,
    /// Recent token lookups, so repeated tokens cost no database query.
    pub token_cache: Arc<TokenCache>,
    /// Failed authentications, keyed by client address.
    pub auth_failures: Arc<RateLimiter>,
    /// Each organization's requests in flight (`--max-requests-per-org`).
    pub in_flight: Arc<InFlight>,
    /// The minimum speed of request bodies.
    pub body_rate: BodyRate,
    /// The edits this node runs, so a cancel stops one at once.
    pub running: Arc<RunningEdits>,
    /// Told when an edit ends; long polls wait on it.
    pub finished: Arc<FinishedEdits>,
    pub metrics: Arc<Metrics>,
    /// Seconds an edit is kept when its request names no `retention`.
    pub default_retention_secs: u64,
    pub uploads: UploadLimits,
    /// The upload bodies this node is streaming, so a DELETE stops them.
    pub uploads_in_flight: Arc<InFlightUploads>,
    /// The base of every URL handed out (an upload's `src`).
    pub public_url: url::Url,
    pub readiness: Readiness,
    /// What a dry run fetches and probes with.
    pub probing: crate::queue::Probing,
    /// Renders images by URL (`/v1/render/…`).
    pub renderer: Arc<crate::render::Renderer>,
}

/// The limits of uploads (`--max-upload-bytes`, `--upload-retention-secs`, the
/// per-organization quotas and `--min-free-disk-bytes`).
#[derive(Debug, Clone, Copy)]
pub struct UploadLimits {
    pub max_bytes: u64,
    pub retention_secs: u64,
    pub max_bytes_per_org: u64,
    pub max_open_per_org: u64,
    /// No upload byte is accepted while a disk holding them has less free.
    pub min_free_disk_bytes: u64,
}

impl UploadLimits {
    pub fn quota(&self) -> crate::db::UploadQuota {
        crate::db::UploadQuota {
            max_bytes: self.max_bytes_per_org,
            max_open: self.max_open_per_org,
        }
    }
}
