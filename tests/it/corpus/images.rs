//! `resize-image`, `image-to-webp` and `image-to-video` over every still of the corpus.

use std::path::Path;

use image::{DynamicImage, GenericImageView, ImageReader};
use mediaedit::commands::{Command, Options};
use mediaedit::media::{Media, MediaFile};

use super::{
    assert_no_failures, grid, grid_distance, media, run_one, source, Corpus, Entry,
    MAX_GRID_DISTANCE,
};
use crate::helpers::{probe, video_stream};

#[tokio::test]
async fn every_image_of_the_corpus_comes_out_upright_with_its_colours_and_transparency() {
    let corpus = Corpus::load();
    let media = media();
    let dir = tempfile::tempdir().unwrap();
    let (mut checked, mut failures) = (0, Vec::new());
    for (index, entry) in corpus.of_kind("image").filter(|e| e.ok).enumerate() {
        checked += 1;
        let out = dir.path().join(index.to_string());
        std::fs::create_dir(&out).unwrap();
        if let Err(why) = check_image(&media, &corpus.path(entry), entry, index, &out).await {
            failures.push(format!("{}: {why}", entry.path));
        }
    }
    assert_no_failures("images", checked, &failures);
}

async fn check_image(
    media: &Media,
    path: &Path,
    entry: &Entry,
    index: usize,
    out: &Path,
) -> Result<(), String> {
    let input = source(media, path)
        .await
        .map_err(|e| format!("not read: {e}"))?;
    let [w, h] = entry.size.unwrap();
    // Halving exercises the shrinking decoders; a picture a few pixels across would
    // lose what the 8x8 comparison looks at.
    let scale = if w >= 32 && h >= 32 { 0.5 } else { 1.0 };
    let resized = media
        .scale_image(&input, scale, None, out)
        .await
        .map_err(|e| format!("resize-image failed: {e}"))?;
    let expected = (
        (f64::from(w) * scale).round() as u32,
        (f64::from(h) * scale).round() as u32,
    );
    let lossy = input.format != mediaedit::media::MediaFormat::Png;
    compare(
        "resize-image",
        &decode(&resized.path)?,
        expected,
        entry,
        lossy,
    )?;

    let webp = media
        .reencode_as_webp(&input, out)
        .await
        .map_err(|e| format!("image-to-webp failed: {e}"))?;
    let webp = decode(&webp.path)?;
    if entry.default_image == Some(true) {
        // An animated WebP leaves out an APNG's default image that is not a frame of
        // its animation (Pillow's frame 0, which the reference describes), as players
        // leave it out: it starts with the animation's first frame. Its frames are
        // compared with what Pillow's own tests expect in `apng_frames`.
        if webp.dimensions() != (w, h) {
            return Err(format!(
                "image-to-webp is {:?}, not {:?}",
                webp.dimensions(),
                (w, h)
            ));
        }
    } else {
        compare("image-to-webp", &webp, (w, h), entry, true)?;
    }

    // A video per file would take minutes; one in ten still covers every kind of file.
    if index % 10 == 0 {
        check_video(media, &input, entry, out).await?;
    }
    Ok(())
}

/// An image-to-video output: the upright size (rounded down to even), one second at
/// 10 fps, and its first frame showing the picture.
async fn check_video(
    media: &Media,
    input: &MediaFile,
    entry: &Entry,
    out: &Path,
) -> Result<(), String> {
    let options = Options::of(&[("fps", 10.0.into()), ("duration", 1.0.into())]);
    let video = run_one(media, Command::ImageToVideo, input, &options, out)
        .await
        .map_err(|e| format!("image-to-video failed: {e}"))?;
    let probed = probe(&video.path);
    let stream = video_stream(&probed);
    let [w, h] = entry.size.unwrap();
    let size = (
        stream["width"].as_u64().unwrap(),
        stream["height"].as_u64().unwrap(),
    );
    let even = |n: u32| u64::from((n / 2 * 2).max(2));
    // Within the 4K box (3840×2160, turned for portraits) the size is only made even.
    let (long, short) = (w.max(h), w.min(h));
    if long <= 3840 && short <= 2160 && size != (even(w), even(h)) {
        return Err(format!(
            "image-to-video is {size:?}, not {:?}",
            (even(w), even(h))
        ));
    }
    if stream["nb_read_frames"] != "10" {
        return Err(format!(
            "image-to-video has {} frames, not 10",
            stream["nb_read_frames"]
        ));
    }
    let first = first_frame(&video.path, out)?;
    let distance = grid_distance(&grid(&first), entry.grid.as_ref().unwrap());
    if distance > MAX_GRID_DISTANCE && w >= 16 && h >= 16 {
        return Err(format!(
            "image-to-video's picture is {distance:.1} away from the reference"
        ));
    }
    Ok(())
}

/// Compares an output with the reference: its size, its colours, its transparency.
/// Colours are not compared for a lossy output smaller than 16 pixels on a side:
/// 4:2:0 chroma spreads a 3-pixel picture's colours over its neighbours by design.
fn compare(
    command: &str,
    output: &DynamicImage,
    size: (u32, u32),
    entry: &Entry,
    lossy: bool,
) -> Result<(), String> {
    if output.dimensions() != size {
        return Err(format!(
            "{command} is {:?}, not {size:?}",
            output.dimensions()
        ));
    }
    let tiny = size.0 < 16 || size.1 < 16;
    let distance = grid_distance(&grid(output), entry.grid.as_ref().unwrap());
    if distance > MAX_GRID_DISTANCE && !(lossy && tiny) {
        return Err(format!(
            "{command}'s picture is {distance:.1} away from the reference"
        ));
    }
    // Every source with transparency is a PNG or a WebP, whose outputs here keep it.
    let transparent =
        output.color().has_alpha() && output.to_rgba8().pixels().any(|p| p.0[3] < 255);
    if entry.alpha == Some(true) && !transparent {
        return Err(format!("{command} lost the transparency"));
    }
    Ok(())
}

pub fn decode(path: &Path) -> Result<DynamicImage, String> {
    let head = std::fs::read(path).map_err(|e| e.to_string())?;
    if head.get(4..12) == Some(b"ftypavif") {
        return Ok(crate::fixtures::decode_avif(path));
    }
    ImageReader::open(path)
        .and_then(|r| r.with_guessed_format())
        .map_err(|e| e.to_string())?
        .decode()
        .map_err(|e| format!("the output does not decode: {e}"))
}

/// The first frame of a video, decoded by ffmpeg.
pub fn first_frame(video: &Path, dir: &Path) -> Result<DynamicImage, String> {
    let png = dir.join(format!("first-{}.png", uuid::Uuid::new_v4().simple()));
    let status = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(video)
        .args(["-frames:v", "1"])
        .arg(&png)
        .status()
        .map_err(|e| e.to_string())?;
    if !status.success() {
        return Err("ffmpeg could not decode the output's first frame".into());
    }
    decode(&png)
}
