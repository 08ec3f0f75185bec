//! `modify-video-speed`: an H.264 + AAC MP4 lasting the source's duration / `speed`.
//! Video and audio are both retimed; audio keeps its pitch (`atempo`). Output frame
//! rates above 60 are lowered to 60.
//!
//! A source whose stream the output can keep (H.264 `yuv420p` in MP4, MOV or 3GP,
//! shown as stored, even sides, at most 60 fps once retimed) is copied with its times
//! scaled (`-itsscale`, `setts`): every frame kept, only the audio encoded again.
//! Subtitles burned in (`burnSubtitles`, this the pipeline's last step) need the frames
//! re-encoded: the input's cues drawn on them before they are retimed.

use std::path::Path;

use super::options::Options;
use super::subtitled::{burn_for, BURN_SUBTITLES};
use super::time_options::SPEED;
use super::video_to_audio::LOUDNESS;
use crate::commands::formats::VIDEOS;
use crate::commands::spec::{CommandDef, CommandSpec, Prediction, Shape};
use crate::media::ffmpeg::transcode::{self, map_args, Recipe, AAC, EVEN_SIZE, X264};
use crate::media::video::chunked::{self, SplitRecipe};
use crate::media::video::h264::FrameRate;
use crate::media::video::hdr::{sdr_tags, shown_pictures};
use crate::media::video::info::VideoInfo;
use crate::media::video::loudness::{add_to_audio, measure};
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn};

const INPUTS: &[MediaFormat] = VIDEOS;
const OUTPUT: MediaFormat = MediaFormat::Mp4;

/// Output frame rates past this are dropped to it by `modify-video-speed`: no screen
/// shows them, and they cost bytes.
const SPEED_MAX_FPS: f64 = 60.0;

pub struct ModifyVideoSpeed;

impl CommandDef for ModifyVideoSpeed {
    const SPEC: CommandSpec = CommandSpec {
        name: "modify-video-speed",
        summary: "A video sped up or slowed down by `speed`; the audio keeps its pitch.",
        inputs: INPUTS,
        options: &[&SPEED, &LOUDNESS, &BURN_SUBTITLES],
        output: Some(OUTPUT),
        in_process: false,
    };

    /// The same size, `speed` times shorter.
    fn predict(input: Shape, options: &Options) -> Prediction {
        let seconds = input.seconds.map(|s| s / options.number(&SPEED));
        Prediction::one(
            Some(OUTPUT),
            Shape {
                seconds,
                frames: None,
                ..input
            },
        )
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        Ok(vec![run(media, input, options, out_dir, progress).await?])
    }
}

async fn run(
    media: &Media,
    input: &MediaFile,
    options: &Options,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let speed = options.number(&SPEED);
    if !(speed.is_finite() && speed > 0.0) {
        return Err(MediaError::InvalidParameter {
            name: "speed",
            expected: "a positive number",
        });
    }
    let info = crate::media::video::inspect::inspect(media, input, INPUTS).await?;
    let expected = info.duration.map(|d| d / speed);
    // Measured through the same `atempo` chain: retiming shifts a track's loudness.
    let target = match options
        .optional_number(&LOUDNESS)
        .filter(|_| info.has_audio)
    {
        Some(target) => {
            let chain: Vec<String> = atempo_chain(speed)
                .iter()
                .map(|f| format!("atempo={f}"))
                .collect();
            let through = Some(chain.join(",")).filter(|c| !c.is_empty());
            Some((
                target,
                measure(media, input, (None, None), through.as_deref()).await?,
            ))
        }
        None => None,
    };
    // The input's cues, drawn before the frames are retimed (at the source's times).
    let burn = burn_for(options, &info, out_dir).await?;
    // Copies stay within ISO-BMFF, whose timing the in-process reader knows exactly.
    let copy = input.format.is_iso_bmff_video() && can_copy_video(speed, &info);
    if copy && burn.is_none() {
        let mut recipe = copy_recipe(speed, &info);
        add_to_audio(&mut recipe.output_options, target);
        return transcode::run_to_file(media, input, recipe, OUTPUT, expected, out_dir, progress)
            .await;
    }
    if let Some(time_scale) = chunk_time_scale(speed, &info) {
        let mut recipe = encode_recipe(media, speed, &info, time_scale);
        add_to_audio(&mut recipe.audio, target);
        // Its chunks run here, where the script and font are.
        recipe.local_only = burn.is_some();
        recipe.burn = burn;
        let input = (input, &info);
        return chunked::convert_inspected(media, input, &recipe, OUTPUT, out_dir, progress).await;
    }
    let mut tail = match burn {
        // The single-process recipe with the cues drawn first, as a chunked one's.
        Some(burn) => {
            let mut recipe = encode_recipe(media, speed, &info, 1.0);
            recipe.burn = Some(burn);
            recipe.whole()
        }
        None => modify_speed_args(speed, &info),
    };
    add_to_audio(&mut tail, target);
    transcode::run_to_file(media, input, tail, OUTPUT, expected, out_dir, progress).await
}

/// Seconds of output a second of source lasts when the re-encode keeps every frame,
/// one out for one in, at exact times: a constant rate that, retimed, stays within
/// 60 fps. Measured against the output rate `fps` is given (rounded to a thousandth),
/// so that the chunks are joined where the single-process encode's frames fall.
/// `None` otherwise, and the encode is not cut in chunks: where `fps` drops frames,
/// which ones it drops depends on where it starts.
fn chunk_time_scale(speed: f64, info: &VideoInfo) -> Option<f64> {
    let source = info.frame_rate?;
    let retimed = info.base_rate? * speed;
    if retimed > SPEED_MAX_FPS || !constant_rate(info) {
        return None;
    }
    let grid = output_rate(speed, info)?;
    Some(source * grid.den as f64 / grid.num as f64)
}

/// Whether the output can keep the source's video stream (see the module docs). The
/// rate checked is the base rate, which no frame interval of a variable-rate stream is
/// shorter than.
fn can_copy_video(speed: f64, info: &VideoInfo) -> bool {
    let rate = info.base_rate.or(info.frame_rate);
    info.hdr.is_none()
        && info.codec.as_deref() == Some("h264")
        && info.pix_fmt.as_deref() == Some("yuv420p")
        && info.shown_as_stored
        && info.width % 2 == 0
        && info.height % 2 == 0
        && rate.is_some_and(|rate| rate * speed <= SPEED_MAX_FPS)
}

/// The video packets copied with every time scaled by 1 / `speed` (the last packet's
/// duration included, which `-itsscale` leaves alone), the audio retimed and encoded.
fn copy_recipe(speed: f64, info: &VideoInfo) -> Recipe {
    let scale = 1.0 / speed;
    let mut output = map_args(info.has_audio);
    output.extend(["-c:v", "copy", "-bsf:v"].map(String::from));
    output.push(format!("setts=pts=PTS:dts=DTS:duration=DURATION*{scale}"));
    output.extend(audio_args(speed, info));
    output.extend(["-movflags", "+faststart", "-f", "mp4"].map(String::from));
    Recipe {
        input_options: vec!["-itsscale:v:0".to_string(), scale.to_string()],
        output_options: output,
    }
}

/// The audio, when there is some: retimed with pitch kept, as AAC.
fn audio_args(speed: f64, info: &VideoInfo) -> Vec<String> {
    let mut args = Vec::new();
    if info.has_audio {
        let chain = atempo_chain(speed);
        if !chain.is_empty() {
            let filters: Vec<String> = chain.iter().map(|f| format!("atempo={f}")).collect();
            args.extend(["-af".to_string(), filters.join(",")]);
        }
        args.extend(AAC.map(String::from));
    }
    args
}

/// The `atempo` factors whose product is `speed`, each within the filter's 0.5–2.0.
/// Empty for 1.0 (nothing to do).
pub(crate) fn atempo_chain(speed: f64) -> Vec<f64> {
    let mut chain = Vec::new();
    let mut rest = speed;
    while rest > 2.0 {
        chain.push(2.0);
        rest /= 2.0;
    }
    while rest < 0.5 {
        chain.push(0.5);
        rest /= 0.5;
    }
    // Float division leaves e.g. 0.7999999999999998 for 0.1; six digits are plenty.
    let rest = (rest * 1e6).round() / 1e6;
    if rest != 1.0 {
        chain.push(rest);
    }
    chain
}

/// `modify-video-speed` arguments after the input.
///
/// A constant-rate source gets `fps` at its rate × speed (at most 60): exact frame
/// durations, so the output lasts exactly duration / speed, and speed-ups past 60 fps
/// drop the frames no screen would show. A variable-rate source keeps its own frame
/// times (retimed) in the input's fine time base; ffmpeg's default of 1/(input frame
/// rate) would merge frames that speeding up brought closer. Its last frame keeps its
/// input length, so the duration is off by less than one input frame.
pub(crate) fn modify_speed_args(speed: f64, info: &VideoInfo) -> Vec<String> {
    let (filter, video) = encode_parts(speed, info);
    let mut args = map_args(info.has_audio);
    args.extend(["-vf".to_string(), filter]);
    args.extend(video);
    args.extend(audio_args(speed, info));
    args.extend(["-movflags", "+faststart", "-f", "mp4"].map(String::from));
    args
}

/// The re-encode as a recipe that may be cut in chunks: the same filter, encoder and
/// audio as [`modify_speed_args`], a second of source lasting `time_scale` (see
/// [`chunk_time_scale`]).
fn encode_recipe(media: &Media, speed: f64, info: &VideoInfo, time_scale: f64) -> SplitRecipe {
    let (filter, video) = encode_parts(speed, info);
    let parts = (video, audio_args(speed, info));
    SplitRecipe::x264(media, filter, parts, time_scale)
}

/// The video filter and the video encoder's options of the re-encode.
fn encode_parts(speed: f64, info: &VideoInfo) -> (String, Vec<String>) {
    let mut video = format!("{},setpts=PTS/{speed}", shown_pictures(info));
    let fps = output_rate(speed, info);
    if let Some(rate) = fps {
        video.push_str(&format!(",fps={}", rate.to_ffmpeg()));
    }
    // Rounding a side to even would otherwise leave the pixels a hair off square.
    video.push_str(&format!(",{EVEN_SIZE},setsar=1,format=yuv420p"));
    let mut args: Vec<String> = ["-fps_mode", "vfr"].map(String::from).into();
    if fps.is_none() {
        args.extend(["-enc_time_base", "-1"].map(String::from));
    }
    args.extend(X264.map(String::from));
    args.extend(sdr_tags(info));
    (video, args)
}

/// The output's frame rate (see [`modify_speed_args`]): the source's × `speed`, 60 where
/// that is more or the rate is unknown; `None` for a variable rate.
fn output_rate(speed: f64, info: &VideoInfo) -> Option<FrameRate> {
    let fps = match info.base_rate.map(|r| r * speed) {
        Some(rate) if rate > SPEED_MAX_FPS => Some(SPEED_MAX_FPS),
        Some(rate) if constant_rate(info) => Some(rate),
        None => Some(SPEED_MAX_FPS),
        Some(_) => None,
    };
    fps.and_then(FrameRate::from_fps)
}

/// Whether the source's frames come at a constant rate (its average within 1 % of its
/// base rate).
fn constant_rate(info: &VideoInfo) -> bool {
    match (info.base_rate, info.frame_rate) {
        (Some(base), Some(avg)) => (base - avg).abs() <= base * 0.01,
        _ => false,
    }
}

#[cfg(test)]
mod tests;
