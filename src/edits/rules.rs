//! The bounds of a create-edit request and the server's settings its checks depend
//! on: a leaf, read by every part of the request's parsing.

/// Most assets one edit may carry.
pub const MAX_ASSETS: usize = 20;
/// Most commands one pipeline may carry.
pub const MAX_COMMANDS: usize = 10;
/// Longest accepted source URL, in bytes.
pub const MAX_URL_LEN: usize = 4096;

/// How a request is checked; the server's settings that validation depends on.
#[derive(Debug, Clone, Default)]
pub struct ValidationRules {
    pub allow_private_sources: bool,
    /// Most files one edit may produce (`--max-outputs-per-edit`); `None` checks nothing.
    pub max_outputs: Option<u64>,
    /// `<public url>/v1/uploads/`: a `src` under it names an upload of this service,
    /// read from storage, so the rules for fetched addresses do not apply to it.
    pub uploads_prefix: Option<std::sync::Arc<str>>,
}
