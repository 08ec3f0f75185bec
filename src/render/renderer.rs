//! The renderer: a render URL checked, answered from the cache or run once however
//! many ask for it at the same time.

use crate::db::Db;
use crate::error_code::Code;
use crate::fetch::Fetcher;
use crate::media::Media;
use crate::metrics::Metrics;
use crate::queue::slots::FairSlots;
use crate::render::cache::{Entry, RenderCache};
use crate::render::flights::Flights;
use crate::render::job::check_renderable;
use crate::render::job::internal;
use crate::render::job::parse_source;
use crate::render::job::result_key;
use crate::render::job::Failure;
use crate::render::job::Job;
use crate::render::job::Rendered;
use crate::render::job::Source;
use crate::render::keys::KeyRing;
use crate::render::negotiate;
use crate::render::transform::Transform;
use axum::http::StatusCode;
use std::path::PathBuf;
use std::sync::Arc;

/// What a node renders with; one per node.
pub struct Renderer {
    pub db: Db,
    pub fetcher: Fetcher,
    pub media: Media,
    pub cache: RenderCache,
    pub keys: KeyRing,
    /// The node's CPU slots, shared with its edit workers.
    pub cpu: Arc<FairSlots>,
    /// The node's network slots, shared with its edit workers and dry runs.
    pub network: Arc<FairSlots>,
    pub metrics: Arc<Metrics>,
    pub tmp_root: PathBuf,
    pub min_free_disk_bytes: u64,
    /// How long one render may take (`--render-timeout-secs`).
    pub timeout: std::time::Duration,
    pub(super) results: Flights<Result<Rendered, Failure>>,
    pub(super) sources: Flights<Result<Entry, Failure>>,
}

/// The pieces a [`Renderer`] is made of.
pub struct RendererParts {
    pub db: Db,
    pub storage: crate::storage::Storage,
    pub fetcher: Fetcher,
    pub media: Media,
    pub cpu: Arc<FairSlots>,
    pub network: Arc<FairSlots>,
    pub metrics: Arc<Metrics>,
    pub tmp_root: PathBuf,
    pub min_free_disk_bytes: u64,
    pub cache_bytes: u64,
    pub timeout: std::time::Duration,
}

impl Renderer {
    pub fn new(parts: RendererParts) -> Arc<Renderer> {
        Arc::new(Renderer {
            cache: RenderCache::new(parts.db.clone(), parts.storage, parts.cache_bytes),
            keys: KeyRing::new(parts.db.clone()),
            db: parts.db,
            fetcher: parts.fetcher,
            media: parts.media,
            cpu: parts.cpu,
            network: parts.network,
            metrics: parts.metrics,
            tmp_root: parts.tmp_root,
            min_free_disk_bytes: parts.min_free_disk_bytes,
            timeout: parts.timeout,
            results: Flights::new(),
            sources: Flights::new(),
        })
    }

    /// Checks a request: the signature (`403 invalid_signature` unless one of an
    /// organization's render keys made it), then the transform (`422` with the codes
    /// of an edit's options, `unknown_preset`, `invalid_transform`) and the source
    /// (`422 invalid_url`). `accept` is the request's `Accept`, for `f:auto`.
    pub async fn prepare(
        &self,
        signature: &str,
        transform_text: &str,
        source_text: &str,
        accept: Option<&str>,
    ) -> Result<Job, Failure> {
        let message = format!("{transform_text}/{source_text}");
        let org = self
            .keys
            .organization(signature, &message)
            .await
            .map_err(|e| internal(&e))?
            .ok_or_else(|| {
                Failure::new(
                    StatusCode::FORBIDDEN,
                    Code::InvalidSignature,
                    "The render URL's signature is not that of a render key of any organization.",
                )
            })?;
        let transform =
            Transform::parse(transform_text).map_err(|e| Failure::invalid(e.code(), e.0))?;
        // Before any lookup: an expired URL is refused whatever the cache holds.
        if let Some(expires) = transform.expires {
            if unix_now() >= expires {
                return Err(Failure::new(
                    StatusCode::GONE,
                    Code::RenderExpired,
                    "The render URL's `exp` has passed; ask the page that gave it for a new one.",
                ));
            }
        }
        let preset = match &transform.preset {
            None => None,
            Some(name) => Some(
                self.db
                    .get_preset(&org, name)
                    .await
                    .map_err(|e| internal(&e))?
                    .ok_or_else(|| {
                        Failure::invalid(
                            Code::UnknownPreset,
                            format!("Your organization has no preset \"{name}\"."),
                        )
                    })?
                    .body,
            ),
        };
        let (commands, mut options) =
            crate::edits::preset::pipeline_of(&transform.body(preset.as_ref()))
                .map_err(|e| Failure::invalid(e.code, e.detail))?;
        check_renderable(&commands, &options)?;
        let source = parse_source(source_text)?;
        let wanted = transform.auto_format.then(|| negotiate::wanted(accept));
        if let Some(wanted) = wanted {
            // Legacy browsers get JPEG, or PNG for transparency: decided once the
            // picture is rendered (`work`), from PNG.
            options.set("format", wanted.format_option().into());
        }
        if transform.best_format {
            // Keyed with the formats, so each class of client has its own result.
            options.set("format", negotiate::best_of(accept).into());
        }
        let result_key = result_key(&org, &commands, &options, &source);
        Ok(Job {
            org,
            commands,
            options,
            source,
            wanted,
            result_key,
            expires: transform.expires,
        })
    }

    /// The cached result of `job`, if there is one.
    pub async fn cached(&self, job: &Job) -> Result<Option<Entry>, Failure> {
        self.cache
            .lookup(&job.result_key)
            .await
            .map_err(|e| internal(&e))
    }

    /// Whether `entry`, the cached result of `job`, still stands where the answer does
    /// not read it (`304`): always for a URL's; for an upload's, while its object is
    /// stored, since deleting the upload deletes it on whichever node, and this node's
    /// memory of the entry does not know.
    pub async fn still_cached(&self, job: &Job, entry: &Entry) -> Result<bool, Failure> {
        match job.source {
            Source::Url(_) => Ok(true),
            Source::Upload(_) => self.cache.stored(entry).await.map_err(|e| internal(&e)),
        }
    }

    /// Renders `job`, or joins the identical render already running.
    pub async fn render(self: &Arc<Self>, job: Job) -> Result<Rendered, Failure> {
        let started = std::time::Instant::now();
        let key = job.result_key.clone();
        let this = self.clone();
        let (rendered, joined) = self
            .results
            .run(&key, async move { this.run(job).await }, || {
                Err(Failure::internal())
            })
            .await;
        let outcome = match (&rendered, joined) {
            (Err(_), _) => "failed",
            (Ok(_), true) => "joined",
            (Ok(_), false) => "rendered",
        };
        self.metrics.render_answered(outcome, started.elapsed());
        rendered
    }
}

/// Seconds since the unix epoch, now.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
