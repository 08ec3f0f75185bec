//! Shares of a node's front door: each organization's requests in flight, the
//! minimum speed of request bodies, and where `/metrics` is served.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct FrontDoorConfig {
    /// Requests one organization may have in flight at once on this node (long polls
    /// and upload bodies included); past it, `429 too_many_requests` at once.
    #[arg(long, env = "MEDIAEDIT_MAX_REQUESTS_PER_ORG", default_value_t = 64, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_requests_per_org: usize,

    /// Bytes per second a request body (an upload or JSON) must keep up, averaged over
    /// each window of `--min-body-speed-window-secs`; a slower window ends the request
    /// with `408 request_too_slow`. 0 turns the rule off.
    #[arg(
        long,
        env = "MEDIAEDIT_MIN_BODY_BYTES_PER_SEC",
        default_value_t = 16384
    )]
    pub min_body_bytes_per_sec: u64,

    /// Seconds over which `--min-body-bytes-per-sec` is averaged; a body done within
    /// its first window is never judged.
    #[arg(
        long,
        env = "MEDIAEDIT_MIN_BODY_SPEED_WINDOW_SECS",
        default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub min_body_speed_window_secs: u64,

    /// Serve `/metrics` on this address instead of the API's (which then answers
    /// `404` for it), so it can be kept off the public network.
    #[arg(long, env = "MEDIAEDIT_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
}

impl FrontDoorConfig {
    pub fn min_body_speed_window(&self) -> Duration {
        Duration::from_secs(self.min_body_speed_window_secs)
    }
}
