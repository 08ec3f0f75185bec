//! Every GIF of the corpus through `gif-to-video` and the image commands, which read
//! it with one decoder.

use std::path::Path;

use image::GenericImageView;

use mediaedit::commands::{Command, Options};
use mediaedit::media::Media;

use super::images::{decode, first_frame};
use super::{
    assert_no_failures, grid, grid_distance, media, run_one, source, Corpus, Entry,
    MAX_GRID_DISTANCE,
};
use crate::helpers::{probe, video_stream};

#[tokio::test]
async fn every_gif_of_the_corpus_becomes_a_video_with_every_frame_for_its_own_delay() {
    let corpus = Corpus::load();
    let media = media();
    let dir = tempfile::tempdir().unwrap();
    let (mut checked, mut failures) = (0, Vec::new());
    for entry in corpus.of_kind("gif").filter(|e| e.ok) {
        checked += 1;
        if let Err(why) = check_gif(&media, &corpus.path(entry), entry, dir.path()).await {
            failures.push(format!("{}: {why}", entry.path));
        }
    }
    assert_no_failures("GIFs", checked, &failures);
}

async fn check_gif(media: &Media, path: &Path, entry: &Entry, out: &Path) -> Result<(), String> {
    let input = source(media, path)
        .await
        .map_err(|e| format!("not read: {e}"))?;
    let video = run_one(media, Command::GifToVideo, &input, &Options::default(), out)
        .await
        .map_err(|e| format!("gif-to-video failed: {e}"))?;
    let probed = probe(&video.path);
    let stream = video_stream(&probed);
    let frames: u64 = stream["nb_read_frames"].as_str().unwrap().parse().unwrap();
    if Some(frames) != entry.frames {
        return Err(format!("{frames} frames, not {}", entry.frames.unwrap()));
    }
    let seconds: f64 = probed["format"]["duration"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let expected = entry.seconds.unwrap();
    if (seconds - expected).abs() > 0.011 {
        return Err(format!("lasts {seconds} s, not {expected} s"));
    }
    let [w, h] = entry.size.unwrap();
    let even = |n: u32| u64::from((n / 2 * 2).max(2));
    let size = (
        stream["width"].as_u64().unwrap(),
        stream["height"].as_u64().unwrap(),
    );
    if size != (even(w), even(h)) {
        return Err(format!("{size:?}, not {:?}", (even(w), even(h))));
    }
    // H.264's 4:2:0 chroma spreads the colours of a GIF a few pixels across.
    if w < 16 || h < 16 {
        return Ok(());
    }
    let first = first_frame(&video.path, out)?;
    let distance = grid_distance(&grid(&first), entry.grid.as_ref().unwrap());
    if distance > MAX_GRID_DISTANCE {
        return Err(format!(
            "the first frame is {distance:.1} away from the reference"
        ));
    }
    Ok(())
}

/// The image commands read a GIF with the same decoder as `gif-to-video`: its first
/// frame as the reference shows it, its size, and every frame kept in an animated
/// output.
#[tokio::test]
async fn every_gif_of_the_corpus_comes_out_of_the_image_commands_as_the_reference_shows_it() {
    let corpus = Corpus::load();
    let media = media();
    let dir = tempfile::tempdir().unwrap();
    let (mut checked, mut failures) = (0, Vec::new());
    for (index, entry) in corpus.of_kind("gif").filter(|e| e.ok).enumerate() {
        checked += 1;
        let out = dir.path().join(index.to_string());
        std::fs::create_dir(&out).unwrap();
        if let Err(why) = check_image_commands(&media, &corpus.path(entry), entry, &out).await {
            failures.push(format!("{}: {why}", entry.path));
        }
    }
    assert_no_failures("GIFs through the image commands", checked, &failures);
}

async fn check_image_commands(
    media: &Media,
    path: &Path,
    entry: &Entry,
    out: &Path,
) -> Result<(), String> {
    let input = source(media, path)
        .await
        .map_err(|e| format!("not read: {e}"))?;
    let [w, h] = entry.size.unwrap();
    let frames = entry.frames.unwrap();
    // Colours of a picture a few pixels across spread in a lossy or requantised
    // output; its size and frames are still compared.
    let tiny = w < 16 || h < 16;
    for command in [Command::ResizeImage, Command::ImageToWebp] {
        let output = run_one(media, command, &input, &Options::default(), out)
            .await
            .map_err(|e| format!("{} failed: {e}", command.name()))?;
        let bytes = std::fs::read(&output.path).unwrap();
        let first = if bytes.starts_with(b"RIFF") {
            let frames = super::webp::frames(&bytes)?;
            image::DynamicImage::ImageRgba8(frames[0].0.clone())
        } else {
            decode(&output.path)?
        };
        if first.dimensions() != (w, h) {
            return Err(format!(
                "{} is {:?}, not {:?}",
                command.name(),
                first.dimensions(),
                (w, h)
            ));
        }
        let distance = grid_distance(&grid(&first), entry.grid.as_ref().unwrap());
        if distance > MAX_GRID_DISTANCE && !tiny {
            return Err(format!(
                "{}'s first frame is {distance:.1} away from the reference",
                command.name()
            ));
        }
        let count = frame_count(&bytes)?;
        if count != frames {
            return Err(format!(
                "{} has {count} frames, not {frames}",
                command.name()
            ));
        }
    }
    let options = Options::of(&[("fps", 10.0.into()), ("duration", 1.0.into())]);
    let video = run_one(media, Command::ImageToVideo, &input, &options, out)
        .await
        .map_err(|e| format!("image-to-video failed: {e}"))?;
    let first = first_frame(&video.path, out)?;
    let distance = grid_distance(&grid(&first), entry.grid.as_ref().unwrap());
    if distance > MAX_GRID_DISTANCE && !tiny {
        return Err(format!(
            "image-to-video's picture is {distance:.1} away from the reference"
        ));
    }
    Ok(())
}

/// The frames of a GIF or WebP output.
fn frame_count(bytes: &[u8]) -> Result<u64, String> {
    use image::AnimationDecoder;
    if !bytes.starts_with(b"GIF8") {
        return Ok(super::webp::frames(bytes)?.len() as u64);
    }
    let decoder = image::codecs::gif::GifDecoder::new(std::io::Cursor::new(bytes))
        .map_err(|e| e.to_string())?;
    Ok(decoder.into_frames().count() as u64)
}
