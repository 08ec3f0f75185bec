//! `gif-to-video` over every GIF of the corpus.

use std::path::Path;

use mediaedit::commands::{Command, Options};
use mediaedit::media::Media;

use super::images::first_frame;
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
