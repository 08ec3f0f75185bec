//! `video-storyboard` through storage and real HTTP: every tile against the source's
//! colour at its cue, cues end to end, and the sheet found from the VTT's URL alone
//! (docs/API.md, "HLS and storyboards").

use serde_json::{json, Value};

use crate::clips;
use crate::helpers::*;

on_both_backends!(every_tile_shows_the_frame_at_its_cue_and_the_vtt_finds_its_sheet);

/// The colour of each second of [`by_second`].
const COLOURS: [(&str, [u8; 3]); 4] = [
    ("red", [255, 0, 0]),
    ("lime", [0, 255, 0]),
    ("blue", [0, 0, 255]),
    ("white", [255, 255, 255]),
];

/// 4 s at 10 fps, 160×120: one solid colour a second.
fn by_second() -> Vec<u8> {
    let inputs: Vec<String> = COLOURS
        .iter()
        .map(|(name, _)| format!("color={name}:size=160x120:rate=10:duration=1"))
        .collect();
    let graph = format!(
        "{};[c0][c1][c2][c3]concat=n=4,format=yuv420p",
        inputs
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{s}[c{i}]"))
            .collect::<Vec<_>>()
            .join(";")
    );
    clips::ffmpeg(
        &[
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
        ],
        "colours.mp4",
    )
}

/// `hh:mm:ss.ttt` in seconds.
fn seconds(stamp: &str) -> f64 {
    let parts: Vec<f64> = stamp.split(':').map(|p| p.parse().unwrap()).collect();
    parts[0] * 3600.0 + parts[1] * 60.0 + parts[2]
}

/// The cues: start, end, URL and `x,y,w,h`.
fn cues(vtt: &str) -> Vec<(f64, f64, String, [u32; 4])> {
    let lines: Vec<&str> = vtt.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some((start, end)) = line.split_once(" --> ") else {
            continue;
        };
        let (url, fragment) = lines[i + 1].split_once("#xywh=").unwrap();
        let xywh: Vec<u32> = fragment.split(',').map(|v| v.parse().unwrap()).collect();
        let xywh = [xywh[0], xywh[1], xywh[2], xywh[3]];
        out.push((seconds(start), seconds(end), url.to_string(), xywh));
    }
    out
}

fn query(url: &str, name: &str) -> String {
    let url = reqwest::Url::parse(url).unwrap();
    let found = url.query_pairs().find(|(k, _)| k == name);
    found.map(|(_, v)| v.into_owned()).unwrap()
}

async fn storyboard(app: &TestApp, options: Value) -> (Value, String, Vec<u8>) {
    let src = app.fixtures.add("colours.mp4", by_second());
    let doc = app
        .run_done(edit(&src, &["video-storyboard"], Some(options)))
        .await;
    let urls = doc["attributes"]["downloadUrls"].as_array().unwrap();
    assert_eq!(urls.len(), 2, "the sheet, then the VTT: {doc}");
    let vtt_url = urls[1].as_str().unwrap().to_string();
    let sheet = app.bytes_of(urls[0].as_str().unwrap()).await;
    (doc, vtt_url, sheet)
}

async fn every_tile_shows_the_frame_at_its_cue_and_the_vtt_finds_its_sheet(
    backend: crate::backends::Backend,
) {
    let app = spawn_app_on(backend, |_| {}).await;
    // 7 tiles over 4 s: cues of 0.571 s, several straddling a change of colour.
    let (doc, vtt_url, sheet) = storyboard(&app, json!({"count": 7, "tileWidth": 80})).await;
    let outputs = &doc["attributes"]["outputs"];
    assert_eq!(outputs[0]["format"], "jpeg", "{doc}");
    assert_eq!(outputs[1]["format"], "vtt", "{doc}");
    assert!(
        outputs[0]["blurhash"].is_string(),
        "a sheet is an image: {doc}"
    );

    let response = reqwest::get(&vtt_url).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/vtt");
    assert_eq!(response.headers()["access-control-allow-origin"], "*");
    let vtt = response.text().await.unwrap();
    assert!(vtt.starts_with("WEBVTT\n"), "{vtt}");
    let found = cues(&vtt);
    assert_eq!(found.len(), 7, "{vtt}");
    // End to end, without a gap or an overlap.
    assert_eq!(found[0].0, 0.0, "{vtt}");
    for pair in found.windows(2) {
        assert_eq!(pair[0].1, pair[1].0, "{vtt}");
    }
    assert!((found[6].1 - 4.0).abs() < 0.05, "{vtt}");

    // The sheet's own signed URL, absolute, expiring with the VTT's; it downloads
    // the sheet.
    let sheet_url = &found[0].2;
    assert!(sheet_url.starts_with(&app.base) && sheet_url.contains("signature="));
    assert_eq!(query(sheet_url, "expires"), query(&vtt_url, "expires"));
    assert_eq!(app.bytes_of(sheet_url).await, sheet);

    let picture = image::load_from_memory(&sheet).unwrap().to_rgb8();
    assert_eq!(picture.width() % 80, 0);
    for (start, _, url, [x, y, w, h]) in &found {
        assert_eq!(url, sheet_url);
        assert_eq!((*w, *h), (80, 60));
        let second = (*start + 1e-6).floor() as usize;
        let expected = COLOURS[second.min(3)].1;
        let seen = picture.get_pixel(x + w / 2, y + h / 2).0;
        let close = seen
            .iter()
            .zip(expected)
            .all(|(a, b)| (i16::from(*a) - i16::from(b)).abs() < 48);
        assert!(
            close,
            "the tile at {start} s is {seen:?}, the source {expected:?}"
        );
    }
}

#[tokio::test]
async fn a_webp_sheet_of_the_default_hundred_tiles() {
    let app = spawn_app().await;
    let (doc, vtt_url, sheet) = storyboard(&app, json!({"format": "webp"})).await;
    assert_eq!(doc["attributes"]["outputs"][0]["format"], "webp", "{doc}");
    assert_eq!(&sheet[8..12], b"WEBP");
    let vtt = reqwest::get(&vtt_url).await.unwrap().text().await.unwrap();
    let found = cues(&vtt);
    assert_eq!(found.len(), 100);
    assert!(found.iter().all(|c| c.3[2] == 160 && c.3[3] == 120));
    let picture = image::load_from_memory(&sheet).unwrap().to_rgb8();
    let (_, _, _, [x, y, w, h]) = found[99];
    assert!(x + w <= picture.width() && y + h <= picture.height());
    // The last tile, at 3.96 s: white.
    let seen = picture.get_pixel(x + w / 2, y + h / 2).0;
    assert!(seen.iter().all(|c| *c > 200), "{seen:?}");
}

#[tokio::test]
async fn a_storyboard_sheet_in_png_is_refused_at_creation() {
    let app = spawn_app().await;
    let src = app.fixtures.add("colours.mp4", by_second());
    let body = edit(&src, &["video-storyboard"], Some(json!({"format": "png"})));
    let response = app.post_edit(body).await;
    assert_eq!(response.status(), 422);
    let errors: Value = response.json().await.unwrap();
    assert_eq!(
        errors["errors"][0]["code"], "invalid_option_value",
        "{errors}"
    );
    assert_eq!(errors["errors"][0]["source"]["pointer"], "/options/format");
}

#[tokio::test]
async fn the_cells_no_tile_fills_are_black_in_jpeg_and_transparent_in_webp() {
    let app = spawn_app().await;
    for format in ["jpeg", "webp"] {
        // 10 tiles of 80×60 in a 3×4 grid: the last two cells are empty.
        let options = json!({"count": 10, "tileWidth": 80, "format": format});
        let (_, vtt_url, sheet) = storyboard(&app, options).await;
        let vtt = reqwest::get(&vtt_url).await.unwrap().text().await.unwrap();
        let tiles: Vec<[u32; 4]> = cues(&vtt).into_iter().map(|c| c.3).collect();
        assert_eq!(tiles.len(), 10);
        let picture = image::load_from_memory(&sheet).unwrap().to_rgba8();
        assert_eq!(picture.dimensions(), (240, 240), "{format}");
        // Every pixel 8 px (a JPEG block) or more away from any tile.
        let near_a_tile = |x: u32, y: u32| {
            tiles.iter().any(|[tx, ty, w, h]| {
                x + 8 >= *tx && x < tx + w + 8 && y + 8 >= *ty && y < ty + h + 8
            })
        };
        let empty: Vec<[u8; 4]> = picture
            .enumerate_pixels()
            .filter(|(x, y, _)| !near_a_tile(*x, *y))
            .map(|(_, _, p)| p.0)
            .collect();
        // x 88–239, y 188–239: the two empty cells less the 8 px beside tiles.
        assert_eq!(empty.len(), 152 * 52, "{format}");
        for pixel in empty {
            match format {
                "jpeg" => assert!(pixel[..3].iter().all(|c| *c <= 12), "{pixel:?}"),
                _ => assert_eq!(pixel[3], 0, "transparent: {pixel:?}"),
            }
        }
    }
}
