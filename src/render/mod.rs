//! Images by URL (docs/API.md, "Render"): `GET /v1/render/{signature}/{transform}/{source}`
//! answers the transformed image at once, the way pages ask for pictures.
//!
//! - [`keys`]: whose render key signed the URL (the organization).
//! - [`transform`]: the short transform syntax, made into `resize-image`'s options (or
//!   a preset's pipeline), validated as an edit's.
//! - [`negotiate`]: `f:auto`'s format from `Accept`, and the formats `f:best` picks from.
//! - [`cache`]: results and fetched sources in the shared storage, least recently used
//!   evicted past `--render-cache-bytes`.
//! - [`flights`]: identical requests arriving together computed once, and stopped
//!   when every request waiting for them has gone.
//! - [`work`]: fetching the source and running the commands, in the node's fair
//!   network and CPU slots, the same the edits' workers take turns in.
//!
//! The pixels are the commands' own (`commands::Command::run`): a render is an edit's
//! pipeline run on one source, synchronously.

pub mod cache;
pub mod flights;
pub mod keys;
pub mod negotiate;
pub mod transform;
mod work;

use std::path::PathBuf;
use std::sync::Arc;

use axum::http::StatusCode;
use base64::Engine;
use bytes::Bytes;
use sha2::{Digest, Sha256};
use url::Url;

use crate::commands::{Command, Options};
use crate::db::Db;
use crate::error_code::Code;
use crate::fetch::Fetcher;
use crate::media::Media;
use crate::metrics::Metrics;
use crate::queue::slots::FairSlots;
use crate::queue::JobError;
use cache::{Entry, RenderCache};
use flights::Flights;
use keys::KeyRing;
use negotiate::Wanted;
use transform::Transform;

/// Bumped when what a render makes of the same request changes, so old results are
/// not served for new requests. `render-2`: results keyed by organization for URLs
/// too, and entries of uploads' renders indexed by their upload.
const RESULT_VERSION: &str = "render-2";

/// Why a render was refused or failed: an API error's status, code and sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub status: StatusCode,
    pub code: Code,
    pub detail: String,
}

impl Failure {
    fn new(status: StatusCode, code: Code, detail: impl Into<String>) -> Failure {
        Failure {
            status,
            code,
            detail: detail.into(),
        }
    }

    fn internal() -> Failure {
        Failure::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            Code::InternalError,
            "An internal error occurred.",
        )
    }

    fn invalid(code: Code, detail: impl Into<String>) -> Failure {
        Failure::new(StatusCode::UNPROCESSABLE_ENTITY, code, detail)
    }
}

/// A failure of the source or of the commands, answered as a dry run answers it: `422`
/// with the edit's code; short of disk, `507`; a fault of ours, `500` (logged here).
impl From<JobError> for Failure {
    fn from(e: JobError) -> Failure {
        match e.code {
            Code::InternalError => {
                tracing::error!(detail = %e.detail, "a render failed");
                Failure::internal()
            }
            Code::StorageError => Failure::new(
                StatusCode::INSUFFICIENT_STORAGE,
                Code::InsufficientStorage,
                "The server is short of disk space to render now; try again later.",
            ),
            code => Failure::invalid(code, e.detail),
        }
    }
}

/// Where a render's source comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    Url(Url),
    /// An upload of the signing organization.
    Upload(String),
}

/// A checked render request: whose it is, what it runs on what, and where its result
/// is (or will be) cached.
#[derive(Debug, Clone)]
pub struct Job {
    pub org: String,
    pub commands: Vec<Command>,
    pub options: Options,
    pub source: Source,
    /// The format class `f:auto` picked, if the transform says `f:auto`.
    pub wanted: Option<Wanted>,
    /// The result's object key without its extension (`render/results/<hash>`).
    pub result_key: String,
}

/// A rendered image: its cache entry, and its bytes when they were made just now.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub entry: Entry,
    pub bytes: Option<Bytes>,
}

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
    results: Flights<Result<Rendered, Failure>>,
    sources: Flights<Result<Entry, Failure>>,
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

/// Only pipelines of in-process image commands render by URL, and none that reads
/// another file (a watermark's overlay): a render answers at once, from one source.
fn check_renderable(commands: &[Command], options: &Options) -> Result<(), Failure> {
    if let Some(command) = commands.iter().find(|c| !c.renders()) {
        let renders: Vec<&str> = Command::ALL
            .into_iter()
            .filter(|c| c.renders())
            .map(Command::name)
            .collect();
        return Err(Failure::invalid(
            Code::InvalidTransform,
            format!(
                "`{command}` does not render by URL; a render runs image commands only ({}).",
                renders.join(", ")
            ),
        ));
    }
    let specs = commands.iter().flat_map(|c| c.options().iter().copied());
    if let Some((name, _, _)) = options.sources(specs).first() {
        return Err(Failure::invalid(
            Code::InvalidTransform,
            format!("The option `{name}` names another file; a render reads its one source only."),
        ));
    }
    Ok(())
}

/// `upload:{id}`, or the base64url (padded or not) of an absolute http(s) URL.
fn parse_source(text: &str) -> Result<Source, Failure> {
    if let Some(id) = text.strip_prefix("upload:") {
        if !crate::uploads::valid_id(id) {
            return Err(Failure::invalid(
                Code::UploadNotFound,
                format!("\"{id}\" is not an upload id."),
            ));
        }
        return Ok(Source::Upload(id.to_string()));
    }
    let bad = || {
        Failure::invalid(
            Code::InvalidUrl,
            "The source must be `upload:{id}` or the base64url of an absolute http or https URL.",
        )
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text.trim_end_matches('='))
        .map_err(|_| bad())?;
    let text = String::from_utf8(bytes).map_err(|_| bad())?;
    if text.len() > crate::edits::MAX_URL_LEN {
        return Err(bad());
    }
    let url = Url::parse(&text).map_err(|_| bad())?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(bad());
    }
    Ok(Source::Url(url))
}

/// `render/results/<hash>`: the hash of everything the result depends on, the
/// organization included, for URLs too: nothing cached crosses organizations, so one
/// organization's render never answers another's request for a URL whose file may be
/// gone, or another, by now (docs/SECURITY.md).
fn result_key(org: &str, commands: &[Command], options: &Options, source: &Source) -> String {
    let names: Vec<&str> = commands.iter().map(|c| c.name()).collect();
    let specs = commands.iter().flat_map(|c| c.options().iter().copied());
    let source = match source {
        Source::Url(url) => format!("url {url}"),
        Source::Upload(id) => format!("upload {id}"),
    };
    let text =
        serde_json::json!([RESULT_VERSION, org, names, options.key(specs), source]).to_string();
    format!(
        "render/results/{}",
        hex::encode(Sha256::digest(text.as_bytes()))
    )
}

/// `render/sources/<hash of the organization and the URL>`: a fetched source is cached
/// for the organization that fetched it only; another fetches it for itself, from the
/// origin, which may have removed or changed it since.
fn source_key(org: &str, url: &Url) -> String {
    let text = serde_json::json!([org, url.as_str()]).to_string();
    format!(
        "render/sources/{}",
        hex::encode(Sha256::digest(text.as_bytes()))
    )
}

/// A fault of ours: logged, answered `500`.
fn internal(e: &dyn std::fmt::Display) -> Failure {
    tracing::error!(error = %e, "a render failed");
    Failure::internal()
}

#[cfg(test)]
mod tests;
