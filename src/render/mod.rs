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

mod job;
pub use job::Failure;
pub use job::Job;
pub use job::Rendered;
pub use job::Source;

mod renderer;
pub use renderer::unix_now;
pub use renderer::Renderer;
pub use renderer::RendererParts;

#[cfg(test)]
mod tests;
