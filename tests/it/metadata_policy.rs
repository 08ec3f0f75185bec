//! `metadata: keep | copyright` (docs/API.md, "Metadata"): every output read by
//! `exiftool` (Debian `libimage-exiftool-perl`) under each policy, edits and renders:
//! GPS gone under the default and `copyright`, Artist and Copyright there under
//! `copyright` and `keep`, Orientation 1 under `keep` (the turn is in the pixels).

use std::path::Path;

use serde_json::{json, Value};

use crate::fixtures;
use crate::helpers::*;
use crate::metadata::tagged_jpeg;
use crate::render::{b64, get, render_key, render_url};

/// The tags `exiftool -j -n` reads in `path` (the first object), by name.
fn exiftool(path: &Path) -> Value {
    let out = std::process::Command::new("exiftool")
        .args(["-j", "-n", "-G0"])
        .arg(path)
        .output()
        .expect("exiftool runs (Debian libimage-exiftool-perl)");
    let all: Value = serde_json::from_slice(&out.stdout).unwrap();
    all[0].clone()
}

/// Whether any group's tag `name` is in `tags` (`EXIF:Artist`, `XMP:…`).
fn has(tags: &Value, name: &str) -> Option<Value> {
    tags.as_object()
        .unwrap()
        .iter()
        .find(|(key, _)| key.rsplit(':').next() == Some(name))
        .map(|(_, value)| value.clone())
}

/// What each policy must leave in `tags` of an output in `format`.
fn assert_policy(tags: &Value, policy: &str, format: &str) {
    let what = format!("{policy} {format}: {tags}");
    let gps = has(tags, "GPSLatitude").is_some() || has(tags, "GPSLatitudeRef").is_some();
    match policy {
        "strip" => {
            assert!(!gps && has(tags, "Artist").is_none(), "{what}");
            assert!(has(tags, "Copyright").is_none(), "{what}");
        }
        "copyright" => {
            assert!(!gps, "{what}");
            assert_eq!(has(tags, "Artist"), Some("Ansel Adams".into()), "{what}");
            assert_eq!(
                has(tags, "Copyright"),
                Some("(c) Test Studio".into()),
                "{what}"
            );
            assert!(has(tags, "Orientation").is_none(), "{what}");
        }
        _ => {
            assert!(gps, "{what}");
            assert_eq!(has(tags, "Artist"), Some("Ansel Adams".into()), "{what}");
            assert_eq!(
                has(tags, "Copyright"),
                Some("(c) Test Studio".into()),
                "{what}"
            );
            assert_eq!(has(tags, "Orientation"), Some(1.into()), "{what}");
        }
    }
}

#[tokio::test]
async fn each_policy_leaves_what_it_names_in_every_output_format() {
    let app = spawn_app().await;
    let src = app.fixtures.add("tagged.jpg", tagged_jpeg());
    for policy in ["strip", "keep", "copyright"] {
        for format in ["jpeg", "png", "webp", "jxl", "avif"] {
            let options = json!({"width": 20, "format": format, "metadata": policy});
            let doc = app
                .run_done(edit(&src, &["resize-image"], Some(options)))
                .await;
            let path = &app.download_all(&doc).await[0];
            let tags = exiftool(path);
            assert_policy(&tags, policy, format);
            if policy == "keep" {
                // The XMP packet too (its own GPS text is the source's to publish).
                assert!(has(&tags, "GPSLatitude").is_some(), "{format}: {tags}");
            }
            if format != "jxl" {
                // Upright once: 40×80 shrunk to 20 wide, not turned again; an AVIF
                // with its items added still read by libheif.
                let picture = match format {
                    "avif" => fixtures::decode_avif(path),
                    _ => fixtures::decode(path),
                };
                assert_eq!(
                    (picture.width(), picture.height()),
                    (20, 40),
                    "{policy} {format}"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_render_follows_md_and_other_image_commands_take_the_option() {
    let app = spawn_app().await;
    let src = app.fixtures.add("tagged.jpg", tagged_jpeg());
    let key = render_key(&app).await;
    let dir = tempfile::tempdir().unwrap();
    for policy in ["strip", "keep", "copyright"] {
        let url = render_url(&app, &key, &format!("w:20,f:webp,md:{policy}"), &b64(&src));
        let response = get(&app, &url, None).await;
        assert_eq!(response.status(), 200);
        let path = dir.path().join(format!("{policy}.webp"));
        std::fs::write(&path, response.bytes().await.unwrap()).unwrap();
        assert_policy(&exiftool(&path), policy, "render webp");
    }
    for command in ["crop-image", "rotate-image", "image-to-webp"] {
        let mut options = json!({"metadata": "copyright"});
        match command {
            "rotate-image" => options["angle"] = 180.into(),
            "crop-image" => (options["width"], options["height"]) = (20.into(), 20.into()),
            _ => {}
        }
        let doc = app.run_done(edit(&src, &[command], Some(options))).await;
        let path = &app.download_all(&doc).await[0];
        assert_policy(&exiftool(path), "copyright", command);
    }
}
