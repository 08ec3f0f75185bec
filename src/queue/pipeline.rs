//! Executes one claimed edit in stages: each asset is fetched (network stage), run
//! through the pipeline of commands (CPU stage, fanning out where a command yields
//! several files) and stored (network stage). The assets of an edit, and the files of
//! a fan-out, run at once; each piece waits for a slot of its stage, given out fairly
//! across organizations (see `slots`), so an edit waiting on the network holds no CPU.

use std::path::Path;
use std::sync::Arc;

use tokio::sync::watch;

use crate::db::StoredOutput;
use crate::edits::EditJob;

use super::cache::CacheEntry;
use super::clock::WorkClock;
use super::context::WorkerContext;
use super::cost::WorkBudget;
use super::limits::OutputBudget;
use super::progress::{report_loop, Tracker};
use crate::db::edit_queue::Claim;
use crate::queue::error::JobError;

mod run;
use run::EditRun;

mod sourced;
use sourced::AssetOutputs;

mod store;

/// Runs the whole edit; returns the storage keys of its outputs in `downloadUrls`
/// order (by asset, then output index), and what the result cache should learn.
/// `clock` is paused while the edit only waits for slots: the job timeout counts
/// working time.
///
/// Progress and the current step are sent to a reporter that runs next to the work
/// and writes the latest report at most every `PROGRESS_EVERY`, so a slow database
/// write never holds up ffmpeg's output and a burst of reports costs one write.
pub async fn run_edit(
    ctx: &WorkerContext,
    claim: &Claim,
    edit: &EditJob,
    tmp: &Path,
    clock: &Arc<WorkClock>,
) -> Result<EditOutputs, JobError> {
    let (tx, rx) = watch::channel(None);
    let mut run = EditRun {
        ctx,
        claim,
        tracker: Tracker::new(tx, edit.assets.len(), edit.commands.len()),
        outputs: OutputBudget::new(edit, ctx.max_outputs),
        work: WorkBudget::new(ctx.max_work),
        clock,
        edit,
        options: edit.options.clone(),
    };
    let subtitles = edit.subtitles.clone().map(Arc::new);
    run.options.set_subtitles(subtitles);
    run.fetch_sources(tmp).await?;
    let run = run;
    let assets = (0..edit.assets.len()).map(|i| run.asset(i, tmp));
    tokio::select! {
        // The work decides when this ends; the reporter never ends on its own.
        biased;
        stored = futures::future::try_join_all(assets) => Ok(EditOutputs::of(stored?)),
        never = report_loop(ctx, &claim.job, rx) => match never {},
    }
}

/// A finished edit's outputs, and the result cache entries they make.
#[derive(Debug)]
pub struct EditOutputs {
    /// In `downloadUrls` order.
    pub outputs: Vec<StoredOutput>,
    /// Every asset came from the result cache.
    pub cached: bool,
    pub entries: Vec<CacheEntry>,
}

impl EditOutputs {
    fn of(assets: Vec<AssetOutputs>) -> EditOutputs {
        let cached = !assets.is_empty() && assets.iter().all(|a| a.cached);
        let entries = assets
            .iter()
            .filter_map(|a| {
                let key = a.cache_key.clone()?;
                Some(CacheEntry {
                    key,
                    outputs: a.outputs.clone(),
                })
            })
            .collect();
        EditOutputs {
            outputs: assets.into_iter().flat_map(|a| a.outputs).collect(),
            cached,
            entries,
        }
    }
}
