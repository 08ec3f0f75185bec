//! Per-organization request budgets (docs/API.md): reads (GET, HEAD) and writes
//! (everything else) apart, so a client watching its edits never starves its own
//! POSTs, nor the other way round.

use clap::Args;

/// The two budgets, each a token bucket: a rate and a burst.
#[derive(Debug, Clone, Args)]
pub struct RateLimitConfig {
    /// Reads (GET, HEAD) per second each organization may make on this node (0 turns
    /// limiting of reads off).
    #[arg(long, env = "MEDIAEDIT_READ_RATE_LIMIT_PER_SECOND", default_value_t = 200.0, value_parser = rate)]
    pub read_rate_limit_per_second: f64,

    /// Reads an organization may make at once after a quiet period.
    #[arg(long, env = "MEDIAEDIT_READ_RATE_LIMIT_BURST", default_value_t = 400, value_parser = clap::value_parser!(u32).range(1..))]
    pub read_rate_limit_burst: u32,

    /// Writes (POST, PATCH, DELETE) per second each organization may make on this node
    /// (0 turns limiting of writes off). `--rate-limit-per-second` is its old name.
    #[arg(long, alias = "rate-limit-per-second", env = "MEDIAEDIT_WRITE_RATE_LIMIT_PER_SECOND", default_value_t = 20.0, value_parser = rate)]
    pub write_rate_limit_per_second: f64,

    /// Writes an organization may make at once after a quiet period.
    /// `--rate-limit-burst` is its old name.
    #[arg(long, alias = "rate-limit-burst", env = "MEDIAEDIT_WRITE_RATE_LIMIT_BURST", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub write_rate_limit_burst: u32,
}

impl RateLimitConfig {
    /// No limits at all (tests that make many requests).
    pub fn off(&mut self) {
        self.read_rate_limit_per_second = 0.0;
        self.write_rate_limit_per_second = 0.0;
    }
}

/// A finite number, zero or more (zero turns the limit off): NaN, infinity or a
/// negative rate would stop the service or never limit it, by accident.
fn rate(value: &str) -> Result<f64, String> {
    match value.trim().parse::<f64>() {
        Ok(n) if n.is_finite() && n >= 0.0 => Ok(n),
        _ => Err(format!("{value} is not a finite number, zero or more")),
    }
}
