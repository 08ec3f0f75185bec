//! Executes one claimed edit: fetch each asset, run it through the pipeline of
//! commands (fanning out where a command yields several files), store the outputs.

use std::path::Path;

use crate::edits::{Command, NewEdit, Options};
use crate::media::{MediaError, MediaFile};

use super::worker::WorkerContext;
use super::{Claim, JobError};

/// Runs the whole edit; returns the storage keys of its outputs in `downloadUrls`
/// order (by asset, then output index).
pub async fn run_edit(
    ctx: &WorkerContext,
    claim: &Claim,
    tmp: &Path,
) -> Result<Vec<String>, JobError> {
    let edit = NewEdit::from_stored(claim.request.clone()).map_err(|e| {
        tracing::error!(error = %e, "a stored edit no longer validates");
        JobError::internal(false)
    })?;
    if let Some((c, command)) = edit
        .commands
        .iter()
        .enumerate()
        .find(|(_, c)| !c.is_implemented())
    {
        return Err(JobError::new(
            "not_implemented",
            format!("Command {c} (`{command}`) is not implemented yet on this server."),
            false,
        ));
    }
    let steps_total = (edit.assets.len() * (edit.commands.len() + 2)) as f64;
    let mut steps_done = 0.0;
    let mut keys = Vec::new();
    for (i, asset) in edit.assets.iter().enumerate() {
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
        steps_done += 1.0;
        ctx.report_progress(&claim.job, steps_done / steps_total)
            .await;

        let mut files = vec![MediaFile {
            path: source,
            format,
        }];
        for (c, command) in edit.commands.iter().enumerate() {
            let step_dir = dir.join(format!("step-{c}"));
            tokio::fs::create_dir_all(&step_dir)
                .await
                .map_err(|_| JobError::internal(true))?;
            let mut next = Vec::new();
            for file in &files {
                let outputs = run_step(ctx, *command, file, &edit.options, &step_dir)
                    .await
                    .map_err(|e| e.at(&format!("Asset {i}, command {c} ({command})")))?;
                next.extend(outputs);
            }
            files = next;
            steps_done += 1.0;
            ctx.report_progress(&claim.job, steps_done / steps_total)
                .await;
        }

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
        steps_done += 1.0;
        ctx.report_progress(&claim.job, steps_done / steps_total)
            .await;
    }
    Ok(keys)
}

/// Applies one command to one file.
async fn run_step(
    ctx: &WorkerContext,
    command: Command,
    input: &MediaFile,
    options: &Options,
    out_dir: &Path,
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
        other => {
            return Err(JobError::new(
                "not_implemented",
                format!("The command `{other}` is not implemented yet on this server."),
                false,
            ))
        }
    };
    Ok(vec![output])
}
