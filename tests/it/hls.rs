//! `video-to-hls` through storage and real HTTP: the master playlist alone, given to
//! ffprobe, reaches every rendition, read to its end (docs/API.md, "HLS and
//! storyboards").

use serde_json::Value;

use crate::clips;
use crate::helpers::*;

on_both_backends!(a_ladder_is_read_whole_by_ffmpeg_from_the_master_url_alone);

/// What ffprobe, given only `url`, finds in every stream, every frame decoded. (Run
/// without blocking: the app serving `url` shares this test's runtime.)
pub async fn probe_url(url: &str) -> Value {
    let out = tokio::process::Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-count_frames",
            "-show_streams",
            "-show_programs",
        ])
        .args(["-of", "json", url])
        .output()
        .await
        .expect("ffprobe runs");
    assert!(
        out.status.success(),
        "ffprobe of the master: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The `#EXT-X-STREAM-INF` attribute lists of a master playlist.
fn variants(master: &str) -> Vec<String> {
    master
        .lines()
        .filter_map(|l| l.strip_prefix("#EXT-X-STREAM-INF:"))
        .map(str::to_string)
        .collect()
}

fn attribute(list: &str, name: &str) -> String {
    let start = list
        .find(&format!("{name}="))
        .unwrap_or_else(|| panic!("{name} in {list}"));
    let rest = &list[start + name.len() + 1..];
    match rest.strip_prefix('"') {
        Some(quoted) => quoted[..quoted.find('"').unwrap()].to_string(),
        None => rest.split(',').next().unwrap().to_string(),
    }
}

async fn a_ladder_is_read_whole_by_ffmpeg_from_the_master_url_alone(
    backend: crate::backends::Backend,
) {
    let app = spawn_app_on(backend, |_| {}).await;
    // 640×480 (4:3): the 480p and 360p rungs, nothing above the source. 7 s at
    // 10 fps makes two segments per rendition.
    let src = app
        .fixtures
        .add("a.mp4", clips::clip("640x480", 10, 7.0, true, "mp4"));
    let doc = app.run_done(edit(&src, &["video-to-hls"], None)).await;
    let urls = doc["attributes"]["downloadUrls"].as_array().unwrap();
    assert_eq!(urls.len(), 1, "{doc}");
    let output = &doc["attributes"]["outputs"][0];
    assert_eq!(output["format"], "m3u8", "{doc}");
    assert_eq!(
        (output["width"].as_u64(), output["height"].as_u64()),
        (Some(640), Some(480))
    );
    let duration = output["duration"].as_f64().unwrap();
    assert!((duration - 7.0).abs() < 0.2, "{duration}");

    let master_url = urls[0].as_str().unwrap();
    let response = reqwest::get(master_url).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "application/vnd.apple.mpegurl"
    );
    assert_eq!(response.headers()["access-control-allow-origin"], "*");
    let master = response.text().await.unwrap();
    let found = variants(&master);
    assert_eq!(found.len(), 2, "{master}");
    let resolutions: Vec<String> = found.iter().map(|v| attribute(v, "RESOLUTION")).collect();
    assert_eq!(resolutions, ["640x480", "480x360"], "{master}");
    let bandwidths: Vec<u64> = found
        .iter()
        .map(|v| attribute(v, "BANDWIDTH").parse().unwrap())
        .collect();
    assert!(
        bandwidths[0] > bandwidths[1] && bandwidths[1] > 128_000,
        "{master}"
    );
    for variant in &found {
        let codecs = attribute(variant, "CODECS");
        assert!(
            codecs.starts_with("avc1.") && codecs.ends_with(",mp4a.40.2"),
            "{codecs}"
        );
        let average: u64 = attribute(variant, "AVERAGE-BANDWIDTH").parse().unwrap();
        let peak: u64 = attribute(variant, "BANDWIDTH").parse().unwrap();
        assert!(average <= peak, "{variant}");
    }
    // Every name in the master is an absolute signed URL of this service.
    for line in master
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        assert!(
            line.starts_with(&app.base) && line.contains("signature="),
            "{line}"
        );
    }

    // ffprobe given the master URL only: every rendition, every frame of it.
    let probed = probe_url(master_url).await;
    let streams = probed["streams"].as_array().unwrap();
    let videos: Vec<&Value> = streams
        .iter()
        .filter(|s| s["codec_type"] == "video")
        .collect();
    let audios: Vec<&Value> = streams
        .iter()
        .filter(|s| s["codec_type"] == "audio")
        .collect();
    assert_eq!(videos.len(), 2, "{probed}");
    assert_eq!(audios.len(), 2, "{probed}");
    let mut heights = Vec::new();
    for video in &videos {
        assert_eq!(video["codec_name"], "h264");
        assert_eq!(video["pix_fmt"], "yuv420p");
        let frames: u64 = video["nb_read_frames"].as_str().unwrap().parse().unwrap();
        assert_eq!(frames, 70, "every frame of the rendition: {video}");
        heights.push(video["height"].as_u64().unwrap());
    }
    heights.sort();
    assert_eq!(heights, [360, 480]);
    for audio in &audios {
        assert_eq!(audio["codec_name"], "aac");
        let frames: u64 = audio["nb_read_frames"].as_str().unwrap().parse().unwrap();
        // 7 s of AAC at 44.1 kHz, 1024 samples a frame.
        assert!(frames >= 300, "{audio}");
    }

    // A media playlist's segments: about 6 s each, the last the remainder.
    let media_url = master.lines().find(|l| l.starts_with("http")).unwrap();
    let media = reqwest::get(media_url).await.unwrap().text().await.unwrap();
    let lengths: Vec<f64> = media
        .lines()
        .filter_map(|l| l.strip_prefix("#EXTINF:"))
        .map(|l| l.trim_end_matches(',').parse().unwrap())
        .collect();
    assert_eq!(lengths.len(), 2, "{media}");
    assert!((lengths[0] - 6.0).abs() < 0.01, "{media}");
    assert!(media.contains("#EXT-X-MAP:URI=\"http"), "{media}");
    assert!(media.contains("#EXT-X-PLAYLIST-TYPE:VOD"), "{media}");
    let segment = media.lines().find(|l| l.starts_with("http")).unwrap();
    let fetched = reqwest::get(segment).await.unwrap();
    assert_eq!(fetched.headers()["content-type"], "video/mp4");
    assert_eq!(fetched.headers()["access-control-allow-origin"], "*");

    // A name signed for one object opens no other.
    let forged = segment.replace("seg0.mp4", "seg1.mp4");
    assert_eq!(reqwest::get(&forged).await.unwrap().status(), 403);
}

#[tokio::test]
async fn a_silent_small_video_makes_one_rendition_without_audio() {
    let app = spawn_app().await;
    let src = app
        .fixtures
        .add("a.mp4", clips::clip("320x240", 10, 2.0, false, "mp4"));
    let doc = app.run_done(edit(&src, &["video-to-hls"], None)).await;
    let master_url = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
    let master = reqwest::get(master_url)
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let found = variants(&master);
    assert_eq!(found.len(), 1, "{master}");
    assert_eq!(attribute(&found[0], "RESOLUTION"), "320x240");
    let codecs = attribute(&found[0], "CODECS");
    assert!(
        codecs.starts_with("avc1.") && !codecs.contains("mp4a"),
        "{codecs}"
    );
    let probed = probe_url(master_url).await;
    let streams = probed["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 1, "{probed}");
    assert_eq!(streams[0]["nb_read_frames"], "20");
}

#[tokio::test]
async fn a_download_answers_a_cors_preflight_from_any_origin() {
    let app = spawn_app().await;
    let response = reqwest::Client::new()
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/v1/files/edits/x/1/0-0.m3u8", app.base),
        )
        .header("Origin", "https://player.example")
        .header("Access-Control-Request-Method", "GET")
        .header("Access-Control-Request-Headers", "range")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    assert_eq!(response.headers()["access-control-allow-origin"], "*");
    let allowed = response.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap();
    assert!(allowed.contains("Range"), "{allowed}");
    // An unsigned link is refused, and a page may still read why.
    let refused = reqwest::get(format!("{}/v1/files/edits/x/1/0-0.m3u8", app.base))
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    assert_eq!(refused.headers()["access-control-allow-origin"], "*");
}

/// hls.js (the copy the playground serves) in Chromium, on a page of another origin,
/// given the master URL only (`hls_player.py`). The ladder is encoded in chunks (7 s
/// cut between its two segments), as a long video's is.
#[tokio::test]
async fn hls_js_on_another_origin_plays_the_stream_past_one_second() {
    let app = app_chunking_ladders(1).await;
    let src = app
        .fixtures
        .add("a.mp4", clips::clip("640x360", 25, 7.0, true, "mp4"));
    let doc = app.run_done(edit(&src, &["video-to-hls"], None)).await;
    let master_url = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
    let hls_js = format!("{}/playground/hls.light.min.js", app.base);
    let seen = run_script("hls_player.py", &[hls_js.as_str(), master_url]).await;
    assert_ne!(
        seen["origin"].as_str().unwrap(),
        app.base,
        "another origin: {seen}"
    );
    assert!(seen["current_time"].as_f64().unwrap() > 1.0, "{seen}");
    assert_eq!(seen["levels"], serde_json::json!([[640, 360]]), "{seen}");
    assert_eq!(seen["errors"], serde_json::json!([]), "{seen}");
    assert!(seen["segments_fetched"].as_u64().unwrap() >= 2, "{seen}");
}

/// The result cache copies a stream whole (its playlists and segments with it): the
/// copy plays after the edit it came from is deleted.
#[tokio::test]
async fn a_cached_stream_is_copied_whole_and_outlives_its_original() {
    let app = spawn_app().await;
    let src = app
        .fixtures
        .add("a.mp4", clips::clip("320x240", 10, 2.0, true, "mp4"));
    let first = app.run_done(edit(&src, &["video-to-hls"], None)).await;
    let again = app.run_done(edit(&src, &["video-to-hls"], None)).await;
    assert_eq!(again["attributes"]["cached"], true, "{again}");
    let (status, _) = app
        .send(
            reqwest::Method::DELETE,
            &format!("/v1/edits/{}", first["id"].as_str().unwrap()),
        )
        .await;
    assert_eq!(status, 204);
    let master_url = again["attributes"]["downloadUrls"][0].as_str().unwrap();
    let probed = probe_url(master_url).await;
    let streams = probed["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 2, "{probed}");
    assert_eq!(streams[0]["nb_read_frames"], "20", "{probed}");
}

/// A service that cuts every ladder of more than `min_chunk_work` pixel-frames into
/// chunks, a core each: so a short test clip is encoded as a long video is.
pub(crate) async fn app_chunking_ladders(min_chunk_work: u64) -> TestApp {
    spawn_app_with(|c| {
        c.chunking.min_chunk_work = min_chunk_work;
        c.chunking.ladder_cores_per_chunk = 1;
    })
    .await
}
