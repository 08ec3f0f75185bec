//! `modify-video-speed`: an H.264 + AAC MP4 lasting the source's duration / `speed`.
//! Video and audio are both retimed; audio keeps its pitch (`atempo`). Output frame
//! rates above 60 are lowered to 60.
//!
//! A source whose stream the output can keep (H.264 `yuv420p` in MP4, MOV or 3GP,
//! shown as stored, even sides, at most 60 fps once retimed) is copied with its times
//! scaled (`-itsscale`, `setts`): every frame kept, only the audio encoded again.

use std::path::Path;

use super::options::{OptionKind, OptionSpec, Options};
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

pub const SPEED: OptionSpec = OptionSpec {
    name: "speed",
    doc: "How many times faster the video plays (0.1–16; default 1).",
    kind: OptionKind::Number {
        min: 0.1,
        min_inclusive: true,
        max: 16.0,
        integer: false,
        default: Some(1.0),
    },
};

/// Output frame rates past this are dropped to it by `modify-video-speed`: no screen
/// shows them, and they cost bytes.
const SPEED_MAX_FPS: f64 = 60.0;

pub struct ModifyVideoSpeed;

impl CommandDef for ModifyVideoSpeed {
    const SPEC: CommandSpec = CommandSpec {
        name: "modify-video-speed",
        summary: "A video sped up or slowed down by `speed`; the audio keeps its pitch.",
        inputs: INPUTS,
        options: &[&SPEED, &LOUDNESS],
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
    // Copies stay within ISO-BMFF, whose timing the in-process reader knows exactly.
    if input.format.is_iso_bmff_video() && can_copy_video(speed, &info) {
        let mut recipe = copy_recipe(speed, &info);
        add_to_audio(&mut recipe.output_options, target);
        return transcode::run_to_file(media, input, recipe, OUTPUT, expected, out_dir, progress)
            .await;
    }
    if let Some(time_scale) = chunk_time_scale(speed, &info) {
        let mut recipe = encode_recipe(media, speed, &info, time_scale);
        add_to_audio(&mut recipe.audio, target);
        let input = (input, &info);
        return chunked::convert_inspected(media, input, &recipe, OUTPUT, out_dir, progress).await;
    }
    let mut tail = modify_speed_args(speed, &info);
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
mod tests {
    use super::*;
    use crate::media::video::info::tests::info;

    /// An H.264 source at `rate` that can be shown as stored.
    fn h264(rate: f64) -> VideoInfo {
        VideoInfo {
            codec: Some("h264".into()),
            pix_fmt: Some("yuv420p".into()),
            shown_as_stored: true,
            ..info(Some(rate), true)
        }
    }

    #[test]
    fn only_a_stream_the_output_can_keep_is_copied() {
        assert!(can_copy_video(2.0, &h264(25.0)));
        assert!(can_copy_video(0.1, &h264(25.0)));
        assert!(!can_copy_video(4.0, &h264(25.0)), "100 fps is past 60");
        let mut other = h264(25.0);
        other.codec = Some("hevc".into());
        assert!(!can_copy_video(2.0, &other));
        let mut ten_bit = h264(25.0);
        ten_bit.pix_fmt = Some("yuv420p10le".into());
        assert!(!can_copy_video(2.0, &ten_bit));
        let mut turned = h264(25.0);
        turned.shown_as_stored = false;
        assert!(!can_copy_video(2.0, &turned));
        let mut odd = h264(25.0);
        odd.height = 61;
        assert!(!can_copy_video(2.0, &odd));
        let mut unknown = h264(25.0);
        (unknown.frame_rate, unknown.base_rate) = (None, None);
        assert!(!can_copy_video(2.0, &unknown));
    }

    #[test]
    fn a_copy_scales_every_time_and_the_last_duration_and_encodes_only_the_audio() {
        let recipe = copy_recipe(2.0, &h264(25.0));
        assert_eq!(recipe.input_options, ["-itsscale:v:0", "0.5"]);
        let args = recipe.output_options.join(" ");
        assert!(args.contains("-map 0:v:0 -map 0:a:0 -c:v copy"), "{args}");
        assert!(
            args.contains("setts=pts=PTS:dts=DTS:duration=DURATION*0.5"),
            "{args}"
        );
        assert!(args.contains("-af atempo=2 -c:a aac"), "{args}");
        assert!(!args.contains("libx264"), "{args}");
        assert!(args.ends_with("-movflags +faststart -f mp4"), "{args}");
    }

    #[test]
    fn atempo_chain_keeps_each_factor_within_half_and_double() {
        assert_eq!(atempo_chain(1.0), Vec::<f64>::new());
        assert_eq!(atempo_chain(1.5), [1.5]);
        assert_eq!(atempo_chain(2.0), [2.0]);
        assert_eq!(atempo_chain(4.0), [2.0, 2.0]);
        assert_eq!(atempo_chain(16.0), [2.0, 2.0, 2.0, 2.0]);
        assert_eq!(atempo_chain(3.0), [2.0, 1.5]);
        assert_eq!(atempo_chain(0.5), [0.5]);
        assert_eq!(atempo_chain(0.25), [0.5, 0.5]);
        assert_eq!(atempo_chain(0.1), [0.5, 0.5, 0.5, 0.8]);
        for speed in [0.1, 0.13, 0.3, 0.7, 1.9, 2.5, 7.3, 15.9, 16.0] {
            let chain = atempo_chain(speed);
            assert!(chain.iter().all(|f| (0.5..=2.0).contains(f)), "{speed}");
            let product: f64 = chain.iter().product();
            assert!((product - speed).abs() < 1e-5, "{speed}: {chain:?}");
        }
    }

    #[test]
    fn only_a_re_encode_that_keeps_every_frame_is_cut_and_its_chunks_fall_on_the_fps_grid() {
        // 25 fps at 1.5: 37.5 fps, one out for one in; a chunk of 25 source frames lasts
        // 25 / 37.5 s.
        let scale = chunk_time_scale(1.5, &info(Some(25.0), true)).unwrap();
        assert!((scale - 25.0 / 37.5).abs() < 1e-12, "{scale}");
        // 29.97 fps at 1.3: the grid is fps's rate, rounded to a thousandth (38.961).
        let ntsc = info(Some(30000.0 / 1001.0), false);
        let scale = chunk_time_scale(1.3, &ntsc).unwrap();
        let frame = scale / (30000.0 / 1001.0);
        assert!((frame - 1.0 / 38.961).abs() < 1e-12, "{frame}");
        // 25 fps at 4 is 100 fps, lowered to 60 by dropping frames: whole.
        assert_eq!(chunk_time_scale(4.0, &info(Some(25.0), true)), None);
        // A variable rate keeps its own times: whole.
        let mut vfr = info(Some(15.6), false);
        vfr.base_rate = Some(25.0);
        assert_eq!(chunk_time_scale(2.0, &vfr), None);
        assert_eq!(chunk_time_scale(2.0, &info(None, false)), None);
        // The chunked recipe is the single-process one.
        let media = crate::media::testutil::media();
        let recipe = encode_recipe(&media, 1.5, &info(Some(25.0), true), 0.6);
        assert_eq!(
            recipe.whole(),
            modify_speed_args(1.5, &info(Some(25.0), true))
        );
    }

    #[test]
    fn modify_speed_retimes_video_and_audio_and_caps_the_frame_rate() {
        let args = modify_speed_args(4.0, &info(Some(25.0), true)).join(" ");
        assert!(args.contains("-map 0:v:0 -map 0:a:0"), "{args}");
        assert!(args.contains("setpts=PTS/4,fps=60/1,scale="), "{args}");
        assert!(args.contains("-af atempo=2,atempo=2 -c:a aac"), "{args}");
        assert!(args.ends_with("-movflags +faststart -f mp4"), "{args}");

        let args = modify_speed_args(0.5, &info(Some(25.0), false)).join(" ");
        assert!(args.contains("setpts=PTS/0.5,fps=25/2,scale="), "{args}");
        assert!(!args.contains("-enc_time_base"), "{args}");
        // A variable rate keeps its frame times.
        let mut vfr = info(Some(15.6), false);
        vfr.base_rate = Some(25.0);
        let args = modify_speed_args(2.0, &vfr).join(" ");
        assert!(args.contains("setpts=PTS/2,scale="), "{args}");
        assert!(args.contains("-fps_mode vfr -enc_time_base -1"), "{args}");
        assert!(!args.contains("0:a") && !args.contains("-af") && !args.contains("aac"));
        // Speed 1 needs no tempo change.
        let args = modify_speed_args(1.0, &info(Some(25.0), true)).join(" ");
        assert!(
            !args.contains("atempo") && args.contains("-c:a aac"),
            "{args}"
        );
    }
}
