//! The HLS ladder in chunks. The single-process recipe decodes the source once and
//! splits it into every rendition's encoder, with keyframes forced every few seconds
//! and the HLS muxer cutting segments at them. In chunks, each chunk is a run of whole
//! segments: one process per chunk decodes its exact frame range once and
//! encodes every rendition of it, with the same filter graph and encoder options, into
//! one MP4 of a video stream per rendition; the audio is encoded once beside them.
//! The join reads the chunks back through the concat demuxer (each placed at its exact
//! start, as in `super`) and hands every packet, copied, to the same HLS muxer with the
//! same options, the audio mapped into every rendition as the single-process recipe
//! maps it.
//!
//! Why the join re-segments rather than merging each chunk's own playlists: every
//! variant carries its audio in its own fMP4 segments, so segments made from video
//! alone would have to be remuxed anyway, and one muxer given the joined streams
//! writes one init section per rendition, segments whose decode times run on across
//! chunk boundaries, and the same playlists (names, `EXTINF`s, `EXT-X-MAP`, master)
//! as the single-process recipe; the copy costs a read and a write of the output.
//! Chunks start where a segment does, on a keyframe the recipe forces anyway, and the
//! muxer cuts where the single-process one does, so no keyframe or segment is added.
//!
//! A fresh x264 encode differs from the single-process one at both ends: it spends
//! fewer bits on its last frames (its lookahead runs dry) and starts with no history
//! of complexity and a full rate buffer, which at the rate cap (noise, grain) buys a
//! burst of bits. So chunks are whole segments rather than any 2 s keyframe interval
//! (a cut every 2 s made a 720p ladder 7 % smaller than the single-process one, every
//! 6 s 1 %), and each chunk but the first is encoded from one interval earlier, that
//! lead-in dropped by copy (noise running across a cut: 8 % larger without it, 2-3 %
//! with). The lead-in costs at most a third more encoding per chunk (2 s before 6 s
//! or more); docs/PERFORMANCE.md has the figures.

use std::ffi::OsString;
use std::path::Path;

use super::join::audio_input;
use super::pieces::{run_piece, ChunkProgress, Piece};
use super::plan::{self, Chunk, Plan};
use crate::media::cores;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::input::{demuxer, file_url};
use crate::media::ffmpeg::progress::ProgressFn;
use crate::media::ffmpeg::transcode::{input_args_with, quiet_args, run_ffmpeg};
use crate::media::file::MediaFile;
use crate::media::lending::run_pieces;
use crate::media::video::chunked::join::{concat_list, join_head};
use crate::media::video::chunked::pieces::ScratchDir;
use crate::media::video::info::VideoInfo;

/// The container of the chunks and of the audio between encode and join: it keeps the
/// encoders' timestamps and their B-frame delay exactly, as the HLS muxer's fMP4 does.
const PIECES: &str = "mp4";

/// A ladder encode that may be split: the same parts run in one process and in chunks.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LadderRecipe {
    /// The filter graph from the source's video to one output `[v<i>]` per rendition,
    /// without its input label (`[0:v:0]` is put before it).
    pub graph: String,
    pub renditions: usize,
    /// Every rendition's encoder options (per-stream ones with `:v:<i>`), keyframes
    /// forced by time from the start.
    pub video: Vec<String>,
    /// The audio encoder's options; empty without audio.
    pub audio: Vec<String>,
    /// The muxer and its options, fed every rendition's video in order and then, with
    /// audio, one copy of the audio per rendition.
    pub muxer: Vec<String>,
    /// Frames per segment, where the source's rate makes the keyframes `video` forces
    /// fall a whole number of frames apart: chunks are cut only between segments;
    /// `None` otherwise, and never split.
    pub segment_frames: Option<u64>,
    /// Frames encoded before each chunk but the first, then dropped: one interval
    /// between forced keyframes (so the pattern holds), through which the chunk's
    /// encoder reaches its first frame with its rate cap's buffer and its history of
    /// complexity near where the single-process encoder has them.
    pub lead_in: u64,
    /// A filter that draws subtitles on the source's frames before `graph`, its cues
    /// timed from the first frame (see `SplitRecipe::burn`).
    pub burn: Option<String>,
}

impl LadderRecipe {
    /// The single-process recipe: the ladder and its audio in one run.
    pub fn whole(&self) -> Vec<String> {
        let burn = self.burn.as_ref().map(|b| format!("{b},"));
        let mut args = self.encoders(burn.as_deref().unwrap_or(""));
        if !self.audio.is_empty() {
            for _ in 0..self.renditions {
                args.extend(["-map", "0:a:0"].map(String::from));
            }
        }
        args.extend(self.video.iter().cloned());
        args.extend(self.audio.iter().cloned());
        args.extend(self.muxer.iter().cloned());
        args
    }

    /// The filter graph (after `lead`) and the maps of its outputs.
    fn encoders(&self, lead: &str) -> Vec<String> {
        let graph = format!("[0:v:0]{lead}{}", self.graph);
        let mut args = vec!["-filter_complex".to_string(), graph];
        for i in 0..self.renditions {
            args.extend(["-map".to_string(), format!("[v{i}]")]);
        }
        args
    }

    /// The options before `-i` and the recipe after it of `chunk`'s video, its lead-in
    /// (see [`LadderRecipe::lead_in`]) first: every rendition of it, each a stream of
    /// one file.
    fn chunk(&self, chunk: &Chunk, rate: f64) -> (Vec<String>, Vec<String>) {
        let lead = self.lead(chunk);
        let read = Chunk {
            start: chunk.start - lead,
            count: chunk.count + lead,
            ..chunk.clone()
        };
        let seek = read
            .seek(rate)
            .map(|s| vec!["-ss".to_string(), format!("{s:.6}")]);
        // Restarted at zero, the chunk's keyframes are forced at the same frames as the
        // whole video's: it starts on one, and the interval is a whole number of frames.
        let lead = match &self.burn {
            // Put at their place in the whole for the cues, then restarted again.
            Some(burn) => format!(
                "setpts=PTS-STARTPTS,setpts=PTS+{:.6}/TB,{burn},setpts=PTS-STARTPTS,",
                read.start as f64 / rate
            ),
            None => "setpts=PTS-STARTPTS,".to_string(),
        };
        let mut args = self.encoders(&lead);
        if !read.last {
            args.extend(["-frames:v".to_string(), read.count.to_string()]);
        }
        args.extend(self.video.iter().cloned());
        args.extend(["-f", PIECES].map(String::from));
        (seek.unwrap_or_default(), args)
    }

    /// The frames of `chunk`'s lead-in: none for the first.
    fn lead(&self, chunk: &Chunk) -> u64 {
        self.lead_in.min(chunk.start)
    }

    /// The command line that drops the lead-in of `lead` frames at `rate` from the
    /// chunk at `from` into `to`: the chunk's own first frame is a keyframe exactly
    /// there, so an input seek with every packet copied starts on it, in every stream,
    /// its times restarted at zero.
    fn drop_lead(lead: u64, rate: f64, from: &Path, to: &Path) -> Vec<OsString> {
        let mut args = quiet_args();
        args.extend(["-ss".into(), format!("{:.6}", lead as f64 / rate).into()]);
        args.extend(["-f", PIECES, "-i"].map(OsString::from));
        args.push(file_url(from));
        args.extend(["-map", "0", "-c", "copy", "-f", PIECES].map(OsString::from));
        args.push(file_url(to));
        args
    }

    /// The recipe of the audio alone.
    fn audio_only(&self) -> Vec<String> {
        let mut args: Vec<String> = ["-map", "0:a:0", "-vn"].map(String::from).into();
        args.extend(self.audio.iter().cloned());
        args.extend(["-f", PIECES].map(String::from));
        args
    }

    /// The join's command line: the chunks listed at `list` (and the audio piece, by
    /// its input options `audio`: see `super::join::audio_input`), every packet copied
    /// into the muxer writing `output`.
    fn join(&self, list: &Path, audio: Option<Vec<OsString>>, output: &Path) -> Vec<OsString> {
        let mut args = join_head();
        args.push(file_url(list));
        let with_audio = audio.is_some();
        args.extend(audio.into_iter().flatten());
        for i in 0..self.renditions {
            args.extend(["-map".into(), format!("0:v:{i}").into()]);
        }
        if with_audio {
            for _ in 0..self.renditions {
                args.extend(["-map", "1:a:0"].map(OsString::from));
            }
        }
        args.extend(["-c", "copy", "-map_metadata", "-1"].map(OsString::from));
        args.extend(self.muxer.iter().map(OsString::from));
        args.push(file_url(output));
        args
    }
}

/// What each frame costs a chunk of the ladder: decoding a 1080p H.264 frame (6 ms)
/// against encoding it into every rung (about 40 ms).
const LADDER_COSTS: plan::FrameCosts = plan::FrameCosts {
    decode_weight: 0.15,
    frames: Vec::new(),
};

/// Encodes `input` (described by `info`) with `recipe` into `output` (the muxer's
/// output, a pattern for the HLS muxer): in chunks where that pays (`plan`) and the
/// frames add up, with a scratch directory in `work_dir`; in one process otherwise.
pub(crate) async fn encode(
    media: &Media,
    (input, info): (&MediaFile, &VideoInfo),
    recipe: &LadderRecipe,
    work_dir: &Path,
    output: &Path,
    progress: ProgressFn<'_>,
) -> Result<(), MediaError> {
    let min_work = media.config().min_chunk_work;
    // One chunk for the cores x264's threads keep busy (`--ladder-cores-per-chunk`).
    let cores = cores() / media.config().ladder_cores_per_chunk.max(1);
    let planned = recipe
        .segment_frames
        .filter(|_| input.format.seeks_to_keyframes())
        .and_then(|interval| plan::plan(info, min_work, cores, interval, &LADDER_COSTS));
    if let Some(plan) = planned {
        let ladder = Ladder {
            media,
            input,
            recipe,
            plan: &plan,
        };
        if ladder.run(work_dir, output, progress).await? {
            return Ok(());
        }
    }
    let max_seconds = media.config().max_video_seconds;
    let head = input_args_with((&input.path, demuxer(input.format)), max_seconds, &[]);
    let output = file_url(output);
    run_ffmpeg(media, head, recipe.whole(), output, info.duration, progress).await
}

/// One chunked ladder encode.
struct Ladder<'a> {
    media: &'a Media,
    input: &'a MediaFile,
    recipe: &'a LadderRecipe,
    plan: &'a Plan,
}

impl Ladder<'_> {
    /// `true` once `output` is written; `false` when the chunks' frames do not add up
    /// (then nothing is written and the caller encodes in one process).
    async fn run(
        &self,
        work_dir: &Path,
        output: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<bool, MediaError> {
        let chunks = self.plan.chunks.len();
        tracing::debug!(chunks, "encoding the ladder in chunks");
        let name = format!("ladder-{}", uuid::Uuid::new_v4().simple());
        let dir = ScratchDir(work_dir.join(name));
        tokio::fs::create_dir(&dir.0).await?;
        let with_audio = !self.recipe.audio.is_empty();
        let pieces = Piece::longest_first(self.plan.chunks.len(), with_audio);
        let chunks = ChunkProgress::new(self.plan, progress);
        let report = |index: usize, fraction: f64| chunks.report(index, fraction);
        let lender = self.media.lender();
        run_pieces(lender, pieces.len(), |i| {
            self.piece(pieces[i], &dir.0, &report)
        })
        .await?;
        let list = dir.0.join("chunks.txt");
        tokio::fs::write(&list, concat_list(self.plan, PIECES)).await?;
        let frames = self.frames(&list).await;
        if frames.len() != self.recipe.renditions || frames.iter().any(|f| *f != self.plan.frames) {
            tracing::warn!(
                expected = self.plan.frames,
                found = ?frames,
                "a chunked ladder's frames did not add up; encoding in one process"
            );
            return Ok(false);
        }
        let mut audio = None;
        if with_audio {
            let piece = piece_path(&dir.0, Piece::Audio);
            audio = Some(audio_input(self.media, &piece, PIECES).await?);
        }
        let args = self.recipe.join(&list, audio, output);
        let ffmpeg = &self.media.config().ffmpeg;
        self.media.runner().run(ffmpeg, args).await?;
        progress(1.0);
        Ok(true)
    }

    /// Encodes one piece into `dir`, reporting a chunk's progress to `report`; a chunk
    /// with a lead-in is encoded with it, then copied without it.
    async fn piece(
        &self,
        piece: Piece,
        dir: &Path,
        report: &(dyn Fn(usize, f64) + Send + Sync),
    ) -> Result<(), MediaError> {
        let run = (self.media, self.input, self.plan);
        let output = piece_path(dir, piece);
        let Piece::Video(i) = piece else {
            let recipe = (Vec::new(), self.recipe.audio_only());
            return run_piece(run, piece, recipe, &output, report).await;
        };
        let chunk = &self.plan.chunks[i];
        let recipe = self.recipe.chunk(chunk, self.plan.rate);
        let lead = self.recipe.lead(chunk);
        if lead == 0 {
            return run_piece(run, piece, recipe, &output, report).await;
        }
        let with_lead = dir.join(format!("lead-{i}.{PIECES}"));
        run_piece(run, piece, recipe, &with_lead, report).await?;
        let args = LadderRecipe::drop_lead(lead, self.plan.rate, &with_lead, &output);
        let ffmpeg = &self.media.config().ffmpeg;
        if let Err(e) = self.media.runner().run(ffmpeg, args).await {
            // A seek that found nothing to decode (an MPEG-TS with keyframes further
            // apart than the lead-in) leaves a chunk of no frames to copy: the chunk is
            // missing, the count says so, and the ladder is encoded in one process.
            tracing::debug!(error = %e, chunk = i, "a chunk's lead-in could not be dropped");
        }
        // Best effort: the scratch directory goes whole at the end.
        let _ = tokio::fs::remove_file(&with_lead).await;
        Ok(())
    }

    /// The frames of every rendition of the chunks joined by the list at `list`; none
    /// when a chunk cannot be read (see `piece`).
    async fn frames(&self, list: &Path) -> Vec<u64> {
        let mut args: Vec<OsString> = ["-v", "error", "-protocol_whitelist", "file"]
            .map(OsString::from)
            .into();
        args.extend(["-count_packets", "-select_streams", "v"].map(OsString::from));
        args.extend(["-show_entries", "stream=nb_read_packets"].map(OsString::from));
        args.extend(["-of", "csv=p=0", "-f", "concat"].map(OsString::from));
        args.push(file_url(list));
        let ffprobe = &self.media.config().ffprobe;
        let Ok(out) = self.media.runner().run(ffprobe, args).await else {
            return Vec::new();
        };
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.trim().trim_end_matches(',').parse().ok())
            .collect()
    }
}

fn piece_path(dir: &Path, piece: Piece) -> std::path::PathBuf {
    match piece {
        Piece::Video(i) => dir.join(format!("chunk-{i}.{PIECES}")),
        Piece::Audio => dir.join(format!("audio.{PIECES}")),
    }
}

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_av1;
