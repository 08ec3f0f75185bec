//! `codecs` on `video-to-hls` (docs/API.md, "Video commands"): an AV1 ladder beside
//! or instead of H.264, from one decode, its variants' `CODECS` written as RFC 6381
//! and the AV1 ISOBMFF binding say, and the AV1 ladder played by hls.js in Chromium.

use serde_json::{json, Value};

use crate::clips;
use crate::helpers::*;
use crate::hls::app_chunking_ladders;

/// The `#EXT-X-STREAM-INF` attribute lists of the master playlist at `url`.
async fn variants(url: &str) -> Vec<String> {
    let master = reqwest::get(url).await.unwrap().text().await.unwrap();
    master
        .lines()
        .filter_map(|l| l.strip_prefix("#EXT-X-STREAM-INF:"))
        .map(str::to_string)
        .collect()
}

fn codecs_of(variant: &str) -> String {
    let at = variant.find("CODECS=\"").expect("CODECS") + 8;
    variant[at..][..variant[at..].find('"').unwrap()].to_string()
}

#[tokio::test]
async fn h264_and_av1_ladders_come_out_side_by_side_each_with_its_codecs() {
    let app = spawn_app().await;
    // 640×360: the 360p rung alone, once per codec.
    let src = app
        .fixtures
        .add("a.mp4", clips::clip("640x360", 25, 3.0, true, "mp4"));
    let options = json!({"codecs": ["h264", "av1"]});
    let doc = app
        .run_done(edit(&src, &["video-to-hls"], Some(options)))
        .await;
    let master = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
    let found = variants(master).await;
    assert_eq!(found.len(), 2, "{found:?}");
    let codecs: Vec<String> = found.iter().map(|v| codecs_of(v)).collect();
    assert!(codecs[0].starts_with("avc1."), "{codecs:?}");
    // AV1 main profile, level 3.0 or under for 640×360 at 25 fps, main tier, 8-bit.
    let av1 = &codecs[1];
    assert!(
        av1.starts_with("av01.0.0") && av1.ends_with("M.08,mp4a.40.2"),
        "{av1}"
    );
    // ffprobe, from the master URL alone, finds both videos and decodes every frame.
    let probe = crate::hls::probe_url(master).await;
    let videos: Vec<&Value> = probe["streams"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["codec_type"] == "video")
        .collect();
    let names: Vec<&str> = videos
        .iter()
        .map(|s| s["codec_name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"h264") && names.contains(&"av1"),
        "{names:?}"
    );
    for video in videos {
        assert_eq!(clips::frames(video), 75, "{video}");
        assert_eq!(
            (video["width"].as_u64(), video["height"].as_u64()),
            (Some(640), Some(360))
        );
    }
}

#[tokio::test]
async fn hls_js_in_chromium_plays_an_av1_only_ladder() {
    let app = spawn_app().await;
    let src = app
        .fixtures
        .add("a.mp4", clips::clip("640x360", 25, 5.0, true, "mp4"));
    let options = json!({"codecs": ["av1"]});
    let doc = app
        .run_done(edit(&src, &["video-to-hls"], Some(options)))
        .await;
    let master = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
    let found = variants(master).await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(codecs_of(&found[0]).starts_with("av01."), "{found:?}");
    let hls_js = format!("{}/playground/hls.light.min.js", app.base);
    let seen = run_script("hls_player.py", &[hls_js.as_str(), master]).await;
    assert!(seen["current_time"].as_f64().unwrap() > 1.0, "{seen}");
    assert_eq!(seen["errors"], json!([]), "{seen}");
}

#[tokio::test]
async fn codecs_out_of_the_list_and_vp9_on_hls_are_refused_at_the_option() {
    let app = spawn_app().await;
    let src = app
        .fixtures
        .add("a.mp4", clips::clip("160x96", 10, 1.0, false, "mp4"));
    for (options, pointer, code) in [
        (
            json!({"codecs": ["vp9"]}),
            "/options/codecs",
            "invalid_option_value",
        ),
        (
            json!({"codecs": []}),
            "/options/codecs",
            "invalid_option_value",
        ),
        (
            json!({"codecs": ["av1", "av1"]}),
            "/options/codecs",
            "invalid_option_value",
        ),
        (json!({"codecs": "av1"}), "/options/codecs", "invalid_type"),
        (
            json!({"codec": "vp9"}),
            "/options/codec",
            "invalid_option_combination",
        ),
    ] {
        let response = app
            .post_edit(edit(&src, &["video-to-hls"], Some(options.clone())))
            .await;
        assert_eq!(response.status(), 422, "{options}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(
            body["errors"][0]["source"]["pointer"], pointer,
            "{options}: {body}"
        );
        assert_eq!(body["errors"][0]["code"], code, "{options}: {body}");
    }
}

/// An AV1 ladder encoded in chunks (`--min-chunk-work 1`: the 7 s clip cut between its
/// two segments), through the whole service: the segments cut at 6 s as one process
/// cuts them, every frame of the 7 s once in AV1, and hls.js in Chromium plays it.
#[tokio::test]
async fn an_av1_ladder_in_chunks_keeps_every_frame_and_its_segments_and_plays() {
    let app = app_chunking_ladders(1).await;
    let src = app
        .fixtures
        .add("a.mp4", clips::clip("320x180", 25, 7.0, true, "mp4"));
    let options = json!({"codecs": ["av1"]});
    let doc = app
        .run_done(edit(&src, &["video-to-hls"], Some(options)))
        .await;
    let master = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
    let text = reqwest::get(master).await.unwrap().text().await.unwrap();
    let found = variants(master).await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(codecs_of(&found[0]).starts_with("av01.0."), "{found:?}");
    let playlist_url = text.lines().find(|l| l.starts_with("http")).unwrap();
    let playlist = reqwest::get(playlist_url)
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let lengths: Vec<&str> = playlist
        .lines()
        .filter(|l| l.starts_with("#EXTINF:"))
        .collect();
    assert_eq!(
        lengths,
        ["#EXTINF:6.000000,", "#EXTINF:1.000000,"],
        "{playlist}"
    );
    let probe = crate::hls::probe_url(master).await;
    let video = probe["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["codec_type"] == "video")
        .unwrap();
    assert_eq!(video["codec_name"], "av1", "{video}");
    assert_eq!(clips::frames(video), 175, "{video}");
    let hls_js = format!("{}/playground/hls.light.min.js", app.base);
    let seen = run_script("hls_player.py", &[hls_js.as_str(), master]).await;
    assert!(seen["current_time"].as_f64().unwrap() > 1.0, "{seen}");
    assert_eq!(seen["errors"], json!([]), "{seen}");
    assert!(seen["segments_fetched"].as_u64().unwrap() >= 2, "{seen}");
}
