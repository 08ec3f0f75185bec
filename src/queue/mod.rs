//! The durable job queue and the workers that execute edits.
//!
//! The edit row is the job. A worker claims a claimable edit atomically, which moves
//! it to `processing`, bumps its `attempt` (the fencing token) and gives it a lease.
//! While working, the worker renews the lease; every write it makes is conditional on
//! `(id, attempt)` still being current, so a worker whose lease ran out and whose edit
//! was claimed again can no longer change it. An edit whose lease expired (its worker
//! crashed) is claimable again.

mod cache;
mod cancels;
mod chunk_claims;
mod chunk_farm;
mod chunk_sources;
pub(crate) mod claim_loop;
mod clock;
mod context;
mod cost;
mod dry_run;
mod error;
pub(crate) mod executor;
pub mod extra_source;
mod finished;
mod lender;
pub(crate) mod limits;
mod listen;
mod pipeline;
mod progress;
pub mod slots;
pub(crate) mod step;
mod subtitles_source;
mod sweeper;
pub mod upload_source;
mod worker;

pub use crate::db::edit_queue::{
    for_db, Bind, Claim, Fairness, JobQueue, JobRef, PgQueue, SqliteQueue,
};
pub use cancels::RunningEdits;
pub use chunk_claims::Chunks;
pub use chunk_sources::SourceCache;
pub use context::WorkerContext;
pub use dry_run::Probing;
pub use error::JobError;
pub use finished::{FinishedEdits, Waiter};
pub use listen::listen;
pub use sweeper::{run_sweeper, sweep_expired};
pub use worker::run_workers;
