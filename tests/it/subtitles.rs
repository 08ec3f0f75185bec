//! Subtitles (docs/API.md, "Subtitles"): an SRT or WebVTT asset beside a video, read
//! when the edit is created (a malformed file refused by its line), drawn into the
//! frames with `burnSubtitles` (chunked encodes too) and retimed by `trim-video`, also
//! by a `trim-video` or `modify-video-speed` that ends the pipeline.
//! Burned frames are compared with the same edit's frames without the cues.

use std::path::Path;

use serde_json::{json, Value};

use crate::clips::{ffmpeg, video_packets};
use crate::helpers::*;

/// 320×240 at 25 fps of one flat colour, `secs` long, H.264: any change a cue makes
/// stands out, and nothing else moves.
fn flat_clip(secs: f64) -> Vec<u8> {
    let source = format!("color=c=0x336699:s=320x240:r=25:d={secs}");
    let args = [
        "-f", "lavfi", "-i", &source, "-c:v", "libx264", "-pix_fmt", "yuv420p",
    ];
    ffmpeg(&[&args[..], &["-f", "mp4"]].concat(), "flat.mp4")
}

const SRT: &str = "1\n00:00:01,000 --> 00:00:02,000\nHello <i>there</i>\n\n2\n00:00:05,300 --> 00:00:05,900\nLater, in the second chunk\n";

/// An edit of `video` with `subtitles` beside it.
fn subtitled(video: &str, subtitles: &str, commands: &[&str], options: Value) -> Value {
    json!({
        "assets": [{"type": "video", "src": video}, {"type": "subtitles", "src": subtitles}],
        "commands": commands,
        "options": options,
    })
}

/// Every frame of `path` as 320×240 grey bytes.
fn grey_frames(path: &Path) -> Vec<Vec<u8>> {
    let out = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(path)
        .args(["-f", "rawvideo", "-pix_fmt", "gray", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{path:?}");
    out.stdout.chunks(320 * 240).map(<[u8]>::to_vec).collect()
}

/// Mean absolute difference of two frames over rows `rows`.
fn difference(a: &[u8], b: &[u8], rows: std::ops::Range<usize>) -> f64 {
    let (from, to) = (rows.start * 320, rows.end * 320);
    let sum: u64 = a[from..to]
        .iter()
        .zip(&b[from..to])
        .map(|(x, y)| u64::from(x.abs_diff(*y)))
        .sum();
    sum as f64 / (to - from) as f64
}

/// Asserts frame `k` of `burned` shows a cue in its bottom third and nothing else
/// differs from `plain` (`shown`), or that the frames are alike (`!shown`).
fn assert_cue(burned: &[Vec<u8>], plain: &[Vec<u8>], k: usize, shown: bool) {
    let (top, bottom) = (
        difference(&burned[k], &plain[k], 0..160),
        difference(&burned[k], &plain[k], 160..240),
    );
    assert!(top < 0.5, "frame {k}: the top two thirds changed by {top}");
    if shown {
        assert!(
            bottom > 1.0,
            "frame {k}: no cue drawn (bottom changed by {bottom})"
        );
    } else {
        assert!(
            bottom < 0.5,
            "frame {k}: a cue drawn out of its time ({bottom})"
        );
    }
}

#[tokio::test]
async fn malformed_subtitles_are_refused_at_creation_and_in_a_dry_run_by_their_line() {
    let app = spawn_app().await;
    let video = app.fixtures.add("flat.mp4", flat_clip(2.0));
    let bad = app.fixtures.add(
        "bad.srt",
        b"1\n00:00:01,000 --> 00:00:02,000\nfine\n\n2\n00:00:03,000 -> 00:00:04,000\nbroken\n"
            .to_vec(),
    );
    let body = subtitled(
        &video,
        &bad,
        &["video-to-webm"],
        json!({"burnSubtitles": true}),
    );
    for path in ["/v1/edits", "/v1/edits?dryRun=true"] {
        let response = app
            .client
            .post(format!("{}{path}", app.base))
            .bearer_auth(&app.token)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 422, "{path}");
        let doc: Value = response.json().await.unwrap();
        let error = &doc["errors"][0];
        assert_eq!(error["code"], "invalid_subtitles", "{doc}");
        assert_eq!(error["source"]["pointer"], "/assets/1/src", "{doc}");
        assert!(
            error["detail"].as_str().unwrap().contains("line 6"),
            "{doc}"
        );
    }
    let latin1 = app.fixtures.add(
        "latin1.srt",
        b"1\n00:00:01,000 --> 00:00:02,000\ncaf\xe9\n".to_vec(),
    );
    let response = app
        .post_edit(subtitled(&video, &latin1, &["video-to-webm"], json!({})))
        .await;
    let doc: Value = response.json().await.unwrap();
    assert_eq!(doc["errors"][0]["code"], "invalid_subtitles", "{doc}");
    assert!(
        doc["errors"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("line 3"),
        "{doc}"
    );

    // Burning needs a subtitles asset; two are refused; one alone has no video.
    let plain = json!({"assets": [{"type": "video", "src": video}], "commands": ["video-to-webm"], "options": {"burnSubtitles": true}});
    let doc: Value = app.post_edit(plain).await.json().await.unwrap();
    assert_eq!(
        doc["errors"][0]["code"], "invalid_option_combination",
        "{doc}"
    );
    let good = app.fixtures.add("good.srt", SRT.as_bytes().to_vec());
    let mut two = subtitled(&video, &good, &["video-to-webm"], json!({}));
    two["assets"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "subtitles", "src": good}));
    let doc: Value = app.post_edit(two).await.json().await.unwrap();
    assert_eq!(doc["errors"][0]["code"], "too_many_items", "{doc}");
    let alone =
        json!({"assets": [{"type": "subtitles", "src": good}], "commands": ["video-to-webm"]});
    let doc: Value = app.post_edit(alone).await.json().await.unwrap();
    assert_eq!(doc["errors"][0]["code"], "invalid_asset_type", "{doc}");
}

#[tokio::test]
async fn burned_cues_change_only_the_bottom_third_and_only_while_shown_in_every_chunk() {
    // Chunks of VP9 are cut on its keyframes (every 128 frames): the second cue
    // (5.3–5.9 s, frames 133–147) falls in the second chunk.
    let app = spawn_app_with(|c| {
        c.chunking.min_chunk_work = 1_000_000;
        c.chunking.vp9_cores_per_chunk = 1;
    })
    .await;
    let video = app.fixtures.add("flat.mp4", flat_clip(6.0));
    let srt = app.fixtures.add("cues.srt", SRT.as_bytes().to_vec());
    let webm = |burn: bool| {
        subtitled(
            &video,
            &srt,
            &["video-to-webm"],
            json!({"burnSubtitles": burn}),
        )
    };
    let burned = app.run_done(webm(true)).await;
    let plain = app.run_done(webm(false)).await;
    let burned = grey_frames(&app.download_all(&burned).await[0]);
    let plain = grey_frames(&app.download_all(&plain).await[0]);
    assert_eq!((burned.len(), plain.len()), (150, 150));
    for k in [0, 20, 55, 100, 127, 128, 130, 149] {
        assert_cue(&burned, &plain, k, false);
    }
    for k in [26, 37, 48, 134, 140, 146] {
        assert_cue(&burned, &plain, k, true);
    }
}

#[tokio::test]
async fn a_trim_before_the_encode_moves_the_burned_cues_with_the_picture() {
    let app = spawn_app().await;
    let video = app.fixtures.add("flat.mp4", flat_clip(4.0));
    let vtt = "WEBVTT\n\n00:00:02.500 --> 00:00:03.000\nAfter the cut\n";
    let vtt = app.fixtures.add("cues.vtt", vtt.as_bytes().to_vec());
    let commands = ["trim-video", "video-to-webm"];
    let trimmed = |burn: bool| {
        subtitled(
            &video,
            &vtt,
            &commands,
            json!({"start": 2, "burnSubtitles": burn}),
        )
    };
    let burned = app.run_done(trimmed(true)).await;
    let plain = app.run_done(trimmed(false)).await;
    let burned = grey_frames(&app.download_all(&burned).await[0]);
    let plain = grey_frames(&app.download_all(&plain).await[0]);
    assert_eq!(burned.len(), 50, "2 s from 2 s");
    // The cue at 2.5–3 s of the source is at 0.5–1 s of the part (frames 13–24).
    for k in [0, 8, 30, 45] {
        assert_cue(&burned, &plain, k, false);
    }
    for k in [14, 19, 23] {
        assert_cue(&burned, &plain, k, true);
    }
}

/// Whether `chunked` has a keyframe where `whole` has none: a chunk started there.
fn split(chunked: &[bool], whole: &[bool]) -> bool {
    chunked.iter().zip(whole).any(|(c, w)| *c && !*w)
}

/// An app that cuts x264 encodes in chunks (a chunk a core, no least work), and one
/// that never does.
async fn chunked_and_whole_apps() -> [TestApp; 2] {
    let chunked = spawn_app_with(|c| {
        c.chunking.min_chunk_work = 1;
        c.chunking.x264_cores_per_chunk = 1;
        c.chunking.vp9_cores_per_chunk = 1;
    });
    let whole = spawn_app_with(|c| c.chunking.min_chunk_work = 0);
    [chunked.await, whole.await]
}

/// The grey frames of `commands` on the flat clip of `secs` with `vtt` beside it, with
/// the cues burned and without (`options` besides), and which of the burned one's
/// frames are keyframes.
async fn burned_and_plain(
    app: &TestApp,
    (secs, vtt): (f64, &str),
    commands: &[&str],
    options: &Value,
) -> (Vec<Vec<u8>>, Vec<Vec<u8>>, Vec<bool>) {
    let video = app.fixtures.add("flat.mp4", flat_clip(secs));
    let vtt = app.fixtures.add("cues.vtt", vtt.as_bytes().to_vec());
    let mut frames = Vec::new();
    let mut keyframes = Vec::new();
    for burn in [true, false] {
        let mut options = options.clone();
        options["burnSubtitles"] = json!(burn);
        let done = app
            .run_done(subtitled(&video, &vtt, commands, options))
            .await;
        let file = app.download_all(&done).await.remove(0);
        if burn {
            keyframes = video_packets(&file).iter().map(|p| p.1).collect();
        }
        frames.push(grey_frames(&file));
    }
    let plain = frames.pop().unwrap();
    (frames.pop().unwrap(), plain, keyframes)
}

/// `trim-video` as the pipeline's last step burns the cues of its part at the part's
/// times, also where it would otherwise copy (a part from the first keyframe), in
/// chunks or in one process.
#[tokio::test]
async fn a_trim_that_ends_the_pipeline_burns_the_cues_of_its_part_copy_or_not() {
    let vtt = "WEBVTT\n\n00:00:01.000 --> 00:00:01.500\nBefore\n\n\
               00:00:02.500 --> 00:00:03.000\nAfter the cut\n";
    let mut keyframes = Vec::new();
    for app in chunked_and_whole_apps().await {
        for (span, on, off) in [
            // From 2 s: the second cue at 0.5–1 s of the part (frames 13–24).
            (json!({"start": 2, "end": 4}), [14, 19, 23], [0, 8, 30, 45]),
            // The first 2 s, from the keyframe (a copy without the cues): the first cue.
            (json!({"start": 0, "end": 2}), [26, 31, 36], [0, 20, 40, 49]),
        ] {
            let (burned, plain, keys) =
                burned_and_plain(&app, (4.0, vtt), &["trim-video"], &span).await;
            keyframes.push(keys);
            // (A copy may keep a few frames more at its end, past the ones compared.)
            assert_eq!(burned.len(), 50, "{span}");
            assert!(plain.len() >= 50, "{span}");
            for k in off {
                assert_cue(&burned, &plain, k, false);
            }
            for k in on {
                assert_cue(&burned, &plain, k, true);
            }
        }
    }
    // The first app's parts were encoded in chunks, the second's in one process.
    assert!(split(&keyframes[0], &keyframes[2]) && split(&keyframes[1], &keyframes[3]));
}

/// `modify-video-speed` as the pipeline's last step burns the cues at their new
/// times, re-encoding a stream it would otherwise copy, in chunks or in one process.
#[tokio::test]
async fn a_speed_change_that_ends_the_pipeline_burns_the_cues_at_their_new_times() {
    let vtt = "WEBVTT\n\n00:00:02.500 --> 00:00:03.000\nTwice as soon\n";
    let mut keyframes = Vec::new();
    for app in chunked_and_whole_apps().await {
        let options = json!({"speed": 2});
        let commands = ["modify-video-speed"];
        let (burned, plain, keys) = burned_and_plain(&app, (4.0, vtt), &commands, &options).await;
        keyframes.push(keys);
        // 100 frames at 50 fps: the cue at 1.25–1.5 s (frames 63–74).
        assert_eq!(burned.len(), 100);
        assert!(plain.len() >= 100, "the copy: {}", plain.len());
        for k in [0, 40, 60, 78, 99] {
            assert_cue(&burned, &plain, k, false);
        }
        for k in [64, 69, 73] {
            assert_cue(&burned, &plain, k, true);
        }
    }
    assert!(split(&keyframes[0], &keyframes[1]), "encoded in chunks");
}
