//! How long things are kept, and how large an upload may be: edits and their
//! outputs, uploads (docs/API.md).

use clap::Args;

/// Settings of retention and the sweep that enforces it.
#[derive(Debug, Clone, Args)]
pub struct RetentionConfig {
    /// Seconds an edit and its outputs are kept when its request names no `retention`
    /// (default 7 days); then the sweep deletes them.
    #[arg(long, env = "MEDIAEDIT_RETENTION_SECS", default_value_t = 7 * 24 * 3600, value_parser = clap::value_parser!(u64).range(60..=31_536_000))]
    pub retention_secs: u64,

    /// Seconds an upload is kept (complete or not) before the sweep deletes it.
    #[arg(long, env = "MEDIAEDIT_UPLOAD_RETENTION_SECS", default_value_t = 24 * 3600, value_parser = clap::value_parser!(u64).range(60..))]
    pub upload_retention_secs: u64,

    /// Largest upload accepted, in bytes (`413 upload_too_large` past it, as soon as
    /// the size is known).
    #[arg(long, env = "MEDIAEDIT_MAX_UPLOAD_BYTES", default_value_t = 2 << 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_upload_bytes: u64,

    /// Bytes of uploads one organization holds at most, unexpired ones counted (an
    /// unfinished tus upload by its `Upload-Length`); past it, `413
    /// upload_quota_exceeded` until some expire or are deleted.
    #[arg(long, env = "MEDIAEDIT_MAX_UPLOAD_BYTES_PER_ORG", default_value_t = 20 << 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_upload_bytes_per_org: u64,

    /// Unfinished uploads one organization holds at most; one more is `429
    /// too_many_open_uploads` until one completes, expires or is deleted.
    #[arg(long, env = "MEDIAEDIT_MAX_OPEN_UPLOADS_PER_ORG", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_open_uploads_per_org: u64,

    /// Seconds between two sweeps for expired edits and uploads.
    #[arg(long, env = "MEDIAEDIT_SWEEP_INTERVAL_SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub sweep_interval_secs: u64,
}
