//! What a render is: its source, its job and its result or failure, and the keys the
//! cache files them under.

use crate::commands::{Command, Options};
use crate::error_code::Code;
use crate::queue::JobError;
use crate::render::cache::Entry;
use crate::render::negotiate::Wanted;
use axum::http::StatusCode;
use base64::Engine;
use bytes::Bytes;
use sha2::{Digest, Sha256};
use url::Url;

/// Bumped when what a render makes of the same request changes, so old results are
/// not served for new requests. `render-2`: results keyed by organization for URLs
/// too, and entries of uploads' renders indexed by their upload.
pub(super) const RESULT_VERSION: &str = "render-2";

/// Why a render was refused or failed: an API error's status, code and sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub status: StatusCode,
    pub code: Code,
    pub detail: String,
}

impl Failure {
    pub(super) fn new(status: StatusCode, code: Code, detail: impl Into<String>) -> Failure {
        Failure {
            status,
            code,
            detail: detail.into(),
        }
    }

    pub(super) fn internal() -> Failure {
        Failure::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            Code::InternalError,
            "An internal error occurred.",
        )
    }

    pub(super) fn invalid(code: Code, detail: impl Into<String>) -> Failure {
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
    /// `exp:`: the unix second from which the URL is refused; the answer's
    /// `Cache-Control` ends by then.
    pub expires: Option<u64>,
}

/// A rendered image: its cache entry, and its bytes when they were made just now.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub entry: Entry,
    pub bytes: Option<Bytes>,
}

/// Only pipelines of in-process image commands render by URL, and none that reads
/// another file (a watermark's overlay): a render answers at once, from one source.
pub(super) fn check_renderable(commands: &[Command], options: &Options) -> Result<(), Failure> {
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
pub(super) fn parse_source(text: &str) -> Result<Source, Failure> {
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
pub(super) fn result_key(
    org: &str,
    commands: &[Command],
    options: &Options,
    source: &Source,
) -> String {
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
pub(super) fn source_key(org: &str, url: &Url) -> String {
    let text = serde_json::json!([org, url.as_str()]).to_string();
    format!(
        "render/sources/{}",
        hex::encode(Sha256::digest(text.as_bytes()))
    )
}

/// A fault of ours: logged, answered `500`.
pub(super) fn internal(e: &dyn std::fmt::Display) -> Failure {
    tracing::error!(error = %e, "a render failed");
    Failure::internal()
}
