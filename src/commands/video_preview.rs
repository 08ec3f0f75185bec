//! `video-preview`: a short looping animation of a video for hover previews and
//! thumbnails that move: `start` … `start + duration` (at most 10 s; by default the
//! first 3 s), `width` pixels wide (default 480, aspect kept), at most 15 fps, as an
//! animated WebP (libwebp, lossy quality 75, default) or a GIF (one palette for the
//! clip, as `video-to-gif`), looping forever. No sound: neither format has any.

use std::path::Path;

use super::options::{OptionKind, OptionSpec, Options};
use super::time_options::START;
use crate::commands::formats::VIDEOS;
use crate::commands::spec::{CommandDef, CommandSpec, Prediction, Shape};
use crate::media::ffmpeg::transcode::{self, Recipe, SQUARE_PIXELS};
use crate::media::image::yuv::Matrix;
use crate::media::video::hdr::tone_map_head;
use crate::media::video::info::VideoInfo;
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn};

const INPUTS: &[MediaFormat] = VIDEOS;

pub const DURATION: OptionSpec = OptionSpec {
    name: "duration",
    doc: "video-preview: seconds of video the preview shows from `start` (more than 0, at most 10; default 3).",
    kind: OptionKind::Number {
        min: 0.0,
        min_inclusive: false,
        max: 10.0,
        integer: false,
        default: Some(3.0),
    },
};

pub const WIDTH: OptionSpec = OptionSpec::integer(
    "width",
    "video-preview: the preview's width in pixels, its height kept in proportion (default 480).",
    16.0,
    1920.0,
    Some(480.0),
);

pub const FORMAT: OptionSpec = OptionSpec {
    name: "format",
    doc: "video-preview: webp (an animated WebP, default) or gif.",
    kind: OptionKind::Choice {
        values: &["webp", "gif"],
        default: Some("webp"),
    },
};

/// Frames a second at most: a preview is a glance, and every frame costs bytes.
const MAX_FPS: f64 = 15.0;

pub struct VideoPreview;

impl CommandDef for VideoPreview {
    const SPEC: CommandSpec = CommandSpec {
        name: "video-preview",
        summary: "A short looping animation of a video (`start`, `duration` up to 10 s), `width` px wide, as animated WebP or GIF.",
        inputs: INPUTS,
        options: &[&START, &DURATION, &WIDTH, &FORMAT],
        output: None,
        in_process: false,
    };

    fn output(_input: MediaFormat, options: &Options) -> MediaFormat {
        format(options)
    }

    /// `width` wide in the input's aspect, lasting `duration` or what is left after
    /// `start`.
    fn predict(input: Shape, options: &Options) -> Prediction {
        let width = options.number(&WIDTH) as u32;
        let size = input.size.map(|(w, h)| (width, height_for(width, (w, h))));
        let (start, duration) = (options.number(&START), options.number(&DURATION));
        let seconds = match input.seconds {
            Some(whole) => (whole - start).clamp(0.0, duration),
            None => duration,
        };
        let shape = Shape {
            size,
            frames: None,
            seconds: Some(seconds),
        };
        Prediction::one(Some(format(options)), shape)
    }

    fn refuse(input: Shape, options: &Options) -> Option<MediaError> {
        let start = options.number(&START);
        input
            .seconds
            .filter(|whole| start >= *whole)
            .map(|_| start_past_end())
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        let info = crate::media::video::inspect::inspect(media, input, INPUTS).await?;
        let start = options.number(&START);
        if info.duration.is_some_and(|whole| start >= whole) {
            return Err(start_past_end());
        }
        let duration = options.number(&DURATION);
        let width = options.number(&WIDTH) as u32;
        let format = format(options);
        let recipe = Recipe {
            input_options: vec!["-ss".into(), format!("{start:.6}")],
            output_options: preview_args(&info, width, duration, format),
        };
        let expected = Some(duration);
        let out = transcode::run_to_file(media, input, recipe, format, expected, out_dir, progress);
        Ok(vec![out.await?])
    }
}

fn format(options: &Options) -> MediaFormat {
    match options.text(&FORMAT).as_deref() {
        Some("gif") => MediaFormat::Gif,
        _ => MediaFormat::Webp,
    }
}

fn start_past_end() -> MediaError {
    MediaError::InvalidParameter {
        name: "start",
        expected: "before the end of the video",
    }
}

/// The height ffmpeg gives `width` for a picture shown at `shown` (`scale=W:-1`:
/// rounded to the nearest pixel).
fn height_for(width: u32, (w, h): (u32, u32)) -> u32 {
    ((f64::from(width) * f64::from(h) / f64::from(w.max(1))).round() as u32).max(1)
}

/// ffmpeg arguments after the input: the frames of `duration` seconds, at most 15 a
/// second, scaled to `width`, into `format`.
fn preview_args(info: &VideoInfo, width: u32, duration: f64, format: MediaFormat) -> Vec<String> {
    let mut video = format!("[0:v:0]{SQUARE_PIXELS},");
    if !info.frame_rate.is_some_and(|fps| fps <= MAX_FPS) {
        video.push_str(&format!("fps={MAX_FPS},"));
    }
    // An HDR source is tone-mapped after `fps` drops the frames the preview skips.
    video.push_str(&tone_map_head(info));
    video.push_str(&format!("scale={width}:-1:flags=lanczos"));
    if format == MediaFormat::Webp {
        // libwebp takes YCbCr as BT.601: a BT.709 picture (a tone-mapped HDR one
        // among them) is re-expressed in it, or its colours shift (mean ΔE2000 5 → 2.4
        // on tests/it/hdr.rs's HLG pattern).
        let from = match info.matrix {
            Matrix::Bt709 => "bt709",
            Matrix::Bt601 => "bt601",
        };
        video.push_str(&format!(
            ":in_color_matrix={from}:out_color_matrix=bt601:out_range=tv"
        ));
    }
    video.push_str(",setsar=1");
    let mut args = Vec::new();
    if format == MediaFormat::Gif {
        video.push_str(
            ",split[a][b];[a]palettegen=stats_mode=diff[p];\
             [b][p]paletteuse=dither=bayer:bayer_scale=3:diff_mode=rectangle",
        );
        args.extend(["-filter_complex".to_string(), format!("{video}[v]")]);
        args.extend(["-map", "[v]", "-t", &format!("{duration:.6}")].map(String::from));
        args.extend(["-loop", "0", "-f", "gif"].map(String::from));
    } else {
        args.extend(["-filter_complex".to_string(), format!("{video}[v]")]);
        args.extend(["-map", "[v]", "-t", &format!("{duration:.6}")].map(String::from));
        args.extend(["-c:v", "libwebp_anim", "-lossless", "0", "-quality", "75"].map(String::from));
        args.extend(["-loop", "0", "-f", "webp"].map(String::from));
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::video::info::tests::info;
    use serde_json::json;

    #[test]
    fn a_preview_is_width_wide_in_proportion_and_at_most_duration_long() {
        let clip = Shape {
            size: Some((640, 360)),
            frames: Some(100),
            seconds: Some(4.0),
        };
        let predicted = VideoPreview::predict(clip, &Options::default());
        assert_eq!(predicted.format, Some(MediaFormat::Webp));
        assert_eq!(predicted.shape.size, Some((480, 270)));
        assert_eq!(predicted.shape.seconds, Some(3.0));
        let late = Options::of(&[("start", json!(3)), ("format", json!("gif"))]);
        let predicted = VideoPreview::predict(clip, &late);
        assert_eq!(predicted.shape.seconds, Some(1.0));
        assert_eq!(predicted.format, Some(MediaFormat::Gif));
        let past = Options::of(&[("start", json!(5))]);
        assert!(VideoPreview::refuse(clip, &past).is_some());
    }

    #[test]
    fn the_rate_is_capped_and_each_format_gets_its_encoder() {
        let fast = preview_args(&info(Some(30.0), true), 320, 2.0, MediaFormat::Webp).join(" ");
        assert!(fast.contains("fps=15,scale=320:-1"), "{fast}");
        assert!(fast.contains("-t 2.000000 -c:v libwebp_anim"), "{fast}");
        let slow = preview_args(&info(Some(10.0), false), 320, 2.0, MediaFormat::Gif).join(" ");
        assert!(!slow.contains("fps="), "{slow}");
        assert!(
            slow.contains("paletteuse") && slow.ends_with("-loop 0 -f gif"),
            "{slow}"
        );
    }
}
