//! `video-to-gif`: a looping GIF with a palette made for the clip, at most 15 fps
//! and 480 px on the longest side (never enlarged).

use std::path::Path;

use crate::commands::formats::VIDEOS;
use crate::commands::options::Options;
use crate::commands::spec::{CommandDef, CommandSpec, Prediction, Shape};
use crate::media::ffmpeg::transcode::SQUARE_PIXELS;
use crate::media::video::hdr::tone_map_head;
use crate::media::video::info::VideoInfo;
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn};

const INPUTS: &[MediaFormat] = VIDEOS;
const OUTPUT: MediaFormat = MediaFormat::Gif;

/// GIF output: frames per second at most, and the longest side at most.
pub(crate) const GIF_MAX_FPS: f64 = 15.0;
pub(crate) const GIF_MAX_SIDE: u32 = 480;
/// Colours of the palette, and how the frames are mapped to it. Measured on a 1080p
/// 10 s clip of real footage (docs/PERFORMANCE.md): 256 colours with error diffusion
/// (sierra2_4a) made 11.6 MB at SSIM 0.869 in 7.8 s; 96 colours without dithering make
/// 5.5 MB at SSIM 0.880 in 3.4 s. Dithering noise defeats GIF's LZW compression and
/// costs SSIM more than the fewer colours do.
const GIF_COLORS: u32 = 96;
/// A clip of at least this many output frames has its palette counted on
/// `PALETTE_SAMPLE_FPS` frames a second only.
const PALETTE_SAMPLE_FROM_FRAMES: f64 = 45.0;
const PALETTE_SAMPLE_FPS: u32 = 3;
/// Memory a whole-clip GIF palette may hold frames in (see [`video_to_gif_args`]).
const GIF_BUFFER_BYTES: u64 = 512 * 1024 * 1024;

pub struct VideoToGif;

impl CommandDef for VideoToGif {
    const SPEC: CommandSpec = CommandSpec {
        name: "video-to-gif",
        summary: "A video as a looping GIF: at most 15 fps and 480 px on the longest side.",
        inputs: INPUTS,
        options: &[],
        output: Some(OUTPUT),
        in_process: false,
    };

    fn predict(input: Shape, _options: &Options) -> Prediction {
        predict(input)
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        _options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        Ok(vec![run(media, input, out_dir, progress).await?])
    }
}

/// The same length; the longest side at most 480.
fn predict(input: Shape) -> Prediction {
    let size = input.size.map(|(w, h)| {
        let shrink = (f64::from(GIF_MAX_SIDE) / f64::from(w.max(h))).min(1.0);
        let side = |s: u32| (f64::from(s) * shrink).round() as u32;
        (side(w), side(h))
    });
    Prediction::one(
        Some(OUTPUT),
        Shape {
            size,
            frames: None,
            ..input
        },
    )
}

async fn run(
    media: &Media,
    input: &MediaFile,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let args = video_to_gif_args;
    crate::media::video::convert::convert(media, input, INPUTS, args, OUTPUT, out_dir, progress)
        .await
}

/// `video-to-gif` arguments after the input.
///
/// One palette for the whole clip needs every frame held until the palette is made at
/// the end (`split` buffers them): 4 bytes a pixel. A clip whose frames would take more
/// than [`GIF_BUFFER_BYTES`] gets a palette per frame instead, which holds nothing.
pub(crate) fn video_to_gif_args(info: &VideoInfo) -> Vec<String> {
    let mut video = format!("[0:v:0]{SQUARE_PIXELS},");
    let fps = match info.frame_rate {
        Some(fps) if fps <= GIF_MAX_FPS => fps,
        _ => {
            video.push_str(&format!("fps={GIF_MAX_FPS},"));
            GIF_MAX_FPS
        }
    };
    // An HDR source is tone-mapped after `fps` drops the frames no GIF shows.
    video.push_str(&tone_map_head(info));
    // Rotation swaps the sides, which changes neither the longest side nor the area.
    let longest = f64::from(info.width.max(info.height));
    let shrink = (f64::from(GIF_MAX_SIDE) / longest).min(1.0);
    let frame_bytes = f64::from(info.width) * f64::from(info.height) * shrink * shrink * 4.0;
    let frames = info.duration.map_or(f64::INFINITY, |d| d * fps);
    let (palettegen, paletteuse) = if frame_bytes * frames <= GIF_BUFFER_BYTES as f64 {
        // The palette's statistics need not see every frame: colours last longer than
        // a third of a second, and counting them was 40 % of the run.
        let sample = if frames >= PALETTE_SAMPLE_FROM_FRAMES {
            format!("fps={PALETTE_SAMPLE_FPS},")
        } else {
            String::new()
        };
        (
            format!("{sample}palettegen=stats_mode=diff:max_colors={GIF_COLORS}"),
            "dither=none:diff_mode=rectangle",
        )
    } else {
        (
            format!("palettegen=stats_mode=single:max_colors={GIF_COLORS}"),
            "new=1:dither=none:diff_mode=rectangle",
        )
    };
    // The longest displayed side to at most GIF_MAX_SIDE, aspect kept, never larger.
    let m = GIF_MAX_SIDE;
    video.push_str(&format!(
        "scale='if(gte(iw,ih),min({m},iw),-1)':'if(gte(iw,ih),-1,min({m},ih))':flags=lanczos,\
         setsar=1,split[a][b];[a]{palettegen}[p];[b][p]paletteuse={paletteuse}[v]"
    ));
    let mut args = vec!["-filter_complex".to_string(), video];
    args.extend(["-map", "[v]", "-loop", "0", "-f", "gif"].map(String::from));
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::video::info::tests::info;

    #[test]
    fn video_to_gif_lowers_the_frame_rate_only_when_above_the_cap() {
        let args = video_to_gif_args(&info(Some(30.0), true)).join(" ");
        assert!(args.contains("setsar=1,fps=15,scale="), "{args}");
        assert!(
            args.contains("[a]palettegen=stats_mode=diff:max_colors=96"),
            "{args}"
        );
        assert!(
            args.contains("paletteuse=dither=none:diff_mode=rectangle"),
            "{args}"
        );
        assert!(args.ends_with("-loop 0 -f gif"), "{args}");
        // 10 s at 15 fps: the palette counts 3 frames a second.
        let mut longer = info(Some(30.0), true);
        longer.duration = Some(10.0);
        let args = video_to_gif_args(&longer).join(" ");
        assert!(
            args.contains("[a]fps=3,palettegen=stats_mode=diff"),
            "{args}"
        );
        let args = video_to_gif_args(&info(Some(10.0), true)).join(" ");
        assert!(args.contains("setsar=1,scale="), "{args}");
        assert!(args.contains("palettegen=stats_mode=diff"), "{args}");
    }

    #[test]
    fn video_to_gif_uses_a_palette_per_frame_when_the_clip_would_not_fit_in_memory() {
        // 1080p scaled to 480x270 at 15 fps: 518 400 bytes a frame, 1035 frames fit.
        let mut long = info(Some(30.0), false);
        (long.width, long.height) = (1920, 1080);
        long.duration = Some(60.0);
        let args = video_to_gif_args(&long).join(" ");
        assert!(args.contains("palettegen=stats_mode=diff"), "{args}");
        long.duration = Some(600.0);
        let args = video_to_gif_args(&long).join(" ");
        assert!(args.contains("palettegen=stats_mode=single"), "{args}");
        assert!(args.contains("paletteuse=new=1:"), "{args}");
        assert!(
            !args.contains("fps=3,"),
            "every frame has its own palette: {args}"
        );
    }

    #[test]
    fn the_longest_side_is_predicted_at_most_480() {
        let shape = Shape {
            size: Some((1920, 1080)),
            frames: Some(250),
            seconds: Some(10.0),
        };
        let predicted = predict(shape);
        assert_eq!(predicted.shape.size, Some((480, 270)));
        assert_eq!(predicted.shape.seconds, Some(10.0));
        assert!(video_to_gif_args(&info(Some(25.0), true))
            .join(" ")
            .contains(SQUARE_PIXELS));
    }
}
