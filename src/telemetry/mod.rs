//! The process's log subscriber: which events are written (`RUST_LOG`, default `info`)
//! and in which shape (`--log-format`).
//!
//! Spans carry who an event is about: the engine runs each edit in an `edit` span with
//! `edit_id`, `org` and `attempt`, and each HTTP request runs in a `request` span that
//! gains `org` once the token is resolved (and `edit_id` when it creates an edit). In
//! JSON, every line carries the innermost span's fields under `span` and the whole chain
//! under `spans`, so a collector can select one edit's or one organization's lines
//! without parsing messages. Tokens and signed URLs are never fields: a URL or a
//! request path is logged through [`redact`], which leaves out every credential.

mod redact;

pub use redact::{path_for_log, url_for_log, url_text_for_log, REDACTED};

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// What is logged when `RUST_LOG` is unset or unreadable: our own events at `info`,
/// sqlx's statements only when slow or failing.
const DEFAULT_FILTER: &str = "info,sqlx=warn,tower_http=info";

/// Installs the global subscriber, writing to stderr. Called once, by `main`.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| DEFAULT_FILTER.into());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        // `flatten_event` puts `message` and the event's fields at the top level, where
        // collectors look for them; the span fields stay nested so they never collide.
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(true)
            .init(),
    }
}
