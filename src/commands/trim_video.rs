//! `trim-video`: the part of a video from `start` to `end` (or `start + duration`) as
//! an H.264 + AAC MP4, frame-accurate: its first frame is the one a player shows at
//! `start` (found from the packets there, `media::shown_frame`), and the audio is cut
//! at the same instant.
//!
//! When that frame is a keyframe of an H.264 `yuv420p` stream in MP4, MOV or 3GP, shown
//! as stored with even sides, the packets are copied from it; otherwise re-encoded. The audio
//! is always encoded again (AAC 128 kb/s), so it starts and ends on the video's cut
//! to the sample rather than on a whole AAC frame.
//!
//! A long enough re-encode of a constant-rate source is chunked like other x264
//! re-encodes (`chunked::x264`), planned over the part's frames; else, or when the
//! joined frames do not add up, the single-process recipe runs.

use std::path::Path;

use super::options::Options;
use super::registry::Command;
use super::subtitled::{burn_retimed, BURN_SUBTITLES};
use super::time_options::{DURATION, END, START};
use super::video_to_audio::{loudness_target, LOUDNESS};
use crate::commands::formats::VIDEOS;
use crate::commands::spec::{CommandDef, CommandSpec, OptionProblem, Prediction, Shape};
use crate::error_code::Code;
use crate::media::ffmpeg::transcode::{self, map_args, Recipe, AAC, EVEN_SIZE, X264};
use crate::media::video::chunked::{self, part, Part, SplitRecipe};
use crate::media::video::hdr::{sdr_tags, shown_pictures};
use crate::media::video::info::VideoInfo;
use crate::media::video::loudness::add_to_audio;
use crate::media::video::shown_frame::{frame_shown_at, ShownFrame};
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn};

const INPUTS: &[MediaFormat] = VIDEOS;
const OUTPUT: MediaFormat = MediaFormat::Mp4;

/// Seconds before the shown frame's start that an accurate seek is aimed at, so that
/// the frame itself is not dropped for a rounding of its time (ffmpeg drops frames
/// starting before the seek point); far less than any frame's length.
const SEEK_MARGIN: f64 = 0.0005;

pub struct TrimVideo;

impl CommandDef for TrimVideo {
    const SPEC: CommandSpec = CommandSpec {
        name: "trim-video",
        summary: "The part of a video from `start` to `end` (or for `duration`), frame-accurate, with its audio, as MP4; copied without re-encoding when it starts on a keyframe.",
        inputs: INPUTS,
        options: &[&START, &END, &DURATION, &LOUDNESS, &BURN_SUBTITLES],
        output: Some(OUTPUT),
        in_process: false,
    };

    /// The same size, the part's length (up to the input's end).
    fn predict(input: Shape, options: &Options) -> Prediction {
        let (start, end) = span(options);
        let end = match (end, input.seconds) {
            (Some(end), Some(whole)) => Some(end.min(whole)),
            (end, whole) => end.or(whole),
        };
        let seconds = end.map(|end| (end - start).max(0.0));
        Prediction::one(
            Some(OUTPUT),
            Shape {
                seconds,
                frames: None,
                ..input
            },
        )
    }

    fn refuse(input: Shape, options: &Options) -> Option<MediaError> {
        let (start, _) = span(options);
        input
            .seconds
            .filter(|whole| start >= *whole)
            .map(|_| start_past_end())
    }

    fn check(options: &Options) -> Result<(), OptionProblem> {
        if options.has(&END) && options.has(&DURATION) {
            return Err(OptionProblem {
                code: Code::InvalidOptionCombination,
                option: "duration",
                detail: "give `end` or `duration`, not both".into(),
            });
        }
        let start = options.number(&START);
        match options.optional_number(&END) {
            Some(end) if end <= start => Err(OptionProblem {
                code: Code::InvalidOptionCombination,
                option: "end",
                detail: format!("`end` ({end}) must be after `start` ({start})"),
            }),
            _ => Ok(()),
        }
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        let info = crate::media::video::inspect::inspect(media, input, INPUTS).await?;
        let (start, end) = span(options);
        if info.duration.is_some_and(|whole| start >= whole) {
            return Err(start_past_end());
        }
        let shown = frame_shown_at(media, input, start).await?;
        // The part runs from the shown frame's start, so that it ends where asked.
        let length = end.map(|end| end - shown.start);
        // Subtitles burned in (the pipeline's last step) need the frames re-encoded.
        let burn = burn_retimed(Command::TrimVideo, options, &info, out_dir).await?;
        let copy = shown.key && input.format.is_iso_bmff_video() && can_copy(&info);
        let copy = copy && burn.is_none();
        // The loudness of the part kept, when asked for: its audio is encoded anyway.
        let span = (Some(shown.start), length);
        let target = loudness_target(media, input, (options, info.has_audio), span).await?;
        if let (false, Some(part)) = (copy, chunk_part(shown, length, &info)) {
            let mut recipe = split_recipe(media, part, &info);
            add_to_audio(&mut recipe.audio, target);
            // Its chunks run here, where the script and font are.
            recipe.local_only = burn.is_some();
            recipe.burn = burn.clone();
            let split =
                chunked::try_split(media, (input, &info), &recipe, OUTPUT, out_dir, progress);
            if let Some(file) = split.await? {
                return Ok(vec![file]);
            }
        }
        let mut recipe = if copy {
            copy_recipe(shown, length, &info)
        } else {
            encode_recipe(shown, length, &info, burn.as_deref())
        };
        add_to_audio(&mut recipe.output_options, target);
        let expected = length.or(info.duration.map(|d| d - shown.start));
        let out = transcode::run_to_file(media, input, recipe, OUTPUT, expected, out_dir, progress);
        Ok(vec![out.await?])
    }
}

/// `start`, and the end the options name (`end`, or `start + duration`), if any.
fn span(options: &Options) -> (f64, Option<f64>) {
    let start = options.number(&START);
    let end = options
        .optional_number(&END)
        .or_else(|| options.optional_number(&DURATION).map(|d| start + d));
    (start, end)
}

fn start_past_end() -> MediaError {
    MediaError::InvalidParameter {
        name: "start",
        expected: "before the end of the video",
    }
}

/// Whether the output can keep the source's video packets: what every MP4 output is
/// (H.264 in 8-bit 4:2:0, upright, square pixels, even sides).
fn can_copy(info: &VideoInfo) -> bool {
    info.hdr.is_none()
        && info.codec.as_deref() == Some("h264")
        && info.pix_fmt.as_deref() == Some("yuv420p")
        && info.shown_as_stored
        && info.width % 2 == 0
        && info.height % 2 == 0
}

/// Seek to the keyframe itself (the demuxer lands on it) and copy from there.
fn copy_recipe(shown: ShownFrame, length: Option<f64>, info: &VideoInfo) -> Recipe {
    let mut output = map_args(info.has_audio);
    output.extend(["-c:v", "copy"].map(String::from));
    output.extend(tail(length, info));
    Recipe {
        input_options: vec!["-ss".into(), format!("{:.6}", shown.start)],
        output_options: output,
    }
}

/// Where the single-process re-encode seeks: just before the frame.
fn encode_seek(shown: ShownFrame) -> f64 {
    (shown.start - SEEK_MARGIN).max(0.0)
}

/// The re-encode's video filter, drawing `burn` (timed from the part's start) last.
fn encode_filter(info: &VideoInfo, burn: Option<&str>) -> String {
    let shown = shown_pictures(info);
    let filter = format!("{shown},{EVEN_SIZE},setsar=1,setpts=PTS-STARTPTS,format=yuv420p");
    match burn {
        Some(burn) => format!("{filter},{burn}"),
        None => filter,
    }
}

/// The part a re-encode may be cut in chunks over: the frames of a constant-rate
/// source from the shown one (its index from its time, the video starting at zero,
/// which the chunked encode checks) that start within `length` as the output `-t`
/// keeps them, up to the source's last; `None` where the rate or frame count is
/// unknown or not constant, or nothing is left.
fn chunk_part(shown: ShownFrame, length: Option<f64>, info: &VideoInfo) -> Option<Part> {
    let (rate, base, total) = (info.frame_rate?, info.base_rate?, info.frames?);
    if (rate - base).abs() > base * 0.001 {
        return None;
    }
    let first = (shown.start * rate).round() as u64;
    let left = total.checked_sub(first)?;
    let frames = length.map_or(left, |l| part::frames_within(l, rate).min(left));
    (frames > 0).then_some(Part {
        start: shown.start,
        first,
        frames,
        length,
        audio_seek: encode_seek(shown),
    })
}

/// The re-encode of `part` as a recipe that may be cut in chunks: the same filter,
/// encoder, audio and length as [`encode_recipe`].
fn split_recipe(media: &Media, part: Part, info: &VideoInfo) -> SplitRecipe {
    let audio = if info.has_audio {
        AAC.map(String::from).into()
    } else {
        Vec::new()
    };
    let video = X264.map(String::from).into_iter().chain(sdr_tags(info));
    let video = video.collect();
    let mut recipe = SplitRecipe::x264(media, encode_filter(info, None), (video, audio), 1.0);
    recipe.part = Some(part);
    recipe
}

/// Seek just before the frame (ffmpeg decodes from the keyframe before and drops what
/// starts earlier) and encode from it, its time made the output's zero; `burn` draws
/// subtitles timed from there.
fn encode_recipe(
    shown: ShownFrame,
    length: Option<f64>,
    info: &VideoInfo,
    burn: Option<&str>,
) -> Recipe {
    let seek = encode_seek(shown);
    let mut output = map_args(info.has_audio);
    output.extend(["-vf".to_string(), encode_filter(info, burn)]);
    output.extend(X264.map(String::from));
    output.extend(sdr_tags(info));
    output.extend(tail(length, info));
    Recipe {
        input_options: vec!["-ss".into(), format!("{seek:.6}")],
        output_options: output,
    }
}

/// The audio, the length and the container.
fn tail(length: Option<f64>, info: &VideoInfo) -> Vec<String> {
    let mut args = Vec::new();
    if info.has_audio {
        args.extend(AAC.map(String::from));
    }
    if let Some(length) = length {
        args.extend(["-t".to_string(), format!("{length:.6}")]);
    }
    args.extend(["-movflags", "+faststart", "-f", "mp4"].map(String::from));
    args
}

#[cfg(test)]
mod tests;
