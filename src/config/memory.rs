//! The memory of in-process steps and the time of renders (docs/API.md's limits table):
//! what one step may take, what the steps running at once share, and how long a
//! render may run.

use clap::Args;

/// Bounds on what in-process work may take of a node.
#[derive(Debug, Clone, Args)]
pub struct MemoryConfig {
    /// Most memory one in-process step (decoding, compositing, `text`, smart crop, an
    /// animation's frames) may take, estimated from its headers and options before it
    /// allocates; a step that would take more fails with `too_much_work`.
    #[arg(long, env = "MEDIAEDIT_MAX_STEP_MEMORY_BYTES", default_value_t = 512 << 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_step_memory_bytes: u64,

    /// Memory the in-process steps running at once on this node share; a step waits
    /// for room rather than pass it. 0: half of the machine's memory (or of its
    /// control group's limit, when that is smaller).
    #[arg(long, env = "MEDIAEDIT_MEMORY_BUDGET_BYTES", default_value_t = 0)]
    pub memory_budget_bytes: u64,

    /// Seconds a render (`GET /v1/render/…`) may take, its source's fetch included;
    /// past it, `504 render_timeout`.
    #[arg(long, env = "MEDIAEDIT_RENDER_TIMEOUT_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub render_timeout_secs: u64,
}

impl MemoryConfig {
    /// The node's budget in bytes, `0` read as half the machine.
    pub fn budget(&self) -> u64 {
        match self.memory_budget_bytes {
            0 => crate::media::memory::half_the_machine(),
            bytes => bytes,
        }
    }
}
