//! What a node of `serve` runs.

use clap::ValueEnum;

/// What a node of `serve` runs, so API and worker nodes can be scaled apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Role {
    /// The HTTP API and the workers.
    All,
    /// The HTTP API only: edits are queued for worker nodes.
    Api,
    /// Workers only; HTTP answers `/healthz` and nothing else.
    Worker,
}
