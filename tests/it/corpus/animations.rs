//! Every animated WebP and APNG of the corpus keeps its animation: `resize-image` (in
//! the source's format), `image-to-webp` and `gif-to-video` give every frame for its
//! own delay, as Pillow reads them.

use std::io::Cursor;
use std::path::Path;

use image::codecs::png::PngDecoder;
use image::codecs::webp::WebPDecoder;
use image::AnimationDecoder;
use mediaedit::commands::{Command, Options};
use mediaedit::media::Media;

use super::{assert_no_failures, media, run_one, source, Corpus, Entry};
use crate::helpers::{probe, video_stream};

#[tokio::test]
async fn every_animation_of_the_corpus_keeps_its_frames_and_delays() {
    let corpus = Corpus::load();
    let media = media();
    let dir = tempfile::tempdir().unwrap();
    let (mut checked, mut failures) = (0, Vec::new());
    let animated = corpus
        .of_kind("image")
        .filter(|e| e.ok && e.delays.is_some());
    for (index, entry) in animated.enumerate() {
        checked += 1;
        let out = dir.path().join(index.to_string());
        std::fs::create_dir(&out).unwrap();
        if let Err(why) = check(&media, &corpus.path(entry), entry, &out).await {
            failures.push(format!("{}: {why}", entry.path));
        }
    }
    assert!(checked >= 30, "only {checked} animations in the corpus");
    assert_no_failures("animations", checked, &failures);
}

async fn check(media: &Media, path: &Path, entry: &Entry, out: &Path) -> Result<(), String> {
    let input = source(media, path)
        .await
        .map_err(|e| format!("not read: {e}"))?;
    let delays = entry.delays.as_deref().unwrap();
    // Pillow's frame 0 of an APNG whose default image is not in the animation is that
    // image, lasting nothing; players (and an APNG reader) show only the animation, and
    // so does every output: an animated WebP with it would flash it for 100 ms.
    let played = if entry.default_image == Some(true) {
        &delays[1..]
    } else {
        delays
    };
    if played.len() < 2 {
        // One animation frame besides a separate default image: no animation to keep,
        // and a still to every command (the images test checks it as one).
        return Ok(());
    }
    let run = |command, options: Options| {
        let input = input.clone();
        async move {
            run_one(media, command, &input, &options, out)
                .await
                .map_err(|e| format!("{} failed: {e}", command.name()))
        }
    };

    let resized = run(Command::ResizeImage, Options::default()).await?;
    let bytes = std::fs::read(&resized.path).unwrap();
    let got = if bytes.starts_with(b"\x89PNG") {
        apng_delays(&bytes)?
    } else {
        webp_delays(&bytes)?
    };
    // An APNG output keeps the default image apart (as its own default image), and an
    // animated WebP leaves it out: both have the animation's frames only.
    compare("resize-image", &got, played)?;

    let webp = run(Command::ImageToWebp, Options::default()).await?;
    let got = webp_delays(&std::fs::read(&webp.path).unwrap())?;
    compare("image-to-webp", &got, played)?;

    let video = run(Command::GifToVideo, Options::default()).await?;
    let probed = probe(&video.path);
    let frames = video_stream(&probed)["nb_read_frames"]
        .as_str()
        .unwrap()
        .to_owned();
    if frames != played.len().to_string() {
        return Err(format!(
            "gif-to-video has {frames} frames, not {}",
            played.len()
        ));
    }
    // Delays of 10 ms or less play as 100 ms, as browsers play them.
    let expected: f64 = played
        .iter()
        .map(|&d| if d <= 10.0 { 100.0 } else { d })
        .sum();
    let seconds: f64 = probed["format"]["duration"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    if (seconds * 1000.0 - expected).abs() > 11.0 {
        return Err(format!(
            "gif-to-video lasts {seconds} s, not {} s",
            expected / 1000.0
        ));
    }
    Ok(())
}

/// The same number of frames, and delays adding up to the same within a millisecond a
/// frame (WebP stores whole milliseconds, APNG fractions). A frame identical to the one
/// before stays a frame of its own (libwebp's encoder would fold it into that one).
fn compare(command: &str, got: &[f64], expected: &[f64]) -> Result<(), String> {
    if got.len() != expected.len() {
        return Err(format!(
            "{command} has {} frames, not {}",
            got.len(),
            expected.len()
        ));
    }
    let (total, wanted) = (got.iter().sum::<f64>(), expected.iter().sum::<f64>());
    if (total - wanted).abs() > expected.len() as f64 + 1.0 {
        return Err(format!(
            "{command}'s delays add up to {total} ms, not {wanted} ms"
        ));
    }
    Ok(())
}

fn delays_of<'a>(frames: image::Frames<'a>) -> Result<Vec<f64>, String> {
    frames
        .map(|frame| {
            let frame = frame.map_err(|e| format!("an output frame does not decode: {e}"))?;
            let (numer, denom) = frame.delay().numer_denom_ms();
            Ok(f64::from(numer) / f64::from(denom.max(1)))
        })
        .collect()
}

fn webp_delays(bytes: &[u8]) -> Result<Vec<f64>, String> {
    let decoder = WebPDecoder::new(Cursor::new(bytes)).map_err(|e| e.to_string())?;
    if !decoder.has_animation() {
        return Ok(vec![0.0]);
    }
    delays_of(decoder.into_frames())
}

fn apng_delays(bytes: &[u8]) -> Result<Vec<f64>, String> {
    let decoder = PngDecoder::new(Cursor::new(bytes)).map_err(|e| e.to_string())?;
    if !decoder.is_apng().map_err(|e| e.to_string())? {
        return Ok(vec![0.0]);
    }
    delays_of(decoder.apng().map_err(|e| e.to_string())?.into_frames())
}
