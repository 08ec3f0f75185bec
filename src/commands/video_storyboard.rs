//! `video-storyboard`: hover-preview thumbnails as video players take them — a sprite
//! sheet of `count` tiles `tileWidth` px wide (`format` `jpeg`, or `webp`), and a
//! WebVTT file whose cues cover the video end to end, each naming its tile as
//! `<sheet URL>#xywh=x,y,w,h`. Two outputs: the sheet, then the VTT.
//!
//! Tile `i` is the frame shown at `i × duration / count`, the start of its cue: one
//! ffmpeg run decodes the video once, and its `fps` filter (rounding timestamps up,
//! so each tick takes the last frame at or before it) picks the frames, which are
//! scaled and laid out by `tile`. The grid is about square, so a 400-tile sheet stays
//! within what JPEG and WebP can hold; the cells after the last tile are the sheet's
//! background, black in a JPEG and transparent in a WebP.
//!
//! With `at: scenes`, tile `i` is instead the best frame of scene `i`
//! (`media::video::scenes`, by `threshold` and `minSceneSeconds` as `video-scenes`
//! finds them), and its cue spans the scene: one run finds the scenes, a second picks
//! their frames by number (`select`) into the sheet.
//!
//! The stored VTT names the sheet `sheet.<ext>`; a download replaces that with the
//! sheet's own signed URL, expiring with the VTT's (`api::files`).

use std::path::Path;

use super::options::{OptionKind, OptionSpec, FORMAT};
use super::video_scenes::{settings, MIN_SCENE_SECONDS, THRESHOLD};
use super::vtt::timestamp;
use crate::commands::formats::VIDEOS;
use crate::commands::options::Options;
use crate::commands::spec::{Beside, CommandDef, CommandSpec, OptionProblem, Prediction, Shape};
use crate::error_code::Code;
use crate::media::ffmpeg::input::file_url;
use crate::media::ffmpeg::transcode::{input_args_with, run_ffmpeg, SQUARE_PIXELS};
use crate::media::video::hdr::tone_map_head;
use crate::media::video::scenes;
use crate::media::{ImageFormat, Media, MediaError, MediaFile, MediaFormat, ProgressFn};

const INPUTS: &[MediaFormat] = VIDEOS;

const COUNT: OptionSpec = OptionSpec::integer(
    "count",
    "video-storyboard: tiles in the sheet, evenly spaced over the video (at most 400).",
    1.0,
    400.0,
    Some(100.0),
);
const TILE_WIDTH: OptionSpec = OptionSpec::integer(
    "tileWidth",
    "video-storyboard: the width of each tile in pixels; the height keeps the aspect.",
    16.0,
    480.0,
    Some(160.0),
);
const AT: OptionSpec = OptionSpec {
    name: "at",
    doc: "video-storyboard: where tiles are taken: `even` (count of them, evenly spaced; default) or `scenes` (one per scene, its best frame, as video-scenes finds them).",
    kind: OptionKind::Choice {
        values: &["even", "scenes"],
        default: Some("even"),
    },
};
/// The largest side a sheet may have (WebP's limit; JPEG's is larger).
const MAX_SIDE: u64 = 16383;
/// Tall tiles (a source far taller than wide) stop at this many times their width.
const MAX_TILE_ASPECT: u32 = 4;

pub struct VideoStoryboard;

impl CommandDef for VideoStoryboard {
    const SPEC: CommandSpec = CommandSpec {
        name: "video-storyboard",
        summary: "A sprite sheet of frames evenly spaced over a video, and a WebVTT file \
                  whose cues point at their tiles (#xywh=) for players' hover previews.",
        inputs: INPUTS,
        options: &[
            &COUNT,
            &TILE_WIDTH,
            &FORMAT,
            &AT,
            &THRESHOLD,
            &MIN_SCENE_SECONDS,
        ],
        // The last output: nothing reads a VTT, so nothing follows a storyboard.
        output: Some(MediaFormat::Vtt),
        in_process: false,
    };

    /// The VTT, and beside it the sheet its cues point into.
    fn predict(input: Shape, options: &Options) -> Prediction {
        // One tile per scene: the sheet's size is known once the scenes are.
        let size = input.size.filter(|_| !by_scenes(options));
        let size = size.map(|shown| Grid::of(options, shown).sheet());
        let sheet = options.image_format(&FORMAT).unwrap_or(ImageFormat::Jpeg);
        Prediction {
            files: 2,
            exact: true,
            format: Some(MediaFormat::Vtt),
            shape: Shape {
                size: None,
                frames: Some(1),
                seconds: None,
            },
            beside: Some(Beside {
                format: sheet.media_format(),
                size,
                after: false,
            }),
        }
    }

    fn check(options: &Options) -> Result<(), OptionProblem> {
        match options.image_format(&FORMAT) {
            None | Some(ImageFormat::Jpeg | ImageFormat::Webp) => Ok(()),
            Some(_) => Err(OptionProblem {
                code: Code::InvalidOptionValue,
                option: FORMAT.name,
                detail: "video-storyboard writes its sheet as `jpeg` or `webp`.".into(),
            }),
        }
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        run(media, input, options, out_dir, progress).await
    }
}

/// The sheet's layout: `count` tiles of `tile` px in `columns` columns.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Grid {
    count: u32,
    tile: (u32, u32),
    columns: u32,
}

fn by_scenes(options: &Options) -> bool {
    options.text(&AT).as_deref() == Some("scenes")
}

impl Grid {
    fn of(options: &Options, shown: (u32, u32)) -> Grid {
        Grid::sized(options.number(&COUNT) as u32, options, shown)
    }

    fn sized(count: u32, options: &Options, shown: (u32, u32)) -> Grid {
        let width = options.number(&TILE_WIDTH) as u32;
        let (w, h) = (shown.0.max(1), shown.1.max(1));
        let height = (f64::from(width) * f64::from(h) / f64::from(w)).round() as u32;
        let height = height.clamp(1, width * MAX_TILE_ASPECT);
        // About as many rows of pixels as columns: √(count × h / w) columns.
        let columns = (f64::from(count) * f64::from(height) / f64::from(width))
            .sqrt()
            .ceil() as u32;
        Grid {
            count,
            tile: (width, height),
            columns: columns.clamp(1, count),
        }
    }

    fn rows(self) -> u32 {
        self.count.div_ceil(self.columns)
    }

    fn sheet(self) -> (u32, u32) {
        (self.columns * self.tile.0, self.rows() * self.tile.1)
    }

    /// Tile `i`'s `x,y,w,h` in the sheet.
    fn xywh(self, i: u32) -> String {
        let (w, h) = self.tile;
        let (x, y) = ((i % self.columns) * w, (i / self.columns) * h);
        format!("{x},{y},{w},{h}")
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
    let seconds = info
        .duration
        .ok_or_else(|| MediaError::InvalidMedia("its length cannot be read".into()))?;
    // The frames picked, and the cues' spans in ms.
    let (grid, picker, spans) = if by_scenes(options) {
        let finding = |f: f64| progress(f / 2.0);
        let found = scenes::detect(media, input, &info, settings(options), &finding).await?;
        let count = found.scenes.len() as u32;
        let spans = found.spans_ms(Some(seconds));
        (
            Grid::sized(count, options, info.shown),
            found.best_frames_filter(),
            spans,
        )
    } else {
        let grid = Grid::of(options, info.shown);
        (
            grid,
            even_picker(grid, seconds),
            even_spans(grid.count, seconds),
        )
    };
    let (width, height) = grid.sheet();
    let (width, height) = (u64::from(width), u64::from(height));
    let format = options.image_format(&FORMAT).unwrap_or(ImageFormat::Jpeg);
    let sheet_format = format.media_format();
    if width.max(height) > MAX_SIDE {
        return Err(MediaError::OutputTooLargeForFormat {
            format: sheet_format.name(),
            width,
            height,
            max_side: MAX_SIDE,
        });
    }
    let max_demuxer = media.config().max_video_seconds;
    let demuxer = crate::media::ffmpeg::input::demuxer(input.format);
    let head = input_args_with((&input.path, demuxer), max_demuxer, &[]);
    let sheet = crate::media::output_path(out_dir, sheet_format);
    let tail = sheet_args(grid, &picker, format, &tone_map_head(&info));
    let half = |f: f64| progress(0.5 + f / 2.0);
    let sheeting: ProgressFn<'_> = if by_scenes(options) { &half } else { progress };
    let ran = run_ffmpeg(media, head, tail, file_url(&sheet), info.duration, sheeting).await;
    if let Err(e) = ran {
        let _ = tokio::fs::remove_file(&sheet).await;
        return Err(e);
    }
    let vtt = crate::media::output_path(out_dir, MediaFormat::Vtt);
    tokio::fs::write(&vtt, cues(grid, &spans, sheet_format.extension())).await?;
    Ok(vec![
        MediaFile {
            path: sheet,
            format: sheet_format,
        },
        MediaFile {
            path: vtt,
            format: MediaFormat::Vtt,
        },
    ])
}

/// The milliseconds tile `i` of `count` starts at over `seconds`: cue `i` ends where
/// cue `i + 1` starts, the last at the end, to the millisecond.
fn start_ms(i: u32, count: u32, seconds: f64) -> u64 {
    (f64::from(i) * seconds * 1000.0 / f64::from(count)).round() as u64
}

/// The spans of `count` cues evenly over `seconds`.
fn even_spans(count: u32, seconds: f64) -> Vec<(u64, u64)> {
    let at = |i| start_ms(i, count, seconds);
    (0..count).map(|i| (at(i), at(i + 1))).collect()
}

/// The filter that picks the frames at each even cue's start: `count` ticks over the
/// length, as a ratio of whole numbers (ms).
fn even_picker(grid: Grid, seconds: f64) -> String {
    let ms = (seconds * 1000.0).round().max(1.0) as u64;
    format!("fps=fps={}/{ms}:round=up", u64::from(grid.count) * 1000)
}

/// ffmpeg arguments after the input: the frames `picker` passes on, scaled to a tile
/// and laid out in one picture.
/// `tone_map`: the tone mapping of an HDR source (with its comma; empty for SDR), put
/// after the picker so that only the frames picked are tone-mapped.
fn sheet_args(grid: Grid, picker: &str, format: ImageFormat, tone_map: &str) -> Vec<String> {
    let (w, h) = grid.tile;
    // The cells no frame fills: black in a JPEG, transparent in a WebP.
    let (pixels, background) = match format {
        ImageFormat::Jpeg => ("yuvj420p", "black"),
        _ => ("yuva420p", "black@0"),
    };
    // `trim` ends the frames at `count`; `tile` then paints every cell left over in
    // `color` as the input ends. (With `nb_frames` instead, `tile` would leave those
    // cells as the zeroed buffer they start as: green, zero chroma.)
    let filter = format!(
        "{SQUARE_PIXELS},{picker},{tone_map}scale={w}:{h}:flags=bicubic,setsar=1,\
         format={pixels},trim=end_frame={},tile={}x{}:color={background}",
        grid.count,
        grid.columns,
        grid.rows(),
    );
    let mut args = ["-map", "0:v:0", "-vf", &filter, "-frames:v", "1"]
        .map(String::from)
        .to_vec();
    let encoder: &[&str] = match format {
        ImageFormat::Jpeg => &["-c:v", "mjpeg", "-q:v", "3", "-f", "image2", "-update", "1"],
        _ => &["-c:v", "libwebp", "-quality", "80", "-f", "webp"],
    };
    args.extend(encoder.iter().map(|a| a.to_string()));
    args
}

/// The WebVTT file: one cue per tile over its span, contiguous from 0 to the end.
fn cues(grid: Grid, spans: &[(u64, u64)], extension: &str) -> String {
    let mut out = String::from("WEBVTT\n");
    for (i, (start, end)) in (0..).zip(spans) {
        out.push_str(&format!(
            "\n{} --> {}\nsheet.{extension}#xywh={}\n",
            timestamp(*start),
            timestamp(*end),
            grid.xywh(i)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn grid(pairs: &[(&'static str, serde_json::Value)], shown: (u32, u32)) -> Grid {
        Grid::of(&Options::of(pairs), shown)
    }

    #[test]
    fn a_hundred_tiles_of_160_make_an_about_square_sheet() {
        let g = grid(&[], (1920, 1080));
        assert_eq!(g.tile, (160, 90));
        assert_eq!((g.columns, g.rows()), (8, 13));
        assert_eq!(g.sheet(), (1280, 1170));
        assert_eq!(g.xywh(0), "0,0,160,90");
        assert_eq!(g.xywh(9), "160,90,160,90");
        let most = grid(
            &[("count", json!(400)), ("tileWidth", json!(480))],
            (1080, 1920),
        );
        let (w, h) = most.sheet();
        assert!(u64::from(w.max(h)) <= MAX_SIDE, "{w}x{h}");
    }

    #[test]
    fn cues_cover_the_video_end_to_end_without_gaps() {
        let g = grid(&[("count", json!(7))], (320, 240));
        let vtt = cues(g, &even_spans(7, 3.0), "jpeg");
        assert!(vtt
            .starts_with("WEBVTT\n\n00:00:00.000 --> 00:00:00.429\nsheet.jpeg#xywh=0,0,160,120\n"));
        let times: Vec<&str> = vtt.lines().filter(|l| l.contains("-->")).collect();
        assert_eq!(times.len(), 7);
        for pair in times.windows(2) {
            assert_eq!(pair[0].split(" --> ").nth(1), pair[1].split(" --> ").next());
        }
        assert!(times[6].ends_with("--> 00:00:03.000"), "{vtt}");
    }

    #[test]
    fn the_frames_are_picked_at_each_cue_s_start_in_one_run() {
        let g = grid(&[("count", json!(7))], (320, 240));
        let args = sheet_args(g, &even_picker(g, 3.0), ImageFormat::Jpeg, "").join(" ");
        assert!(args.contains("fps=fps=7000/3000:round=up"), "{args}");
        assert!(
            args.contains("trim=end_frame=7,tile=3x3:color=black "),
            "{args}"
        );
        let webp = sheet_args(g, &even_picker(g, 3.0), ImageFormat::Webp, "").join(" ");
        assert!(webp.contains("-c:v libwebp"), "{webp}");
        assert!(
            webp.contains("yuva420p,trim=end_frame=7,tile=3x3:color=black@0"),
            "{webp}"
        );
    }

    #[test]
    fn only_jpeg_and_webp_sheets_are_made() {
        let png = Options::of(&[("format", json!("png"))]);
        assert_eq!(
            VideoStoryboard::check(&png).unwrap_err().code,
            Code::InvalidOptionValue
        );
        assert!(VideoStoryboard::check(&Options::of(&[("format", json!("webp"))])).is_ok());
    }
}
