//! The last frame of each of Pillow's APNG test files — the blend and dispose
//! operations, the pixel modes, data split over several `fdAT` chunks — as Pillow's own
//! tests (`Tests/test_file_apng.py`) expect it, through every command that animates:
//! `resize-image` (an APNG, lossless: the pixels exactly), `image-to-webp` (lossy) and
//! `gif-to-video` (flattened onto white, H.264).

use std::io::Cursor;
use std::path::Path;

use image::codecs::png::PngDecoder;
use image::{AnimationDecoder, RgbaImage};
use mediaedit::commands::{Command, Options};
use mediaedit::media::Media;

use super::images::decode;
use super::{assert_no_failures, media, run_one, source, Corpus};

const GREEN: [u8; 4] = [0, 255, 0, 255];
const CLEAR: [u8; 4] = [0, 0, 0, 0];

/// Each file with what its last frame shows at (0, 0) and at (64, 32).
const LAST_FRAMES: &[(&str, [u8; 4], [u8; 4])] = &[
    ("split_fdat", GREEN, GREEN),
    ("split_fdat_zero_chunk", GREEN, GREEN),
    ("dispose_op_none", GREEN, GREEN),
    ("dispose_op_background", CLEAR, CLEAR),
    ("dispose_op_background_final", GREEN, GREEN),
    ("dispose_op_previous", GREEN, GREEN),
    ("dispose_op_previous_final", GREEN, GREEN),
    ("dispose_op_previous_first", CLEAR, CLEAR),
    ("dispose_op_none_region", GREEN, GREEN),
    ("dispose_op_background_before_region", CLEAR, CLEAR),
    ("dispose_op_background_region", [0, 0, 255, 255], CLEAR),
    ("dispose_op_previous_region", GREEN, GREEN),
    ("blend_op_source_solid", GREEN, GREEN),
    ("blend_op_source_transparent", CLEAR, CLEAR),
    (
        "blend_op_source_near_transparent",
        [0, 255, 0, 2],
        [0, 255, 0, 2],
    ),
    ("blend_op_over", GREEN, GREEN),
    ("blend_op_over_near_transparent", [0, 255, 0, 97], GREEN),
    ("fctl_actl", GREEN, GREEN),
    ("mode_16bit", [0, 0, 128, 191], [0, 0, 128, 191]),
    ("mode_grayscale", [128, 128, 128, 255], [255, 255, 255, 255]),
    (
        "mode_grayscale_alpha",
        [128, 128, 128, 191],
        [128, 128, 128, 191],
    ),
    ("mode_palette", GREEN, GREEN),
    ("mode_palette_alpha", GREEN, GREEN),
    (
        "mode_palette_1bit_alpha",
        [0, 0, 255, 128],
        [0, 0, 255, 128],
    ),
];

#[tokio::test]
async fn every_apng_ends_on_the_frame_pillow_shows_in_every_command() {
    let corpus = Corpus::load();
    let media = media();
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (name, at_origin, at_middle) in LAST_FRAMES {
        let path = format!("pillow/apng/{name}.png");
        let entry = corpus.entries.iter().find(|e| e.path == path).unwrap();
        let expected = [((0, 0), *at_origin), ((64, 32), *at_middle)];
        if let Err(why) = check(&media, &corpus.path(entry), &[&expected], dir.path()).await {
            failures.push(format!("{path}: {why}"));
        }
    }
    assert_no_failures("APNG last frames", LAST_FRAMES.len(), &failures);
}

/// The previous frame's `dispose_op` decides what the next one is laid on (Pillow's
/// `test_apng_dispose_op_previous_frame`): red at (0, 0) in the end.
#[tokio::test]
async fn the_dispose_op_of_the_frame_before_is_the_one_applied() {
    let corpus = Corpus::load();
    let media = media();
    let dir = tempfile::tempdir().unwrap();
    let entry = corpus
        .entries
        .iter()
        .find(|e| e.path == "pillow/apng/dispose_op_previous_frame.png")
        .unwrap();
    let expected = [((0, 0), [255, 0, 0, 255])];
    check(&media, &corpus.path(entry), &[&expected], dir.path())
        .await
        .unwrap();
}

const RED: [u8; 4] = [255, 0, 0, 255];

/// Every frame of the dispose_op files as the APNG specification (and ffmpeg, and
/// Pillow seeking to each frame afresh) lays them, at (0, 0) and (64, 32): what
/// `previous` puts back and what `background` clears reach the frame after, whatever
/// the output format (an animated WebP's folded frames included). Pillow stepping
/// through the frames one by one shows `dispose_op_previous`'s last frame red: once
/// a frame blended over is loaded, its reader puts back the frame itself.
#[tokio::test]
async fn every_frame_of_the_dispose_ops_is_laid_as_the_specification_says() {
    let corpus = Corpus::load();
    let media = media();
    let dir = tempfile::tempdir().unwrap();
    let files: &[(&str, &[&Expected])] = &[
        (
            "dispose_op_background",
            &[
                &[((0, 0), RED), ((64, 32), RED)],
                &[((0, 0), RED), ((64, 32), RED)],
                &[((0, 0), CLEAR), ((64, 32), CLEAR)],
            ],
        ),
        (
            "dispose_op_previous",
            &[
                &[((0, 0), GREEN), ((64, 32), GREEN)],
                &[((0, 0), RED), ((64, 32), RED)],
                &[((0, 0), GREEN), ((64, 32), GREEN)],
            ],
        ),
        (
            "dispose_op_previous_region",
            &[
                &[((0, 0), GREEN), ((64, 32), GREEN)],
                &[((0, 0), GREEN), ((64, 32), RED)],
                &[((0, 0), GREEN), ((64, 32), GREEN)],
            ],
        ),
    ];
    let mut failures = Vec::new();
    for (name, frames) in files {
        let path = format!("pillow/apng/{name}.png");
        let entry = corpus.entries.iter().find(|e| e.path == path).unwrap();
        if let Err(why) = check(&media, &corpus.path(entry), frames, dir.path()).await {
            failures.push(format!("{path}: {why}"));
        }
    }
    assert_no_failures("APNG frames", files.len(), &failures);
}

type Expected = [((u32, u32), [u8; 4])];

/// Runs `path` through every command that animates; the last `expected.len()`
/// frames of each output against `expected`, in order.
async fn check(
    media: &Media,
    path: &Path,
    expected: &[&Expected],
    out: &Path,
) -> Result<(), String> {
    let input = source(media, path)
        .await
        .map_err(|e| format!("not read: {e}"))?;
    let run = |command| {
        let input = input.clone();
        async move {
            run_one(media, command, &input, &Options::default(), out)
                .await
                .map_err(|e| format!("{} failed: {e}", command.name()))
        }
    };
    let last = |frames: Vec<RgbaImage>| {
        let skip = frames.len().checked_sub(expected.len());
        let skip = skip.ok_or_else(|| format!("{} frames", frames.len()))?;
        Ok::<_, String>(frames.into_iter().skip(skip).zip(expected))
    };
    let apng = run(Command::ResizeImage).await?;
    for (frame, expected) in last(frames(&std::fs::read(&apng.path).unwrap(), true)?)? {
        compare("resize-image", &frame, expected, 1, false)?;
    }
    let webp = run(Command::ImageToWebp).await?;
    for (frame, expected) in last(frames(&std::fs::read(&webp.path).unwrap(), false)?)? {
        compare("image-to-webp", &frame, expected, 12, false)?;
    }
    let video = run(Command::GifToVideo).await?;
    for (frame, expected) in last(video_frames(&video.path, out)?)? {
        compare("gif-to-video", &frame, expected, 12, true)?;
    }
    Ok(())
}

/// The frames of an APNG (`png`, read by the `image` crate) or WebP (read by libwebp)
/// output as a viewer shows them.
fn frames(bytes: &[u8], png: bool) -> Result<Vec<RgbaImage>, String> {
    if !png {
        let frames = super::webp::frames(bytes)?;
        return Ok(frames.into_iter().map(|(frame, _)| frame).collect());
    }
    let decoder = PngDecoder::new(Cursor::new(bytes)).map_err(|e| e.to_string())?;
    if !decoder.is_apng().map_err(|e| e.to_string())? {
        return Err("the APNG output is a still PNG".into());
    }
    let frames = decoder.apng().map_err(|e| e.to_string())?.into_frames();
    let frames = frames.collect_frames().map_err(|e| e.to_string())?;
    Ok(frames.into_iter().map(|f| f.into_buffer()).collect())
}

/// Every frame of a video, decoded by ffmpeg.
fn video_frames(video: &Path, dir: &Path) -> Result<Vec<RgbaImage>, String> {
    let frames = dir.join(format!("frames-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir(&frames).map_err(|e| e.to_string())?;
    let status = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(video)
        // One picture per frame of the stream, none repeated or dropped.
        .args(["-fps_mode", "passthrough"])
        .arg(frames.join("%05d.png"))
        .status()
        .map_err(|e| e.to_string())?;
    if !status.success() {
        return Err("ffmpeg could not decode the output's frames".into());
    }
    let mut paths: Vec<_> = std::fs::read_dir(&frames)
        .map_err(|e| e.to_string())?
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    let decoded = paths.iter().map(|p| Ok(decode(p)?.to_rgba8())).collect();
    std::fs::remove_dir_all(&frames).map_err(|e| e.to_string())?;
    decoded
}

/// `image`'s pixels against `expected`, within `tolerance` a channel: as RGBA (colour
/// only where a pixel is not wholly transparent), or flattened onto white (`white`:
/// a video's frame against the expectation laid on white, as the video lays it).
fn compare(
    command: &str,
    image: &RgbaImage,
    expected: &Expected,
    tolerance: u8,
    white: bool,
) -> Result<(), String> {
    for &((x, y), want) in expected {
        let got = image.get_pixel(x, y).0;
        let (got, want) = if white {
            (on_white(got), on_white(want))
        } else {
            (got, want)
        };
        let channels = if want[3] == 0 { 3..4 } else { 0..4 };
        if channels
            .clone()
            .any(|c| got[c].abs_diff(want[c]) > tolerance)
        {
            return Err(format!(
                "{command}'s frame is {got:?} at ({x}, {y}), not {want:?}"
            ));
        }
    }
    Ok(())
}

fn on_white(p: [u8; 4]) -> [u8; 4] {
    let a = u32::from(p[3]);
    let c = |v: u8| ((u32::from(v) * a + 255 * (255 - a) + 127) / 255) as u8;
    [c(p[0]), c(p[1]), c(p[2]), 255]
}
