//! Every setting of the program, in one place. Only `main` reads the process
//! environment (through clap's `env`); everything else receives these structs.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::BoolishValueParser;
use clap::{Args, Parser, Subcommand};
use url::Url;

mod admin;
mod chunking;
mod client;
mod database_url;
mod faces;
mod front_door;
mod logging;
mod memory;
mod processes;
mod rate_limits;
mod retention;
mod role;
pub use admin::{
    DbArgs, OrgArgs, RenderKeyCommand, RenderKeyRevokeArgs, RevokeArgs, TokenCommand,
    WebhookSecretArgs,
};
pub use chunking::ChunkingConfig;
pub use client::{ClientArgs, CreateArgs, EditCommand, PresetCommand};
pub use database_url::DatabaseUrl;
pub use faces::FaceConfig;
pub use front_door::FrontDoorConfig;
pub use logging::LogFormat;
pub use memory::MemoryConfig;
pub use processes::ProcessConfig;
pub use rate_limits::RateLimitConfig;
pub use retention::RetentionConfig;
pub use role::Role;

/// mediaedit: converts and modifies images and videos referenced by URL.
#[derive(Debug, Parser)]
#[command(name = "mediaedit", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// Log lines as `text` (for a terminal) or `json` (one object per line, for a log
    /// collector); accepted before or after the subcommand.
    #[arg(long, env = "MEDIAEDIT_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text, global = true)]
    pub log_format: LogFormat,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start the HTTP service and its workers.
    Serve(Box<ServeConfig>),
    /// Manage API tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// Manage the keys an organization signs render URLs (`/v1/render/…`) with.
    RenderKey {
        #[command(subcommand)]
        command: RenderKeyCommand,
    },
    /// Print an organization's webhook signing secret (`whsec_…`), made on first use;
    /// `--rotate` replaces it, and the old one keeps signing for 24 hours.
    WebhookSecret(WebhookSecretArgs),
    /// Work with edits on a running service: create (uploading local files), get,
    /// list, cancel.
    Edit {
        #[command(subcommand)]
        command: EditCommand,
    },
    /// Work with presets on a running service: put, get, list, delete.
    Preset {
        #[command(subcommand)]
        command: PresetCommand,
    },
}

/// Settings of `mediaedit serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeConfig {
    /// Address to listen on.
    #[arg(long, env = "MEDIAEDIT_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Directory for the SQLite database, stored files, temp files and the signing key.
    #[arg(long, env = "MEDIAEDIT_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,

    /// `sqlite://PATH` or `postgres://USER:PASSWORD@HOST:PORT/DB` (default:
    /// sqlite://<data-dir>/mediaedit.db). Nodes sharing one PostgreSQL form a cluster.
    #[arg(long, env = "MEDIAEDIT_DATABASE_URL")]
    pub database_url: Option<DatabaseUrl>,

    /// Connections this node keeps to the database at most (PostgreSQL: one of them
    /// listens for new edits).
    #[arg(long, env = "MEDIAEDIT_DATABASE_MAX_CONNECTIONS", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub database_max_connections: u32,

    /// `file://DIR` or `s3://BUCKET[/PREFIX]` (default: file://<data-dir>/files). S3
    /// reads AWS_ENDPOINT, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
    /// AWS_ALLOW_HTTP from the environment.
    #[arg(long, env = "MEDIAEDIT_STORAGE_URL")]
    pub storage_url: Option<String>,

    /// What this node runs: `all` (HTTP API and workers), `api` (HTTP API only) or
    /// `worker` (workers, and HTTP for `/healthz` only).
    #[arg(long, env = "MEDIAEDIT_ROLE", value_enum, default_value_t = Role::All)]
    pub role: Role,

    /// Base of every URL the service hands out (default: http://<listen address>).
    #[arg(long, env = "MEDIAEDIT_PUBLIC_URL")]
    pub public_url: Option<Url>,

    /// Accept sources on loopback, private, link-local and other non-public addresses.
    #[arg(
        long,
        env = "MEDIAEDIT_ALLOW_PRIVATE_SOURCES",
        value_parser = BoolishValueParser::new(),
        num_args = 0..=1,
        default_value = "false",
        default_missing_value = "true"
    )]
    pub allow_private_sources: bool,

    /// CPU slots of this node: commands (an ffmpeg run, an image step) that run at once.
    /// Default: the number of CPUs, at least 2. Edits waiting on the network hold none.
    #[arg(long, env = "MEDIAEDIT_WORKERS", default_value_t = default_workers(), value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub workers: usize,

    /// Fetches (and, apart, stores) this node runs at once; one organization holds at
    /// most half of them.
    #[arg(long, env = "MEDIAEDIT_FETCH_CONCURRENCY", default_value_t = 32, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub fetch_concurrency: usize,

    /// Largest accepted request body, in bytes.
    #[arg(long, env = "MEDIAEDIT_MAX_BODY_BYTES", default_value_t = 1024 * 1024, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_body_bytes: usize,

    /// Reuse the outputs of an earlier done edit of the same organization whose
    /// sources (by content), commands and options were the same, instead of running
    /// it again (`cached: true` on the Edit). `--result-cache false` turns it off.
    #[arg(long, env = "MEDIAEDIT_RESULT_CACHE", default_value_t = true, action = clap::ArgAction::Set)]
    pub result_cache: bool,

    /// Bytes the render cache (`GET /v1/render/…`: rendered images and the sources
    /// fetched for them, in the storage every node shares) holds at most; past it, the
    /// least recently used entries are deleted.
    #[arg(long, env = "MEDIAEDIT_RENDER_CACHE_BYTES", default_value_t = 1 << 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub render_cache_bytes: u64,

    #[command(flatten)]
    pub rate_limits: RateLimitConfig,

    #[command(flatten)]
    pub front_door: FrontDoorConfig,

    /// Seconds a token lookup (found or not) is remembered, so repeated tokens cost no
    /// database query; also how long a revoked token may keep working on a node.
    /// 0 turns the cache off.
    #[arg(long, env = "MEDIAEDIT_AUTH_CACHE_TTL_SECS", default_value_t = 5)]
    pub auth_cache_ttl_secs: u64,

    /// Token lookups remembered at most, found and not found counted apart (so a flood
    /// of unknown tokens never pushes a valid one out).
    #[arg(
        long,
        env = "MEDIAEDIT_AUTH_CACHE_MAX_ENTRIES",
        default_value_t = 10_000
    )]
    pub auth_cache_max_entries: usize,

    /// Requests with an unknown token one client address (an IPv6 /64) may make per
    /// minute, in bursts of as many; beyond it, `429 too_many_auth_failures` before any
    /// lookup. 0 turns the limit off.
    #[arg(long, env = "MEDIAEDIT_AUTH_FAILURES_PER_MINUTE", default_value_t = 60)]
    pub auth_failures_per_minute: u32,

    /// Largest accepted source file, in bytes.
    #[arg(long, env = "MEDIAEDIT_MAX_SOURCE_BYTES", default_value_t = 512 * 1024 * 1024)]
    pub max_source_bytes: u64,

    /// Seconds allowed to connect to a source.
    #[arg(long, env = "MEDIAEDIT_FETCH_CONNECT_TIMEOUT_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub fetch_connect_timeout_secs: u64,

    /// Seconds allowed for a whole source download.
    #[arg(long, env = "MEDIAEDIT_FETCH_TIMEOUT_SECS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
    pub fetch_timeout_secs: u64,

    /// Seconds a source may take from the request to the first byte of its body (each
    /// redirect hop anew); past it the fetch fails with `source_timeout`.
    #[arg(
        long,
        env = "MEDIAEDIT_FETCH_FIRST_BYTE_TIMEOUT_SECS",
        default_value_t = 15,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub fetch_first_byte_timeout_secs: u64,

    /// Bytes per second a source download must keep up, averaged over each window of
    /// `--fetch-min-speed-window-secs` after the first byte; a slower window ends the
    /// fetch with `source_timeout`. 0 turns the rule off.
    #[arg(
        long,
        env = "MEDIAEDIT_FETCH_MIN_BYTES_PER_SEC",
        default_value_t = 16384
    )]
    pub fetch_min_bytes_per_sec: u64,

    /// Seconds over which `--fetch-min-bytes-per-sec` is averaged; a download that
    /// completes within its first window is never judged.
    #[arg(
        long,
        env = "MEDIAEDIT_FETCH_MIN_SPEED_WINDOW_SECS",
        default_value_t = 10,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub fetch_min_speed_window_secs: u64,

    /// Largest image accepted or produced, in pixels (width × height).
    #[arg(
        long,
        env = "MEDIAEDIT_MAX_IMAGE_PIXELS",
        default_value_t = 100_000_000
    )]
    pub max_image_pixels: u64,

    /// Longest video (or animated GIF) source accepted, in seconds.
    #[arg(long, env = "MEDIAEDIT_MAX_VIDEO_SECONDS", default_value_t = 600)]
    pub max_video_seconds: u64,

    /// Largest video (or animated GIF) frame accepted, in pixels (width × height;
    /// the default is 7680×4320).
    #[arg(
        long,
        env = "MEDIAEDIT_MAX_VIDEO_PIXELS",
        default_value_t = 7680 * 4320
    )]
    pub max_video_pixels: u64,

    /// Most frames a video (or animated GIF) source may have.
    #[arg(long, env = "MEDIAEDIT_MAX_VIDEO_FRAMES", default_value_t = 100_000)]
    pub max_video_frames: u64,

    /// Most frames `extract-frames` writes for one video; a longer video fails with
    /// `too_many_frames`.
    #[arg(long, env = "MEDIAEDIT_MAX_EXTRACT_FRAMES", default_value_t = 1000)]
    pub max_extract_frames: u64,

    /// A fetch does not start when the temp directory's disk has less free space than
    /// this; the edit is retried later (`storage_error`). 0 turns the check off.
    #[arg(long, env = "MEDIAEDIT_MIN_FREE_DISK_BYTES", default_value_t = 64 << 20)]
    pub min_free_disk_bytes: u64,

    #[command(flatten)]
    pub processes: ProcessConfig,

    /// CPU slots one organization holds at once on this node while another
    /// organization's work waits, for light and for heavy work each; default half of
    /// `--workers`, at least 1. Alone on a node an organization uses every slot; one
    /// that starts waiting gets the next slot freed.
    #[arg(long, env = "MEDIAEDIT_MAX_RUNNING_PER_ORG", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_running_per_org: Option<u32>,

    /// Most work one edit may do, in decoded pixels × frames summed over its steps
    /// (a 10 s 1080p clip is 0.5 G); an edit that would do more fails with
    /// `too_much_work` before the step that would pass it.
    #[arg(long, env = "MEDIAEDIT_MAX_WORK_PER_EDIT", default_value_t = 200_000_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_work_per_edit: u64,

    #[command(flatten)]
    pub chunking: ChunkingConfig,

    #[command(flatten)]
    pub memory: MemoryConfig,
    #[command(flatten)]
    pub faces: FaceConfig,

    /// Most pixels an animated image (GIF, APNG, animated WebP) may have summed over
    /// its frames (canvas × frames, read from its headers before any frame is
    /// decoded): a 30 s 1080p animation at 50 fps is 3.1·10⁹. Past it, every command
    /// given the file fails with `too_much_work`.
    #[arg(long, env = "MEDIAEDIT_MAX_ANIMATION_PIXELS", default_value_t = 4_000_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_animation_pixels: u64,

    /// Most files one edit may produce: refused at creation (422) when the options
    /// already prove more, and failed with `too_many_outputs` before the step that
    /// would pass it otherwise (a fan-out of fan-outs).
    #[arg(long, env = "MEDIAEDIT_MAX_OUTPUTS_PER_EDIT", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_outputs_per_edit: u64,

    /// Seconds one attempt at an edit may take before it fails with `job_timeout`.
    #[arg(long, env = "MEDIAEDIT_JOB_TIMEOUT_SECS", default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..))]
    pub job_timeout_secs: u64,

    /// Seconds a connection has to send a request's headers once it is ready for one;
    /// also how long an idle keep-alive connection stays open.
    #[arg(long, env = "MEDIAEDIT_HTTP_HEADER_TIMEOUT_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub http_header_timeout_secs: u64,

    /// Seconds a request body may pause before the request is abandoned.
    #[arg(long, env = "MEDIAEDIT_HTTP_BODY_TIMEOUT_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub http_body_timeout_secs: u64,

    /// Connections served at once; more wait in the listen backlog.
    #[arg(long, env = "MEDIAEDIT_MAX_CONNECTIONS", default_value_t = 1024, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_connections: usize,

    /// Seconds a stopping node lets running edits finish before handing them back,
    /// counted from the signal; open connections get as long to finish their request.
    #[arg(long, env = "MEDIAEDIT_SHUTDOWN_GRACE_SECS", default_value_t = 30)]
    pub shutdown_grace_secs: u64,

    /// Seconds a worker's claim on an edit lasts without a heartbeat.
    #[arg(long, env = "MEDIAEDIT_LEASE_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub lease_secs: u64,

    /// Attempts an edit gets when it keeps hitting retryable failures.
    #[arg(long, env = "MEDIAEDIT_MAX_ATTEMPTS", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_attempts: u32,

    /// Delay before the first retry, in milliseconds; doubled on each further retry.
    #[arg(long, env = "MEDIAEDIT_RETRY_BASE_MS", default_value_t = 2000)]
    pub retry_base_ms: u64,

    /// Webhook deliveries of one organization in flight at once on this node: a
    /// receiver that never answers holds this many of the node's 16, and the other
    /// organizations' events go out past its backlog.
    #[arg(long, env = "MEDIAEDIT_WEBHOOK_CONCURRENCY_PER_ORG", default_value_t = 4, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub webhook_concurrency_per_org: usize,

    /// Seconds a download URL stays valid.
    #[arg(long, env = "MEDIAEDIT_DOWNLOAD_URL_TTL_SECS", default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..))]
    pub download_url_ttl_secs: u64,

    /// Milliseconds between queue polls when no wake-up arrives.
    #[arg(long, env = "MEDIAEDIT_POLL_MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub poll_ms: u64,

    #[command(flatten)]
    pub retention: RetentionConfig,
}

impl ServeConfig {
    /// The configuration `serve` would use with no flags and no environment, rooted at `data_dir`.
    pub fn with_data_dir(data_dir: PathBuf) -> Self {
        let Command::Serve(mut serve) = Cli::parse_from(["mediaedit", "serve"]).command else {
            unreachable!("parsed `serve`")
        };
        serve.data_dir = data_dir;
        *serve
    }

    /// Edits this node holds at once: one per CPU slot and one per fetch, so that
    /// every slot has an edit ready when it frees.
    pub fn claim_capacity(&self) -> usize {
        self.workers + self.fetch_concurrency
    }

    /// `--max-running-per-org`, or its default: half of the workers, at least one.
    pub fn max_running_per_org(&self) -> u32 {
        self.max_running_per_org
            .unwrap_or_else(|| (self.workers / 2).max(1) as u32)
    }

    pub fn lease(&self) -> Duration {
        Duration::from_secs(self.lease_secs)
    }

    pub fn database_path(&self) -> PathBuf {
        self.data_dir.join("mediaedit.db")
    }

    /// `--database-url`, or the SQLite file in the data dir.
    pub fn database_url(&self) -> String {
        DatabaseUrl::or_default(&self.database_url, &self.data_dir)
    }

    /// `--storage-url`, or `files/` in the data dir.
    pub fn storage_url(&self) -> String {
        match &self.storage_url {
            Some(url) => url.clone(),
            None => format!("file://{}", self.data_dir.join("files").display()),
        }
    }
}

/// The default number of CPU slots: the CPUs this process may use, and at least two,
/// so that one organization's heavy work never holds a node's only slot.
fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().max(2))
}

#[cfg(test)]
mod tests;
