//! One edit's run: its steps in order, each on the outputs of the one before, with
//! the edit's progress, limits and sources.

use crate::commands::Options;
use crate::db::edit_queue::Claim;
use crate::db::{SourceValidators, StoredOutput};
use crate::edits::EditJob;
use crate::fetch::{Fetch, FetchError};
use crate::media::image::placeholders::kept::Kept;
use crate::media::MediaFile;
use crate::queue::cache::ResultCache;
use crate::queue::chunk_farm::step_farm;
use crate::queue::clock::{Turn, WorkClock};
use crate::queue::context::WorkerContext;
use crate::queue::cost::{self, WorkBudget};
use crate::queue::error::JobError;
use crate::queue::executor::{execute, StepAt, StepHost};
use crate::queue::extra_source::fetch_option_sources;
use crate::queue::lender::SlotLender;
use crate::queue::limits::{ensure_free_disk, OutputBudget};
use crate::queue::pipeline::sourced::{AssetOutputs, Sourced};
use crate::queue::progress::Tracker;
use crate::queue::slots::{Class, FairSlots, SlotPermit};
use crate::queue::step::Step;
use crate::queue::upload_source::read_upload;
use crate::uploads::upload_id_in;
use futures::{StreamExt, TryStreamExt};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

/// One run of one edit: what its assets share.
pub(super) struct EditRun<'a> {
    pub(super) ctx: &'a WorkerContext,
    pub(super) claim: &'a Claim,
    pub(super) edit: &'a EditJob,
    pub(super) tracker: Tracker,
    pub(super) outputs: OutputBudget,
    pub(super) work: WorkBudget,
    pub(super) clock: &'a Arc<WorkClock>,
    /// The edit's options with the files of its `Source` options once fetched.
    pub(super) options: Options,
}

impl EditRun<'_> {
    /// The network stage of the files the options name (`watermark`'s `overlay`):
    /// each fetched once for every asset, by an asset's rules, into `tmp`.
    pub(super) async fn fetch_sources(&mut self, tmp: &Path) -> Result<(), JobError> {
        let specs = self
            .edit
            .commands
            .iter()
            .flat_map(|c| c.options().iter().copied());
        let sources = self.options.sources(specs);
        if sources.is_empty() {
            return Ok(());
        }
        let _slot = self.slot(&self.ctx.network, Class::Light, true).await?;
        let access = self.ctx.source_access();
        let org = &self.claim.org_id;
        fetch_option_sources(&access, org, &mut self.options, sources, tmp).await
    }

    /// Fetches asset `i`, runs it through the pipeline and stores what comes out.
    pub(super) async fn asset(&self, i: usize, tmp: &Path) -> Result<AssetOutputs, JobError> {
        let place = format!("Asset {i}");
        let dir = tmp.join(format!("asset-{i}"));
        tokio::fs::create_dir_all(&dir).await.map_err(|e| {
            tracing::error!(error = %e, "creating a job directory failed");
            JobError::internal(true)
        })?;
        let (source, cache_key) = match self.fetch(i, &dir).await.map_err(|e| e.at(&place))? {
            Sourced::Reused(outputs) => {
                self.outputs.stored(i, outputs.len());
                let _ = tokio::fs::remove_dir_all(&dir).await;
                return Ok(AssetOutputs {
                    outputs,
                    cached: true,
                    cache_key: None,
                });
            }
            Sourced::File(file, key) => (file, key),
        };
        // The last step's outputs are stored: their placeholders come from their pixels.
        let kept = Kept::default();
        let steps = AssetSteps {
            run: self,
            i,
            kept: &kept,
        };
        // An HDR source says so on its asset in the edit (read before the steps take it).
        let source_hdr = self.ctx.media.hdr_of(&source).await;
        let files = execute(&steps, &self.edit.commands, source, &dir).await?;
        let outputs = self.store(i, &files, &kept, source_hdr).await?;
        // This asset's files are stored: free the disk now, not when the edit ends,
        // so an edit of twenty large videos needs room for one at a time.
        if let Err(e) = tokio::fs::remove_dir_all(&dir).await {
            tracing::warn!(error = %e, "removing an asset's temp files failed");
        }
        Ok(AssetOutputs {
            outputs,
            cached: false,
            cache_key,
        })
    }

    /// The network stage of asset `i`: its source, downloaded and sniffed, or the
    /// outputs an earlier edit left for it in the result cache. A node that is
    /// stopping hands the edit back rather than wait for a slow source.
    pub(super) async fn fetch(&self, i: usize, dir: &Path) -> Result<Sourced, JobError> {
        let step = json!({ "asset": i, "name": "fetch" });
        self.tracker.report(i, 0.0, &step);
        let _slot = self.slot(&self.ctx.network, Class::Light, true).await?;
        ensure_free_disk(dir, self.ctx.min_free_disk_bytes)?;
        let source = dir.join("source");
        let url = &self.edit.assets[i].src;
        let cache = ResultCache::of(self.ctx, &self.claim.org_id);
        let known = match &cache {
            Some(cache) => cache.validators(url.as_str()).await,
            None => None,
        };
        let job = &self.claim.job;
        // The options with their files fetched: the key holds those by their bytes.
        let keyed = (self.edit, &self.options);
        let mut fetched = self.download(i, &source, known.as_ref()).await?;
        if let (Fetch::NotModified, Some(cache), Some(known)) = (&fetched, &cache, &known) {
            if let Ok(keys) = cache.answer(keyed, i, &known.sha256, job).await {
                return Ok(self.reused(i, keys));
            }
            // The outputs are gone: the body is needed after all.
            fetched = self.download(i, &source, None).await?;
        }
        let Fetch::Body(fetched) = fetched else {
            return Err(FetchError::HttpStatus(304).into());
        };
        self.ctx.metrics.fetched(fetched.bytes);
        let mut cache_key = None;
        if let Some(cache) = &cache {
            let validators = &fetched.validators;
            cache.remember_validators(url.as_str(), validators).await;
            match cache.answer(keyed, i, &validators.sha256, job).await {
                Ok(keys) => return Ok(self.reused(i, keys)),
                Err(key) => cache_key = Some(key),
            }
        }
        let takes = self.edit.commands[0].inputs();
        let format = self.ctx.media.detect_for(&source, takes).await?;
        self.tracker.finish_unit(i, &step);
        let file = MediaFile {
            path: source,
            format,
        };
        Ok(Sourced::File(file, cache_key))
    }

    /// Asset `i`'s source into `dest`, conditionally when `known`; an upload of this
    /// service is read from storage instead.
    pub(super) async fn download(
        &self,
        i: usize,
        dest: &Path,
        known: Option<&SourceValidators>,
    ) -> Result<Fetch, JobError> {
        let url = &self.edit.assets[i].src;
        if let Some(id) = upload_id_in(url.as_str(), &self.ctx.uploads_prefix) {
            let store = (
                &self.ctx.db,
                &self.ctx.storage,
                self.ctx.fetcher.max_bytes(),
            );
            return read_upload(store, &self.claim.org_id, &id, dest).await;
        }
        tokio::select! {
            fetched = self.ctx.fetcher.fetch_to_file_if(url, dest, known) => Ok(fetched?),
            _ = self.ctx.stopping.cancelled() => Err(JobError::handed_back()),
        }
    }

    /// Asset `i` answered by the result cache with `keys`: all its units are done.
    pub(super) fn reused(&self, i: usize, outputs: Vec<StoredOutput>) -> Sourced {
        self.ctx.metrics.cache_hit();
        let step = json!({ "asset": i, "name": "store" });
        for _ in 0..self.edit.commands.len() + 2 {
            self.tracker.finish_unit(i, &step);
        }
        Sourced::Reused(outputs)
    }

    /// The CPU stage of command `c` for asset `i`: every file in hand, at once as far
    /// as slots allow, each after its cost is measured and charged to the budget.
    pub(super) async fn command(
        &self,
        i: usize,
        c: usize,
        command: Step,
        files: &[MediaFile],
        step_dir: &Path,
    ) -> Result<Vec<MediaFile>, JobError> {
        self.outputs.check(i, files.len(), c)?;
        let step = json!({ "asset": i, "command": c, "name": command.first().name() });
        self.tracker.report(i, 0.0, &step);
        let count = files.len();
        // The edit's subtitles as this step's input shows them (retimed by the steps
        // before), and whether it draws them.
        let options = self
            .options
            .for_step(&self.edit.commands, c, command.commands());
        let steps: Vec<_> = files
            .iter()
            .enumerate()
            .map(|(k, file)| {
                self.file_step(i, (k, count), (command, &options), file, step_dir, &step)
            })
            .collect();
        let outputs: Vec<Vec<MediaFile>> = futures::stream::iter(steps)
            .buffered(self.ctx.parallel_steps)
            .try_collect()
            .await?;
        let outputs: Vec<MediaFile> = outputs.into_iter().flatten().collect();
        self.tracker.finish_unit(i, &step);
        if let Step::Fused(fused) = command {
            // The second command's unit, and its check on what it made.
            let step = json!({ "asset": i, "command": c + 1, "name": fused.then.name() });
            self.tracker.finish_unit(i, &step);
            self.outputs.check(i, outputs.len(), c + 1)?;
        }
        Ok(outputs)
    }

    /// Command `command` on `file`, the `k`th of `count` (for progress), once its cost
    /// is measured and charged to the budget and a CPU slot of its class is free.
    pub(super) async fn file_step(
        &self,
        i: usize,
        (k, count): (usize, usize),
        (command, options): (Step, &Options),
        file: &MediaFile,
        step_dir: &Path,
        step: &serde_json::Value,
    ) -> Result<Vec<MediaFile>, JobError> {
        let work = self.ctx.media.measure_work(file).await;
        let work = work.map(|w| command.cost(w, options));
        self.work.charge(work.unwrap_or(0))?;
        let class = cost::class_of(work, file.format);
        let _slot = self.slot(&self.ctx.cpu, class, true).await?;
        // This file's share of the command's unit.
        let progress = |fraction: f64| {
            let done = (k as f64 + fraction) / count as f64;
            self.tracker.report(i, done, step)
        };
        // A command that works on several cores borrows further slots of this class;
        // with chunks across nodes, its chunks go through the queue instead.
        let lender = Arc::new(SlotLender {
            slots: self.ctx.cpu.clone(),
            org: self.claim.org_id.to_string(),
            class,
        });
        let tag = format!("{}-{}-{k}", step["asset"], step["command"]);
        let farm = step_farm(self.ctx, self.claim, tag);
        let media = self.ctx.media.lending(lender, farm);
        let started = std::time::Instant::now();
        let outputs = command
            .run(&media, file, options, step_dir, &progress)
            .await;
        self.ctx
            .metrics
            .command_ran(command.first(), started.elapsed());
        Ok(outputs?)
    }

    /// A slot of `slots` for this edit's organization, and the edit's turn on its work
    /// clock while it holds it; when `abandon_on_stop`, a node
    /// that starts stopping while the edit waits hands it back instead.
    pub(super) async fn slot(
        &self,
        slots: &Arc<FairSlots>,
        class: Class,
        abandon_on_stop: bool,
    ) -> Result<(SlotPermit, Turn), JobError> {
        let turn = self.clock.wait();
        let acquire = slots.acquire(&self.claim.org_id, class);
        let permit = if abandon_on_stop {
            tokio::select! {
                permit = acquire => permit,
                _ = self.ctx.stopping.cancelled() => return Err(JobError::handed_back()),
            }
        } else {
            acquire.await
        };
        Ok((permit, turn.granted()))
    }
}

/// Asset `i`'s steps, as its edit runs them: see [`EditRun::command`].
struct AssetSteps<'r, 'a> {
    run: &'r EditRun<'a>,
    i: usize,
    kept: &'r Kept,
}

impl StepHost for AssetSteps<'_, '_> {
    async fn run_step(
        &self,
        at: StepAt,
        files: &[MediaFile],
        dir: &Path,
    ) -> Result<Vec<MediaFile>, JobError> {
        let command = self.run.command(self.i, at.c, at.step, files, dir);
        let ran = self.kept.around_if(at.last, command).await;
        ran.map_err(|e| {
            let place = at.step.place(self.i, at.c, e.code);
            e.at(&place)
        })
    }
}
