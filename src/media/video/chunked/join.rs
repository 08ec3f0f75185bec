//! The join of a chunked encode: its pieces copied into one file, every packet kept,
//! each chunk placed by the length the plan gives it.

use std::ffi::OsString;
use std::path::Path;

use super::pieces::Piece;
use super::plan::Plan;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::input::file_url;
use crate::media::ffmpeg::transcode;
use crate::media::file::{output_path, MediaFile};
use crate::media::video::chunked::encode::Chunked;

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
        args.push(file_url(&list));
        if with_audio {
            let audio = self.piece_path(dir, Piece::Audio);
            args.extend(audio_input(self.media, &audio, self.recipe.audio_muxer()).await?);
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

/// The join's input options of the audio piece at `path` (of `muxer`), put back where
/// it starts. A join moves each input's packets so that the input starts at zero, the
/// audio piece's too, while the single-process encode keeps audio that starts late (a
/// source whose sound begins after its picture, or a part cut before it) where it is;
/// the piece's `start_time` as ffmpeg reads it is what the move takes away, so an
/// `-itsoffset` of as much gives it back. Audio that starts before zero (Opus's
/// pre-skip) is shifted with the video by the muxer, as in that encode.
pub(super) async fn audio_input(
    media: &Media,
    path: &Path,
    muxer: &'static str,
) -> Result<Vec<OsString>, MediaError> {
    let mut args: Vec<OsString> = ["-v", "error", "-show_entries", "format=start_time"]
        .map(OsString::from)
        .into();
    args.extend(["-of", "csv=p=0", "-f", muxer].map(OsString::from));
    args.push(file_url(path));
    let out = media.runner().run(&media.config().ffprobe, args).await?;
    let start = String::from_utf8_lossy(&out.stdout);
    let start = start
        .lines()
        .next()
        .and_then(|l| l.trim().trim_end_matches(',').parse::<f64>().ok());
    Ok(audio_input_at(path, start, muxer))
}

/// [`audio_input`] of a piece known to start at `start`.
pub(super) fn audio_input_at(path: &Path, start: Option<f64>, muxer: &str) -> Vec<OsString> {
    let mut args = Vec::new();
    if let Some(start) = start.filter(|s| s.abs() > 1e-6) {
        args.extend(["-itsoffset".into(), format!("{start:.6}").into()]);
    }
    args.extend(["-f", muxer, "-i"].map(OsString::from));
    args.push(file_url(path));
    args
}
