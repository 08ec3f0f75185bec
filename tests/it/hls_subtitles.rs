//! `video-to-hls` with a subtitles asset (docs/API.md, "Subtitles"): a segmented
//! WebVTT rendition beside the ladder, named in the master, reached through the
//! signed URLs on both backends, and shown by hls.js (its full build, fetched from npm by
//! `scripts/hlsjs.sh`: the playground's copy is the light build, without subtitles).

use serde_json::{json, Value};

use crate::clips;
use crate::helpers::*;

on_both_backends!(the_master_names_a_segmented_webvtt_rendition_whose_cues_download);

const SRT: &str =
    "1\n00:00:01,000 --> 00:00:02,000\nFirst\n\n2\n00:00:05,500 --> 00:00:06,500\nAcross the cut\n";

/// The URI of the `#EXT-X-MEDIA` line of `master`.
fn media_uri(master: &str) -> String {
    let line = master
        .lines()
        .find(|l| l.starts_with("#EXT-X-MEDIA:TYPE=SUBTITLES"))
        .unwrap_or_else(|| panic!("no subtitles rendition: {master}"));
    let start = line.find("URI=\"").unwrap() + 5;
    line[start..start + line[start..].find('"').unwrap()].to_string()
}

async fn text_of(url: &str) -> String {
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status(), 200, "{url}");
    response.text().await.unwrap()
}

async fn the_master_names_a_segmented_webvtt_rendition_whose_cues_download(
    backend: crate::backends::Backend,
) {
    let app = spawn_app_on(backend, |_| {}).await;
    // 8 s at 10 fps: two segments (6 s and 2 s).
    let video = app
        .fixtures
        .add("a.mp4", clips::clip("320x240", 10, 8.0, false, "mp4"));
    let srt = app.fixtures.add("cues.srt", SRT.as_bytes().to_vec());
    let body = json!({
        "assets": [{"type": "video", "src": video}, {"type": "subtitles", "src": srt}],
        "commands": ["video-to-hls"],
        "options": {"subtitlesLanguage": "pt-BR"},
    });
    let doc = app.run_done(body).await;
    let master = text_of(doc["attributes"]["downloadUrls"][0].as_str().unwrap()).await;
    assert!(
        master.contains("TYPE=SUBTITLES,GROUP-ID=\"subs\""),
        "{master}"
    );
    assert!(master.contains("LANGUAGE=\"pt-BR\""), "{master}");
    let variants = master
        .lines()
        .filter(|l| l.starts_with("#EXT-X-STREAM-INF:"));
    assert!(variants.clone().count() >= 1);
    assert!(
        variants
            .into_iter()
            .all(|l| l.contains("SUBTITLES=\"subs\"")),
        "{master}"
    );
    let playlist = text_of(&media_uri(&master)).await;
    let segments: Vec<&str> = playlist.lines().filter(|l| l.starts_with("http")).collect();
    assert_eq!(segments.len(), 2, "{playlist}");
    let first = text_of(segments[0]).await;
    let second = text_of(segments[1]).await;
    for vtt in [&first, &second] {
        assert!(
            vtt.starts_with("WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000\n"),
            "{vtt}"
        );
    }
    assert!(
        first.contains("00:00:01.000 --> 00:00:02.000\nFirst"),
        "{first}"
    );
    // A cue across the cut at 6 s is in both segments, at its time in the whole.
    assert!(
        first.contains("00:00:05.500 --> 00:00:06.500\nAcross the cut"),
        "{first}"
    );
    assert!(!second.contains("First"), "{second}");
    assert!(
        second.contains("00:00:05.500 --> 00:00:06.500\nAcross the cut"),
        "{second}"
    );

    // A bad language tag is refused at creation.
    let body = json!({
        "assets": [{"type": "video", "src": video}, {"type": "subtitles", "src": srt}],
        "commands": ["video-to-hls"],
        "options": {"subtitlesLanguage": "en\",X"},
    });
    let doc: Value = app.post_edit(body).await.json().await.unwrap();
    assert_eq!(doc["errors"][0]["code"], "invalid_option_value", "{doc}");
}

/// A trim before the ladder moves the rendition's cues with the picture, and hls.js in
/// Chromium shows them at their new times.
#[tokio::test]
async fn a_trimmed_ladder_s_rendition_holds_the_cues_of_the_part_moved_to_its_start() {
    let app = spawn_app().await;
    let video = app
        .fixtures
        .add("a.mp4", clips::clip("320x240", 10, 8.0, false, "mp4"));
    let srt = app.fixtures.add("cues.srt", SRT.as_bytes().to_vec());
    let body = json!({
        "assets": [{"type": "video", "src": video}, {"type": "subtitles", "src": srt}],
        "commands": ["trim-video", "video-to-hls"],
        "options": {"start": 5},
    });
    let doc = app.run_done(body).await;
    let master = text_of(doc["attributes"]["downloadUrls"][0].as_str().unwrap()).await;
    let playlist = text_of(&media_uri(&master)).await;
    let segment = playlist.lines().find(|l| l.starts_with("http")).unwrap();
    let vtt = text_of(segment).await;
    assert!(
        vtt.contains("00:00:00.500 --> 00:00:01.500\nAcross the cut"),
        "{vtt}"
    );
    assert!(!vtt.contains("First"), "{vtt}");
    assert!(
        master.contains("LANGUAGE=\"und\""),
        "the default language: {master}"
    );

    let hls_js = npm_player("hlsjs.sh").await;
    let master_url = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
    let seen = run_script("hls_player.py", &[hls_js.as_str(), master_url]).await;
    assert_eq!(seen["subtitle_tracks"], 1, "{seen}");
    let tracks = seen["cues"].as_array().unwrap();
    let cues: Vec<&Value> = tracks
        .iter()
        .filter(|t| t[0] == "subtitles" && t[1] == "und")
        .flat_map(|t| t[3].as_array().into_iter().flatten())
        .collect();
    let shown = cues.iter().find(|c| c[2] == "Across the cut");
    let shown = shown.unwrap_or_else(|| panic!("no cue shown: {seen}"));
    let (start, end) = (shown[0].as_f64().unwrap(), shown[1].as_f64().unwrap());
    assert!(
        (start - 0.5).abs() < 0.1 && (end - 1.5).abs() < 0.1,
        "{seen}"
    );
    assert!(!cues.iter().any(|c| c[2] == "First"), "{seen}");
}
