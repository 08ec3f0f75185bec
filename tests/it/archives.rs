//! `GET /v1/edits/{id}/archive` unpacked and used offline (docs/API.md, "Archives"),
//! on both backends: an HLS ladder whole — master, media playlists, init sections,
//! segments — by relative names that ffprobe follows with only the file protocol
//! allowed; a storyboard whose every cue names a file of the archive.

use std::path::{Component, Path};

use serde_json::{json, Value};

use crate::clips;
use crate::helpers::*;

on_both_backends!(
    an_hls_archive_unpacked_plays_every_rendition_offline,
    a_storyboard_archive_holds_the_sheet_its_cues_name,
);

/// The archive of the done edit `id`, read as a ZIP: `200`, `application/zip`.
pub async fn read_archive(app: &TestApp, id: &str) -> async_zip::base::read::mem::ZipFileReader {
    let response = app
        .client
        .get(format!("{}/v1/edits/{id}/archive", app.base))
        .bearer_auth(&app.token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/zip");
    let zip = response.bytes().await.unwrap().to_vec();
    async_zip::base::read::mem::ZipFileReader::new(zip)
        .await
        .unwrap()
}

/// The archive of the done edit `id`, unpacked into `dir`; its entry names in order.
async fn unpack(app: &TestApp, id: &str, dir: &Path) -> Vec<String> {
    let reader = read_archive(app, id).await;
    let mut names = Vec::new();
    for i in 0..reader.file().entries().len() {
        let name = reader.file().entries()[i]
            .filename()
            .as_str()
            .unwrap()
            .to_string();
        let relative = Path::new(&name);
        assert!(
            relative
                .components()
                .all(|c| matches!(c, Component::Normal(_))),
            "an entry outside the folder: {name}"
        );
        let mut bytes = Vec::new();
        let mut entry = reader.reader_with_entry(i).await.unwrap();
        entry.read_to_end_checked(&mut bytes).await.unwrap();
        let path = dir.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
        names.push(name);
    }
    names
}

/// ffprobe of the local `path`, every frame counted, with only files readable.
fn probe_offline(path: &Path) -> Value {
    let out = std::process::Command::new("ffprobe")
        .args(["-v", "error", "-protocol_whitelist", "file"])
        .args(["-count_frames", "-show_streams", "-show_programs"])
        .args(["-show_format", "-of", "json"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ffprobe {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The URIs of a playlist: URI lines and `URI="…"` attributes.
fn uris(playlist: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in playlist.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !line.starts_with('#') {
            found.push(line.to_string());
        } else if let Some(start) = line.find("URI=\"") {
            let rest = &line[start + 5..];
            found.push(rest[..rest.find('"').unwrap()].to_string());
        }
    }
    found
}

async fn an_hls_archive_unpacked_plays_every_rendition_offline(backend: crate::backends::Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    // 640×480: the 480p and 360p rungs; 7 s makes two segments each.
    let src = app
        .fixtures
        .add("a.mp4", clips::clip("640x480", 10, 7.0, true, "mp4"));
    let doc = app.run_done(edit(&src, &["video-to-hls"], None)).await;
    let id = doc["id"].as_str().unwrap();
    let dir = tempfile::TempDir::new().unwrap();
    let names = unpack(&app, id, dir.path()).await;
    let master_name = format!("{id}-0-0.m3u8");
    assert_eq!(
        names[0], master_name,
        "the master first, named as its download"
    );

    // Every file a playlist names is in the archive, by a relative name, and every
    // file of the archive is named by one: the ladder whole, nothing else.
    let master_path = dir.path().join(&master_name);
    let master = std::fs::read_to_string(&master_path).unwrap();
    // The master again inside the ladder's folder, as stored: the folder alone plays.
    let inside = format!("{id}-0-0/master.m3u8");
    let mut named = vec![master_name.clone(), inside.clone()];
    let variants = uris(&master);
    assert_eq!(variants.len(), 2, "{master}");
    for variant in &variants {
        assert!(
            !variant.contains(':') && !variant.starts_with('/'),
            "{variant}"
        );
        named.push(variant.clone());
        let folder = Path::new(variant).parent().unwrap();
        let media = std::fs::read_to_string(dir.path().join(variant)).unwrap();
        let files = uris(&media);
        assert!(
            media.contains("#EXT-X-MAP:URI="),
            "an init section: {media}"
        );
        assert_eq!(files.len(), 3, "an init section and two segments: {media}");
        for file in files {
            assert!(!file.contains(':') && !file.starts_with('/'), "{file}");
            named.push(folder.join(file).to_str().unwrap().to_string());
        }
    }
    let mut sorted = names.clone();
    sorted.sort();
    named.sort();
    assert_eq!(sorted, named);

    // Each rendition on its own, then the master: every frame, every stream.
    let mut heights = Vec::new();
    for variant in &variants {
        let probed = probe_offline(&dir.path().join(variant));
        let video = clips::streams_of(&probed, "video")[0].clone();
        assert_eq!(clips::frames(&video), 70, "{variant}: {probed}");
        assert_eq!(clips::streams_of(&probed, "audio").len(), 1, "{probed}");
        heights.push(video["height"].as_u64().unwrap());
        let seconds: f64 = probed["format"]["duration"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((seconds - 7.0).abs() < 0.2, "{variant}: {seconds}");
    }
    heights.sort();
    assert_eq!(heights, [360, 480]);
    let probed = probe_offline(&master_path);
    assert_eq!(probed["programs"].as_array().unwrap().len(), 2, "{probed}");
    let videos = clips::streams_of(&probed, "video");
    assert_eq!(videos.len(), 2, "{probed}");
    assert!(videos.iter().all(|v| clips::frames(v) == 70), "{probed}");
    assert_eq!(clips::streams_of(&probed, "audio").len(), 2, "{probed}");
    let probed = probe_offline(&dir.path().join(&inside));
    let videos = clips::streams_of(&probed, "video");
    assert_eq!(videos.len(), 2, "{inside}: {probed}");
    assert!(videos.iter().all(|v| clips::frames(v) == 70), "{probed}");
}

async fn a_storyboard_archive_holds_the_sheet_its_cues_name(backend: crate::backends::Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let src = app
        .fixtures
        .add("a.mp4", clips::clip("160x120", 10, 2.0, false, "mp4"));
    let options = json!({"count": 5, "tileWidth": 40, "format": "webp"});
    let doc = app
        .run_done(edit(&src, &["video-storyboard"], Some(options)))
        .await;
    let id = doc["id"].as_str().unwrap();
    let dir = tempfile::TempDir::new().unwrap();
    let names = unpack(&app, id, dir.path()).await;
    assert_eq!(names, [format!("{id}-0-0.webp"), format!("{id}-0-1.vtt")]);
    let vtt = std::fs::read_to_string(dir.path().join(&names[1])).unwrap();
    let payloads: Vec<&str> = vtt.lines().filter(|l| l.contains("#xywh=")).collect();
    assert_eq!(payloads.len(), 5, "{vtt}");
    for payload in payloads {
        let (file, xywh) = payload.split_once("#xywh=").unwrap();
        assert_eq!(file, names[0], "every cue names the sheet in the archive");
        let sheet = image::open(dir.path().join(file)).unwrap();
        let xywh: Vec<u32> = xywh.split(',').map(|v| v.parse().unwrap()).collect();
        assert!(xywh[0] + xywh[2] <= sheet.width() && xywh[1] + xywh[3] <= sheet.height());
    }
}
