//! The join of a chunked encode: its pieces copied into one file, every packet kept,
//! each chunk placed by the length the plan gives it.

use std::ffi::OsString;
use std::path::Path;

use super::pieces::Piece;
use super::plan::Plan;
use super::Chunked;
use crate::media::ffmpeg::input::file_url;
use crate::media::ffmpeg::transcode;
use crate::media::{output_path, MediaError, MediaFile};

impl Chunked<'_> {
    /// Joins the chunks in `dir` (and the audio) into one file in `out_dir`, copying
    /// every packet: the concat demuxer places each chunk at the sum of the durations
    /// before it, which the list states exactly. With the file, the video frames it
    /// holds, as the join counted them writing it (its last progress report's `frame`,
    /// one a packet copied): no probe reads the file again to count them.
    pub(super) async fn join(
        &self,
        dir: &Path,
        out_dir: &Path,
    ) -> Result<(MediaFile, Option<u64>), MediaError> {
        let list = dir.join("chunks.txt");
        tokio::fs::write(&list, self.concat_list()).await?;
        let output = output_path(out_dir, self.format);
        let mut args = join_head();
        let with_audio = !self.recipe.audio.is_empty();
        if let Some(lead) = self.lead.get().copied().flatten() {
            args.splice(8..8, ["-itsoffset".into(), format!("{lead:.6}").into()]);
        }
        args.push(file_url(&list));
        if with_audio {
            args.extend(["-f", self.recipe.muxer, "-i"].map(OsString::from));
            args.push(file_url(&self.piece_path(dir, Piece::Audio)));
        }
        args.extend(["-map", "0:v:0"].map(OsString::from));
        if with_audio {
            args.extend(["-map", "1:a:0"].map(OsString::from));
        }
        args.extend(["-c", "copy", "-map_metadata", "-1"].map(OsString::from));
        args.extend(self.recipe.muxer_options.iter().map(OsString::from));
        args.extend(["-progress", "pipe:1", "-f", self.recipe.muxer].map(OsString::from));
        args.push(file_url(&output));
        let ffmpeg = &self.media.config().ffmpeg;
        let mut frames = None;
        let mut on_line = |line: &str| {
            if let Some(count) = line.strip_prefix("frame=") {
                frames = count.trim().parse::<u64>().ok();
            }
        };
        let joined = self
            .media
            .runner()
            .run_streaming(ffmpeg, args, &mut on_line);
        if let Err(e) = joined.await {
            let _ = tokio::fs::remove_file(&output).await;
            return Err(e);
        }
        let file = MediaFile {
            path: output,
            format: self.format,
        };
        Ok((file, frames))
    }

    /// How far the audio starts before zero (Opus's pre-skip), when it does. The
    /// single-process encode shifts both streams by that much so that none starts
    /// below zero; the video of the join is shifted the same, so that it keeps the
    /// same times, and the same sync, as the single-process encode.
    pub(super) async fn audio_lead(&self, dir: &Path) -> Result<Option<f64>, MediaError> {
        let mut args: Vec<OsString> = ["-v", "error", "-select_streams", "a:0"]
            .map(OsString::from)
            .into();
        args.extend(
            [
                "-show_entries",
                "packet=pts_time",
                "-read_intervals",
                "%+#1",
            ]
            .map(OsString::from),
        );
        args.extend(["-of", "csv=p=0", "-f", self.recipe.muxer].map(OsString::from));
        args.push(file_url(&self.piece_path(dir, Piece::Audio)));
        let out = self
            .media
            .runner()
            .run(&self.media.config().ffprobe, args)
            .await?;
        let first = String::from_utf8_lossy(&out.stdout);
        let first = first
            .lines()
            .next()
            .and_then(|l| l.trim().trim_end_matches(',').parse::<f64>().ok());
        Ok(first.filter(|t| *t < 0.0).map(|t| -t))
    }

    pub(super) fn concat_list(&self) -> String {
        concat_list(self.plan, self.format.extension())
    }
}

/// The concat demuxer's list of `plan`'s chunks: each by its name beside the list
/// (`chunk-<i>.<extension>`), with its exact length in the output (the last one's is
/// whatever it holds).
pub(super) fn concat_list(plan: &Plan, extension: &str) -> String {
    let mut list = String::from("ffconcat version 1.0\n");
    for chunk in &plan.chunks {
        list.push_str(&format!("file chunk-{}.{extension}\n", chunk.index));
        if !chunk.last {
            list.push_str(&format!("duration {:.9}\n", plan.seconds(chunk)));
        }
    }
    list
}

/// The head of a join's command line, up to the concat list's URL: quiet, no
/// overwriting, local files only, the list read by the concat demuxer.
pub(super) fn join_head() -> Vec<OsString> {
    let mut args = transcode::quiet_args();
    args.extend(["-f", "concat", "-i"].map(OsString::from));
    args
}
