//! `video-to-hls` with `dash: true` (docs/API.md, "DASH"): a DASH manifest after the
//! master in `downloadUrls`, naming exactly the segments the HLS playlists name (no
//! second copy stored), read by ffprobe, copied whole by the result cache, and played
//! by dash.js in Chromium from another origin, subtitles included, on both backends.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::archives::read_archive;
use crate::clips;
use crate::dry_run::dry_run;
use crate::helpers::*;

on_both_backends!(dash_js_on_another_origin_plays_a_manifest_over_the_hls_segments);

const SRT: &str =
    "1\n00:00:00,500 --> 00:00:02,000\nFirst\n\n2\n00:00:05,500 --> 00:00:06,500\nAcross the cut\n";

async fn text_of(url: &str) -> (String, String) {
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status(), 200, "{url}");
    let kind = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    (kind, response.text().await.unwrap())
}

/// `url` without its query (the signature): the object it names.
fn object(url: &str) -> String {
    let path = url.split('?').next().unwrap();
    path[path.find("/v1/files/").unwrap() + "/v1/files/".len()..].to_string()
}

/// The values of attribute `name` in an XML text, unescaped.
fn xml_values(xml: &str, name: &str) -> Vec<String> {
    let pattern = format!(" {name}=\"");
    xml.match_indices(&pattern)
        .map(|(at, _)| {
            let rest = &xml[at + pattern.len()..];
            rest[..rest.find('"').unwrap()].replace("&amp;", "&")
        })
        .collect()
}

/// Every object the HLS output reaches from its master: media playlists, init
/// sections, segments (the subtitles' included).
async fn hls_objects(master_url: &str) -> BTreeSet<String> {
    let (_, master) = text_of(master_url).await;
    let mut found = BTreeSet::new();
    let playlists = master
        .lines()
        .filter_map(|line| match line.starts_with('#') {
            false if line.starts_with("http") => Some(line.to_string()),
            true => line
                .split("URI=\"")
                .nth(1)
                .map(|r| r[..r.find('"').unwrap()].to_string()),
            false => None,
        });
    for playlist in playlists.collect::<Vec<_>>() {
        let (_, text) = text_of(&playlist).await;
        for line in text.lines() {
            let uri = match line.split("URI=\"").nth(1) {
                Some(rest) => &rest[..rest.find('"').unwrap()],
                None if line.starts_with("http") => line,
                None => continue,
            };
            found.insert(object(uri));
        }
    }
    found
}

async fn dash_js_on_another_origin_plays_a_manifest_over_the_hls_segments(
    backend: crate::backends::Backend,
) {
    let app = spawn_app_on(backend, |_| {}).await;
    // 640×480: the 480p and 360p rungs. 7 s at 10 fps: segments of 6 s and 1 s.
    let video = app
        .fixtures
        .add("a.mp4", clips::clip("640x480", 10, 7.0, true, "mp4"));
    let srt = app.fixtures.add("cues.srt", SRT.as_bytes().to_vec());
    let body = json!({
        "assets": [{"type": "video", "src": video}, {"type": "subtitles", "src": srt}],
        "commands": ["video-to-hls"],
        "options": {"dash": true, "subtitlesLanguage": "en"},
    });
    let (status, plan) = dry_run(&app, "dryRun=true", &body).await;
    assert_eq!(status, 200, "{plan}");
    let formats: Vec<&Value> = plan["attributes"]["assets"][0]["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| &o["format"])
        .collect();
    assert_eq!(formats, [&json!("m3u8"), &json!("mpd")], "{plan}");

    let doc = app.run_done(body.clone()).await;
    let urls = doc["attributes"]["downloadUrls"].as_array().unwrap();
    assert_eq!(urls.len(), 2, "{doc}");
    let (master_url, mpd_url) = (urls[0].as_str().unwrap(), urls[1].as_str().unwrap());
    assert!(object(master_url).ends_with("/0-0.m3u8"), "{doc}");
    assert!(object(mpd_url).ends_with("/0-1.mpd"), "{doc}");
    assert_eq!(doc["attributes"]["outputs"][1]["format"], "mpd", "{doc}");

    // The manifest names exactly the init sections and segments HLS names.
    let (kind, mpd) = text_of(mpd_url).await;
    assert_eq!(kind, "application/dash+xml");
    assert!(mpd.contains("type=\"static\""), "{mpd}");
    let named: Vec<String> = xml_values(&mpd, "sourceURL")
        .into_iter()
        .chain(xml_values(&mpd, "media"))
        .collect();
    assert!(named.iter().all(|u| u.contains("&signature=")), "{mpd}");
    let named: BTreeSet<String> = named.iter().map(|u| object(u)).collect();
    let hls: BTreeSet<String> = hls_objects(master_url)
        .await
        .into_iter()
        .filter(|o| !o.ends_with(".m3u8"))
        .collect();
    assert_eq!(named, hls, "{mpd}");
    // 2 rungs × (init + 2 segments), and 2 subtitle segments.
    assert_eq!(named.len(), 8, "{named:?}");
    assert!(mpd.contains("codecs=\"avc1."), "{mpd}");
    assert!(mpd.contains(",mp4a.40.2\""), "{mpd}");

    // Stored once: the archive holds no media file but the ones both name.
    let reader = read_archive(&app, doc["id"].as_str().unwrap()).await;
    let entries: Vec<String> = reader
        .file()
        .entries()
        .iter()
        .map(|e| e.filename().as_str().unwrap().to_string())
        .collect();
    let media = entries
        .iter()
        .filter(|e| e.ends_with(".mp4") || e.ends_with(".vtt"));
    assert_eq!(media.count(), named.len(), "{entries:?}");
    assert!(
        entries.iter().any(|e| e.ends_with("-0-0/manifest.mpd")),
        "{entries:?}"
    );

    // ffprobe, given the manifest URL alone, finds each rung at its size.
    let probed = probe_streams(mpd_url).await;
    let mut sizes: Vec<(u64, u64)> = probed["streams"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["codec_type"] == "video")
        .map(|s| (s["width"].as_u64().unwrap(), s["height"].as_u64().unwrap()))
        .collect();
    sizes.sort();
    assert_eq!(sizes, [(480, 360), (640, 480)], "{probed}");
    let seconds: f64 = probed["format"]["duration"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((seconds - 7.0).abs() < 0.2, "{probed}");

    // The result cache copies the ladder with the master; the copy's manifest names it.
    let again = app.run_done(body).await;
    assert_eq!(again["attributes"]["cached"], true, "{again}");
    let copy = again["attributes"]["downloadUrls"][1].as_str().unwrap();
    let (_, copied) = text_of(copy).await;
    let copied: BTreeSet<String> = xml_values(&copied, "media")
        .iter()
        .map(|u| object(u))
        .collect();
    let edit = again["id"].as_str().unwrap();
    assert!(copied.iter().all(|o| o.contains(edit)), "{copied:?}");
    let probed_copy = probe_streams(copy).await;
    assert_eq!(probed_copy["streams"], probed["streams"]);

    // dash.js on a page of another origin, given the manifest URL alone.
    let dash_js = npm_player("dashjs.sh").await;
    let seen = run_script("dash_player.py", &[dash_js.as_str(), mpd_url]).await;
    assert_ne!(seen["origin"].as_str().unwrap(), app.base, "{seen}");
    assert!(seen["current_time"].as_f64().unwrap() > 1.0, "{seen}");
    // dash.js lists a set's rungs by bandwidth, lowest first.
    assert_eq!(seen["levels"], json!([[480, 360], [640, 480]]), "{seen}");
    assert_eq!(seen["errors"], json!([]), "{seen}");
    assert!(
        seen["audio_bytes"].as_u64().unwrap() > 0,
        "the audio plays: {seen}"
    );
    let tracks = seen["cues"].as_array().unwrap();
    assert_eq!(tracks.len(), 1, "{seen}");
    let track = tracks[0].as_array().unwrap();
    assert_eq!(
        track[..3],
        [json!("subtitles"), json!("en"), json!("showing")],
        "{seen}"
    );
    let first = &tracks[0][3][0];
    assert_eq!(first[0].as_f64(), Some(0.5), "{seen}");
    assert_eq!(first[1].as_f64(), Some(2.0), "{seen}");
    assert_eq!(first[2], "First", "{seen}");
}

/// ffprobe's streams and format of `url`. (Frames are not counted: ffmpeg 5.1's DASH
/// reader files a multiplexed Representation's audio packets under its video stream.)
async fn probe_streams(url: &str) -> Value {
    let out = tokio::process::Command::new("ffprobe")
        .args([
            "-v",
            "quiet",
            "-show_streams",
            "-show_format",
            "-of",
            "json",
            url,
        ])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "ffprobe of the manifest");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// H.264 and AV1 ladders side by side: one video set per codec, AV1's `codecs` the ones
/// the master states, and dash.js plays the manifest.
#[tokio::test]
async fn an_h264_and_an_av1_ladder_are_two_sets_of_one_manifest_that_dash_js_plays() {
    let app = spawn_app().await;
    let video = app
        .fixtures
        .add("a.mp4", clips::clip("320x240", 10, 2.0, false, "mp4"));
    let options = json!({"codecs": ["h264", "av1"], "dash": true});
    let mut body = edit(&video, &["video-to-hls"], Some(options));
    body["assets"][0]["type"] = json!("video");
    let doc = app.run_done(body).await;
    let (_, master) = text_of(doc["attributes"]["downloadUrls"][0].as_str().unwrap()).await;
    let mpd_url = doc["attributes"]["downloadUrls"][1].as_str().unwrap();
    let (_, mpd) = text_of(mpd_url).await;
    assert_eq!(
        mpd.matches("contentType=\"video\"").count(),
        2,
        "{master}\n{mpd}"
    );
    let codecs = xml_values(&mpd, "codecs");
    assert!(codecs[0].starts_with("avc1."), "{mpd}");
    assert!(codecs[1].starts_with("av01."), "{mpd}");
    assert!(
        master.contains(&format!("CODECS=\"{}\"", codecs[1])),
        "{master}"
    );
    let seen = run_script(
        "dash_player.py",
        &[npm_player("dashjs.sh").await.as_str(), mpd_url],
    )
    .await;
    assert!(seen["current_time"].as_f64().unwrap() > 1.0, "{seen}");
    assert_eq!(seen["errors"], json!([]), "{seen}");
}
