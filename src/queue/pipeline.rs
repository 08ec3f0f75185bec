//! Executes one claimed edit: fetch each asset, run it through the pipeline of
//! commands (fanning out where a command yields several files), store the outputs.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::watch;

use crate::edits::{budget, Command, NewEdit, Options};
use crate::media::{MediaError, MediaFile, ProgressFn};

use super::worker::WorkerContext;
use super::{Claim, JobError, JobRef};

/// How often progress is written to the database at most: ffmpeg reports twice a
/// second per process, and a fan-out can start hundreds of steps.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// Where an edit is: the overall fraction done and the step it is on.
#[derive(Debug, Clone, PartialEq)]
struct Report {
    progress: f64,
    step: Value,
}

/// Runs the whole edit; returns the storage keys of its outputs in `downloadUrls`
/// order (by asset, then output index).
///
/// Progress and the current step are sent to a reporter that runs next to the work
/// and writes the latest report at most every [`PROGRESS_EVERY`], so a slow database
/// write never holds up ffmpeg's output and a burst of reports costs one write.
pub async fn run_edit(
    ctx: &WorkerContext,
    claim: &Claim,
    tmp: &Path,
) -> Result<Vec<String>, JobError> {
    let (tx, rx) = watch::channel(None);
    tokio::select! {
        // The work decides when this ends; the reporter never ends on its own.
        biased;
        result = run_assets(ctx, claim, tmp, &tx) => result,
        never = report_loop(ctx, &claim.job, rx) => match never {},
    }
}

/// Writes the latest report whenever there is a new one, then waits [`PROGRESS_EVERY`].
async fn report_loop(
    ctx: &WorkerContext,
    job: &JobRef,
    mut rx: watch::Receiver<Option<Report>>,
) -> std::convert::Infallible {
    loop {
        if rx.changed().await.is_err() {
            // The work has finished and dropped its sender; wait to be dropped too.
            std::future::pending::<()>().await;
        }
        let report = rx.borrow_and_update().clone();
        if let Some(report) = report {
            ctx.report_progress(job, report.progress, Some(&report.step))
                .await;
        }
        tokio::time::sleep(PROGRESS_EVERY).await;
    }
}

/// Counts work in units, each asset being fetch + one unit per command + store, and
/// sends reports to the reporter.
struct Tracker<'a> {
    tx: &'a watch::Sender<Option<Report>>,
    total: f64,
    done: f64,
}

impl Tracker<'_> {
    /// Reports `fraction` (0.0–1.0) of the current unit done, on `step`.
    fn report(&self, fraction: f64, step: &Value) {
        let progress = ((self.done + fraction.clamp(0.0, 1.0)) / self.total).clamp(0.0, 1.0);
        self.tx.send_modify(|report| {
            // Never backwards, even if a unit reports out of order.
            let progress = report
                .as_ref()
                .map_or(progress, |r| r.progress.max(progress));
            *report = Some(Report {
                progress,
                step: step.clone(),
            });
        });
    }

    /// Marks the current unit done.
    fn finish_unit(&mut self, step: &Value) {
        self.report(1.0, step);
        self.done += 1.0;
    }
}

async fn run_assets(
    ctx: &WorkerContext,
    claim: &Claim,
    tmp: &Path,
    tx: &watch::Sender<Option<Report>>,
) -> Result<Vec<String>, JobError> {
    let edit = NewEdit::from_stored(claim.request.clone()).map_err(|e| {
        tracing::error!(error = %e, "a stored edit no longer validates");
        JobError::internal(false)
    })?;
    let mut tracker = Tracker {
        tx,
        total: (edit.assets.len() * (edit.commands.len() + 2)) as f64,
        done: 0.0,
    };
    let mut keys = Vec::new();
    let budget = OutputBudget::new(&edit, ctx.max_outputs);
    for (i, asset) in edit.assets.iter().enumerate() {
        let step = json!({ "asset": i, "name": "fetch" });
        tracker.report(0.0, &step);
        ensure_free_disk(tmp, ctx.min_free_disk_bytes)?;
        let dir = tmp.join(format!("asset-{i}"));
        tokio::fs::create_dir_all(&dir).await.map_err(|e| {
            tracing::error!(error = %e, "creating a job directory failed");
            JobError::internal(true)
        })?;
        let source = dir.join("source");
        ctx.fetcher
            .fetch_to_file(&asset.src, &source)
            .await
            .map_err(|e| JobError::from(e).at(&format!("Asset {i}")))?;
        let format = ctx
            .media
            .detect(&source)
            .await
            .map_err(|e| JobError::from(e).at(&format!("Asset {i}")))?;
        tracker.finish_unit(&step);

        let mut files = vec![MediaFile {
            path: source,
            format,
        }];
        for (c, command) in edit.commands.iter().enumerate() {
            budget
                .check(keys.len(), files.len(), c, i)
                .map_err(|e| e.at(&format!("Asset {i}, command {c} ({command})")))?;
            let step = json!({ "asset": i, "command": c, "name": command.name() });
            tracker.report(0.0, &step);
            let step_dir = dir.join(format!("step-{c}"));
            tokio::fs::create_dir_all(&step_dir)
                .await
                .map_err(|_| JobError::internal(true))?;
            let mut next = Vec::new();
            let count = files.len() as f64;
            for (k, file) in files.iter().enumerate() {
                // This file's share of the command's unit.
                let progress = |fraction: f64| tracker.report((k as f64 + fraction) / count, &step);
                let outputs = run_step(ctx, *command, file, &edit.options, &step_dir, &progress)
                    .await
                    .map_err(|e| e.at(&format!("Asset {i}, command {c} ({command})")))?;
                next.extend(outputs);
            }
            files = next;
            tracker.finish_unit(&step);
        }

        let step = json!({ "asset": i, "name": "store" });
        tracker.report(0.0, &step);
        for (n, file) in files.iter().enumerate() {
            let key = format!(
                "edits/{}/{}/{i}-{n}.{}",
                claim.job.id,
                claim.job.attempt,
                file.format.extension()
            );
            ctx.storage.put_file(&key, &file.path).await?;
            keys.push(key);
        }
        // This asset's files are stored: free the disk now, not when the edit ends,
        // so an edit of twenty large videos needs room for one at a time.
        if let Err(e) = tokio::fs::remove_dir_all(&dir).await {
            tracing::warn!(error = %e, "removing an asset's temp files failed");
        }
        tracker.finish_unit(&step);
    }
    Ok(keys)
}

/// A retryable `storage_error` when the temp directory's disk has less than `min_free`
/// bytes free: a fetch that would fill the disk would fail later with a misleading
/// media error, and other edits with it.
fn ensure_free_disk(tmp: &Path, min_free: u64) -> Result<(), JobError> {
    if min_free == 0 {
        return Ok(());
    }
    match free_disk_bytes(tmp) {
        Some(free) if free < min_free => {
            tracing::warn!(free, min_free, "too little free disk to fetch a source");
            Err(JobError::new(
                "storage_error",
                "The server is short of disk space for this edit; it will be retried.",
                true,
            ))
        }
        _ => Ok(()),
    }
}

/// Bytes free for unprivileged users on the file system holding `path`.
// The statvfs fields are u64 here and narrower on other platforms.
#[allow(clippy::useless_conversion)]
fn free_disk_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid NUL-terminated path and a statvfs struct to fill.
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    Some(u64::from(stat.f_bavail).saturating_mul(u64::from(stat.f_frsize)))
}

/// The output limit, checked before each step against the fewest files the edit can
/// still end with: those stored, those in hand times what the rest of the pipeline
/// makes of each at least, and the assets still to come.
struct OutputBudget {
    /// Files one input becomes at least after each command (see `edits::budget`).
    per_input: Vec<u64>,
    assets: usize,
    limit: u64,
}

impl OutputBudget {
    fn new(edit: &NewEdit, limit: u64) -> Self {
        OutputBudget {
            per_input: budget::min_files_per_input(&edit.commands, &edit.options),
            assets: edit.assets.len(),
            limit,
        }
    }

    /// `too_many_outputs` when running command `c` of asset `asset` on `in_hand` files,
    /// with `stored` already stored, must end past the limit.
    fn check(&self, stored: usize, in_hand: usize, c: usize, asset: usize) -> Result<(), JobError> {
        let last = *self.per_input.last().unwrap_or(&1);
        // The pipeline's bound is a product of factors, so the rest of it from command
        // `c` on is the ratio of the bound after the last command and before `c`.
        let before = if c == 0 {
            1
        } else {
            self.per_input[c - 1].max(1)
        };
        let rest = last / before;
        let later_assets = (self.assets - asset - 1) as u64;
        let files = (stored as u64)
            .saturating_add((in_hand as u64).saturating_mul(rest))
            .saturating_add(later_assets.saturating_mul(last));
        if files <= self.limit {
            return Ok(());
        }
        Err(JobError::new(
            "too_many_outputs",
            format!(
                "This edit would produce at least {files} files, more than the limit of {} \
                 per edit; it was stopped before the step that would pass it.",
                self.limit
            ),
            false,
        ))
    }
}

/// Applies one command to one file; `extract-frames` gives one file per frame, every
/// other command one file.
async fn run_step(
    ctx: &WorkerContext,
    command: Command,
    input: &MediaFile,
    options: &Options,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<Vec<MediaFile>, JobError> {
    if !command.accepts(input.format) {
        return Err(MediaError::UnsupportedInputFormat {
            found: input.format.name().to_string(),
        }
        .into());
    }
    let media = &ctx.media;
    let output = match command {
        Command::ResizeImage => {
            media
                .resize_image(input, options.scale, options.format, out_dir)
                .await?
        }
        Command::ImageToWebp => media.image_to_webp(input, out_dir).await?,
        Command::ImageToVideo => {
            media
                .image_to_video(input, options.fps, options.duration, out_dir)
                .await?
        }
        Command::GifToVideo => media.gif_to_video(input, out_dir, progress).await?,
        Command::ModifyVideoSpeed => {
            media
                .modify_video_speed(input, options.speed, out_dir, progress)
                .await?
        }
        Command::VideoToGif => media.video_to_gif(input, out_dir, progress).await?,
        Command::VideoToOgg => media.video_to_ogg(input, out_dir, progress).await?,
        Command::VideoToWebm => media.video_to_webm(input, out_dir, progress).await?,
        Command::ExtractFrames => {
            return Ok(media.extract_frames(input, out_dir, progress).await?)
        }
    };
    Ok(vec![output])
}
