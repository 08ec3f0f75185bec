//! `video-scenes` and `video-storyboard` `at: scenes` on clips with cuts at known
//! frames, a slow pan, a 1 s dissolve and a 1 s fade through black (docs/API.md,
//! "Scenes"): every hard cut found within 2 frames, nothing else taken for one; a
//! poster per scene, from inside it.

use serde_json::{json, Value};

use crate::clips;
use crate::helpers::*;

on_both_backends!(every_hard_cut_is_a_chapter_with_a_poster_from_its_own_scene);

/// Frames a second of the clips.
const RATE: f64 = 25.0;

/// 160×120 at 25 fps, H.264: testsrc2 (moving) for 40 frames, SMPTE bars for 35, flat
/// blue for 40, testsrc for 30: cuts at frames 40, 75 and 115.
pub fn four_shots() -> Vec<u8> {
    let shots = [
        "testsrc2=s=160x120:r=25:d=1.6",
        "smptebars=s=160x120:r=25:d=1.4",
        "color=c=0x2040c0:s=160x120:r=25:d=1.6",
        "testsrc=s=160x120:r=25:d=1.2",
    ];
    lavfi_clip(&shots, "", "shots.mp4")
}

/// A slow pan over HD bars (1.6 px a frame) for 3 s dissolving over its last second
/// into testsrc2, which fades out over 0.5 s at its end (5 s in); SMPTE bars fading in
/// over 0.5 s, for 2 s; then a hard cut (frame 175) to testsrc for 1.2 s.
fn pan_fade_cut() -> Vec<u8> {
    let shots = [
        "smptehdbars=s=640x120:r=25:d=3,crop=160:120:'t*40':0",
        "testsrc2=s=160x120:r=25:d=3,fade=t=out:st=2.5:d=0.5",
        "smptebars=s=160x120:r=25:d=2,fade=t=in:d=0.5",
        "testsrc=s=160x120:r=25:d=1.2",
    ];
    let joined =
        "[s0][s1]xfade=transition=fade:duration=1:offset=2[faded];[faded][s2][s3]concat=n=3";
    lavfi_clip(&shots, joined, "pan.mp4")
}

/// The `shots` (lavfi sources) in yuv420p, joined by `joined` (reading `[s0]`…), or
/// concatenated when empty, encoded to H.264.
fn lavfi_clip(shots: &[&str], joined: &str, name: &str) -> Vec<u8> {
    let inputs: Vec<String> = shots
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{s},format=yuv420p,settb=AVTB[s{i}]"))
        .collect();
    let joined = if joined.is_empty() {
        let labels: String = (0..shots.len()).map(|i| format!("[s{i}]")).collect();
        format!("{labels}concat=n={}", shots.len())
    } else {
        joined.to_string()
    };
    let graph = format!("{};{joined}", inputs.join(";"));
    let args = [
        "-f",
        "lavfi",
        "-i",
        &graph,
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-f",
        "mp4",
    ];
    clips::ffmpeg(&args, name)
}

/// The cues of a VTT: start and end seconds, and the first line of the payload.
fn cues(vtt: &str) -> Vec<(f64, f64, String)> {
    let seconds = |stamp: &str| {
        let parts: Vec<f64> = stamp.split(':').map(|p| p.parse().unwrap()).collect();
        parts[0] * 3600.0 + parts[1] * 60.0 + parts[2]
    };
    let lines: Vec<&str> = vtt.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some((start, end)) = line.split_once(" --> ") {
            out.push((seconds(start), seconds(end), lines[i + 1].to_string()));
        }
    }
    out
}

/// Asserts `starts` (seconds) are the cuts at frames `expected` (and 0), each within
/// 2 frames.
fn assert_cuts(starts: &[f64], expected: &[u32], vtt: &str) {
    let mut wanted = vec![0.0];
    wanted.extend(expected.iter().map(|f| f64::from(*f) / RATE));
    assert_eq!(starts.len(), wanted.len(), "{vtt}");
    for (found, want) in starts.iter().zip(&wanted) {
        assert!(
            (found - want).abs() <= 2.0 / RATE,
            "{found} for {want}: {vtt}"
        );
    }
}

async fn scenes_of(app: &TestApp, src: &str, options: Value) -> (Value, Vec<String>, String) {
    let doc = app
        .run_done(edit(src, &["video-scenes"], Some(options)))
        .await;
    let urls: Vec<String> = doc["attributes"]["downloadUrls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().to_string())
        .collect();
    let vtt_url = urls.last().unwrap();
    let response = reqwest::get(vtt_url).await.unwrap();
    assert_eq!(response.headers()["content-type"], "text/vtt");
    let vtt = response.text().await.unwrap();
    assert!(vtt.starts_with("WEBVTT\n"), "{vtt}");
    (doc, urls, vtt)
}

fn close(seen: &[u8], expected: [u8; 3], by: i16) -> bool {
    seen.iter()
        .zip(expected)
        .all(|(a, b)| (i16::from(*a) - i16::from(b)).abs() < by)
}

async fn every_hard_cut_is_a_chapter_with_a_poster_from_its_own_scene(
    backend: crate::backends::Backend,
) {
    let app = spawn_app_on(backend, |_| {}).await;
    let src = app.fixtures.add("shots.mp4", four_shots());
    let (doc, urls, vtt) = scenes_of(&app, &src, json!({})).await;
    let found = cues(&vtt);
    let starts: Vec<f64> = found.iter().map(|c| c.0).collect();
    assert_cuts(&starts, &[40, 75, 115], &vtt);
    // End to end, named in order.
    for (n, pair) in found.windows(2).enumerate() {
        assert_eq!(pair[0].1, pair[1].0, "{vtt}");
        assert_eq!(pair[0].2, format!("Scene {}", n + 1));
    }
    assert!((found[3].1 - 5.8).abs() < 0.05, "{vtt}");

    // A poster per scene, then the chapters.
    assert_eq!(urls.len(), found.len() + 1, "{doc}");
    let outputs = doc["attributes"]["outputs"].as_array().unwrap();
    assert!(outputs[..4].iter().all(|o| o["format"] == "webp"), "{doc}");
    assert_eq!(outputs[4]["format"], "vtt", "{doc}");
    let mut posters = Vec::new();
    for url in &urls[..4] {
        let bytes = app.bytes_of(url).await;
        let picture = image::load_from_memory(&bytes).unwrap().to_rgb8();
        assert_eq!(picture.dimensions(), (160, 120));
        posters.push(picture);
    }
    // The bars' poster has their grey top-left bar; the flat shot's is blue.
    assert!(close(&posters[1].get_pixel(5, 5).0, [191, 191, 191], 40));
    assert!(close(
        &posters[2].get_pixel(80, 60).0,
        [0x20, 0x40, 0xc0],
        24
    ));
    assert!(!close(&posters[0].get_pixel(5, 5).0, [191, 191, 191], 40));

    // Shots under 2 s merged into the one before: 0–75 (1.6 + 1.4 s), 75–145.
    let (_, urls, vtt) = scenes_of(&app, &src, json!({"minSceneSeconds": 2})).await;
    let starts: Vec<f64> = cues(&vtt).iter().map(|c| c.0).collect();
    assert_cuts(&starts, &[75], &vtt);
    assert_eq!(urls.len(), 3);
}

#[tokio::test]
async fn a_slow_pan_a_dissolve_and_a_fade_are_no_cuts_but_the_hard_cut_after_them_is() {
    let app = spawn_app().await;
    let src = app.fixtures.add("pan.mp4", pan_fade_cut());
    let (_, urls, vtt) = scenes_of(&app, &src, json!({"format": "jpeg"})).await;
    let starts: Vec<f64> = cues(&vtt).iter().map(|c| c.0).collect();
    assert_cuts(&starts, &[175], &vtt);
    assert_eq!(urls.len(), 3);
    assert!(urls[0].contains(".jpeg"), "{urls:?}");
}

#[tokio::test]
async fn a_storyboard_at_scenes_has_one_tile_per_scene_spanning_it() {
    let app = spawn_app().await;
    let src = app.fixtures.add("shots.mp4", four_shots());
    let options = json!({"at": "scenes", "tileWidth": 80, "count": 7});
    let doc = app
        .run_done(edit(&src, &["video-storyboard"], Some(options)))
        .await;
    let urls = doc["attributes"]["downloadUrls"].as_array().unwrap();
    assert_eq!(urls.len(), 2, "{doc}");
    let sheet = app.bytes_of(urls[0].as_str().unwrap()).await;
    let vtt = reqwest::get(urls[1].as_str().unwrap())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let found = cues(&vtt);
    let starts: Vec<f64> = found.iter().map(|c| c.0).collect();
    assert_cuts(&starts, &[40, 75, 115], &vtt);
    let picture = image::load_from_memory(&sheet).unwrap().to_rgb8();
    // Four tiles of 80×60: two columns, two rows.
    assert_eq!(picture.dimensions(), (160, 120), "{vtt}");
    let third = found[2].2.split("#xywh=").nth(1).unwrap();
    assert_eq!(third, "0,60,80,60", "{vtt}");
    assert!(close(&picture.get_pixel(40, 90).0, [0x20, 0x40, 0xc0], 24));
}
