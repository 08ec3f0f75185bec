//! The video commands over every clip of the corpus.

use std::collections::BTreeSet;
use std::path::Path;

use mediaedit::commands::{Command, Options};
use mediaedit::media::{Media, MediaFile};
use serde_json::Value;

use super::images::decode;
use super::{assert_no_failures, media, run_all, run_one, source, Corpus, Entry};
use crate::helpers::{probe, video_stream};

/// Display aspects may differ by the rounding of a side to whole (or even) pixels.
const ASPECT_TOLERANCE: f64 = 0.02;

#[tokio::test]
async fn every_clip_of_the_corpus_keeps_its_display_aspect_frames_and_length() {
    let corpus = Corpus::load();
    let media = media();
    let (mut checked, mut failures) = (0, Vec::new());
    for entry in corpus.of_kind("video").filter(|e| e.ok) {
        checked += 1;
        let dir = tempfile::tempdir().unwrap();
        let input = source(&media, &corpus.path(entry)).await.unwrap();
        for why in check_clip(&media, &input, entry, dir.path()).await {
            failures.push(format!("{}: {why}", entry.path));
        }
    }
    assert_no_failures("clips", checked, &failures);
}

#[tokio::test]
async fn the_corpus_holds_clips_in_every_container_the_video_commands_read() {
    let corpus = Corpus::load();
    let media = media();
    let mut found = BTreeSet::new();
    for entry in corpus.of_kind("video").filter(|e| e.ok) {
        let input = source(&media, &corpus.path(entry)).await.unwrap();
        found.insert(input.format.extension());
    }
    let missing: Vec<_> = Command::VideoToWebm
        .inputs()
        .iter()
        .map(|format| format.extension())
        .filter(|extension| !found.contains(extension))
        .collect();
    assert!(
        missing.is_empty(),
        "no clip of the corpus is in {missing:?} (found {found:?})"
    );
}

async fn check_clip(media: &Media, input: &MediaFile, entry: &Entry, out: &Path) -> Vec<String> {
    let aspect = entry.aspect.unwrap();
    let seconds = entry.seconds.unwrap();
    let mut failures = Vec::new();
    let mut check = |command: &str, result: Result<(), String>| {
        if let Err(why) = result {
            failures.push(format!("{command}: {why}"));
        }
    };

    let gif = run_one(media, Command::VideoToGif, input, &Options::default(), out).await;
    check(
        "video-to-gif",
        gif.map_err(|e| e.to_string())
            .and_then(|f| same_aspect(display(&probe(&f.path))?, aspect)),
    );
    let webm = run_one(media, Command::VideoToWebm, input, &Options::default(), out).await;
    check(
        "video-to-webm",
        webm.map_err(|e| e.to_string()).and_then(|f| {
            let probed = probe(&f.path);
            same_aspect(display(&probed)?, aspect)?;
            same_length(&probed, seconds)
        }),
    );
    let twice = Options::of(&[("speed", 2.0.into())]);
    let speed = run_one(media, Command::ModifyVideoSpeed, input, &twice, out).await;
    check(
        "modify-video-speed",
        speed.map_err(|e| e.to_string()).and_then(|f| {
            let probed = probe(&f.path);
            same_aspect(display(&probed)?, aspect)?;
            same_length(&probed, seconds / 2.0)
        }),
    );
    // The largest clip's frames and Theora encode take the longest; the small clips
    // (one with non-square pixels) cover these two commands.
    if entry.frames.unwrap() <= 200 && aspect < 1.5 {
        let ogg = run_one(media, Command::VideoToOgg, input, &Options::default(), out).await;
        check(
            "video-to-ogg",
            ogg.map_err(|e| e.to_string()).and_then(|f| {
                let probed = probe(&f.path);
                same_aspect(display(&probed)?, aspect)?;
                same_length(&probed, seconds)
            }),
        );
        let frames = run_all(
            media,
            Command::ExtractFrames,
            input,
            &Options::default(),
            out,
        )
        .await;
        check(
            "extract-frames",
            frames.map_err(|e| e.to_string()).and_then(|frames| {
                if frames.len() as u64 != entry.frames.unwrap() {
                    return Err(format!(
                        "{} frames, not {}",
                        frames.len(),
                        entry.frames.unwrap()
                    ));
                }
                let first = decode(&frames[0].path)?;
                let (w, h) = (first.width(), first.height());
                same_aspect((f64::from(w), f64::from(h)), aspect)
            }),
        );
    }
    failures
}

/// The size of a probed output, which must have square pixels.
fn display(probed: &Value) -> Result<(f64, f64), String> {
    let stream = video_stream(probed);
    let sar = stream["sample_aspect_ratio"].as_str().unwrap_or("1:1");
    if !matches!(sar, "1:1" | "0:1") {
        return Err(format!(
            "its pixels are not square (sample aspect ratio {sar})"
        ));
    }
    Ok((
        stream["width"].as_f64().unwrap(),
        stream["height"].as_f64().unwrap(),
    ))
}

fn same_aspect((w, h): (f64, f64), aspect: f64) -> Result<(), String> {
    let found = w / h;
    if (found - aspect).abs() / aspect > ASPECT_TOLERANCE {
        return Err(format!(
            "display aspect {found:.3} ({w}x{h}), not {aspect:.3}"
        ));
    }
    Ok(())
}

fn same_length(probed: &Value, seconds: f64) -> Result<(), String> {
    let found: f64 = probed["format"]["duration"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    if (found - seconds).abs() > 0.1 {
        return Err(format!("lasts {found} s, not {seconds} s"));
    }
    Ok(())
}
