//! The arguments of the administration commands (`token`, `render-key`,
//! `webhook-secret`): which
//! database, which organization.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::config::database_url::DatabaseUrl;

#[derive(Debug, Args)]
pub struct WebhookSecretArgs {
    #[command(flatten)]
    pub org: OrgArgs,
    /// Make a new secret; deliveries carry signatures by both for 24 hours.
    #[arg(long, env = "MEDIAEDIT_ROTATE")]
    pub rotate: bool,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create an organization if needed and a new API token for it; prints the token last.
    Create(OrgArgs),
    /// List an organization's tokens: the prefix of each (never the token) and when it
    /// was made.
    List(OrgArgs),
    /// Revoke a token, named by the prefix `token list` shows or whole; it is refused
    /// (401) on every node within `--auth-cache-ttl-secs`.
    Revoke(RevokeArgs),
}

#[derive(Debug, Subcommand)]
pub enum RenderKeyCommand {
    /// Create a new render key for an organization (made if needed); prints the key
    /// last. Render URLs are signed with it (docs/API.md, "Render").
    Create(OrgArgs),
    /// List an organization's render keys: the prefix of each and when it was made.
    List(OrgArgs),
    /// Revoke a render key, named by its prefix (`rk_` and 8 characters) or whole; URLs
    /// signed with it are refused (403) on every node within 5 seconds.
    Revoke(RenderKeyRevokeArgs),
}

#[derive(Debug, Args)]
pub struct RenderKeyRevokeArgs {
    #[command(flatten)]
    pub org: OrgArgs,
    /// The key's prefix as `render-key list` shows it, or the whole key.
    pub key: String,
}

#[derive(Debug, Args)]
pub struct RevokeArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// The token's prefix as `token list` shows it (`me_` and 8 characters), or the
    /// whole token.
    pub token_prefix: String,
}

/// Which database.
#[derive(Debug, Args)]
pub struct DbArgs {
    /// Directory holding the SQLite database.
    #[arg(long, env = "MEDIAEDIT_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    /// Database to use instead of the SQLite file in the data dir (see `serve`).
    #[arg(long, env = "MEDIAEDIT_DATABASE_URL")]
    pub database_url: Option<DatabaseUrl>,
}

/// Which database, and which organization in it.
#[derive(Debug, Args)]
pub struct OrgArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Organization id (letters, digits, `-` and `_`, at most 64).
    #[arg(long, env = "MEDIAEDIT_ORG")]
    pub org: String,
}
