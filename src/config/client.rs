//! The arguments of `mediaedit edit …` and `mediaedit preset …`: the CLI as a client
//! of a running service (docs/API.md).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use url::Url;

/// Where the service is and who is asking.
#[derive(Debug, Clone, Args)]
pub struct ClientArgs {
    /// The service's base URL, e.g. `http://127.0.0.1:8080`.
    #[arg(long, env = "MEDIAEDIT_URL")]
    pub url: Url,
    /// A bearer token of the organization (`mediaedit token create`).
    #[arg(long, env = "MEDIAEDIT_TOKEN", hide_env_values = true)]
    pub token: String,
    /// Print the API's JSON documents instead of lines for people.
    #[arg(long, env = "MEDIAEDIT_JSON")]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum EditCommand {
    /// Create an edit (a local file is uploaded first); with `--wait`, follow it to the
    /// end and download its outputs. Exit status 0 only when the edit is done.
    Create(CreateArgs),
    /// Show one edit.
    Get {
        #[command(flatten)]
        client: ClientArgs,
        /// The edit's id.
        id: String,
    },
    /// List the organization's edits, newest first.
    List {
        #[command(flatten)]
        client: ClientArgs,
        /// Only edits in this status (queued, processing, done, failed, canceled).
        #[arg(long, env = "MEDIAEDIT_STATUS")]
        status: Option<String>,
        /// How many at most (1–100).
        #[arg(long, env = "MEDIAEDIT_LIMIT", default_value_t = 20)]
        limit: u32,
    },
    /// Cancel a queued or processing edit.
    Cancel {
        #[command(flatten)]
        client: ClientArgs,
        /// The edit's id.
        id: String,
    },
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// A source: an http(s) URL, or a local file (uploaded first). Repeat for more.
    #[arg(
        long = "src",
        env = "MEDIAEDIT_SRC",
        required = true,
        value_delimiter = ','
    )]
    pub sources: Vec<String>,
    /// A command of the pipeline, in order. Repeat for more. Or `--preset`.
    #[arg(
        long = "command",
        env = "MEDIAEDIT_COMMAND",
        required_unless_present = "preset",
        conflicts_with = "preset",
        value_delimiter = ','
    )]
    pub commands: Vec<String>,
    /// Run the organization's preset of this name (`mediaedit preset put`) instead of
    /// `--command`s; `--option`s override its options.
    #[arg(long, env = "MEDIAEDIT_PRESET")]
    pub preset: Option<String>,
    /// An option, `name=value` (`scale=0.5`, `format=webp`). Repeat for more.
    #[arg(long = "option", env = "MEDIAEDIT_OPTION", value_delimiter = ',')]
    pub options: Vec<String>,
    /// Follow the edit to its end (a progress bar on a terminal) and download its
    /// outputs into `--output`.
    #[arg(long, env = "MEDIAEDIT_WAIT")]
    pub wait: bool,
    /// Where `--wait` writes the outputs.
    #[arg(long, env = "MEDIAEDIT_OUTPUT", default_value = ".")]
    pub output: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum PresetCommand {
    /// Store (or replace) a preset: a pipeline and its options under a name.
    Put {
        #[command(flatten)]
        client: ClientArgs,
        /// The preset's name: 1–64 of a-z, 0-9 and -.
        name: String,
        /// A command of the pipeline, in order. Repeat for more.
        #[arg(
            long = "command",
            env = "MEDIAEDIT_COMMAND",
            required = true,
            value_delimiter = ','
        )]
        commands: Vec<String>,
        /// An option, `name=value` (`scale=0.5`, `format=webp`). Repeat for more.
        #[arg(long = "option", env = "MEDIAEDIT_OPTION", value_delimiter = ',')]
        options: Vec<String>,
    },
    /// Show one preset.
    Get {
        #[command(flatten)]
        client: ClientArgs,
        /// The preset's name.
        name: String,
    },
    /// List the organization's presets, by name.
    List {
        #[command(flatten)]
        client: ClientArgs,
    },
    /// Delete a preset; edits made from it keep what they ran.
    Delete {
        #[command(flatten)]
        client: ClientArgs,
        /// The preset's name.
        name: String,
    },
}
