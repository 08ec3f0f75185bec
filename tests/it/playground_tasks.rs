//! What a person does in the playground beyond one pipeline (docs/API.md, "The
//! playground"), each driven in Debian's headless Chromium by Playwright
//! (`playground_tasks.py`, one scenario a test) and checked against what the API
//! itself says: a watermark from a URL of any length and from an upload, presets, an
//! image output's placeholders, a predicted failure holding Run back, a scenes edit's
//! chapters on the video, and `/docs`.
//! With `MEDIAEDIT_SCREENSHOTS=DIR` the script leaves screenshots of them in DIR.

use serde_json::{json, Value};

use crate::clips;
use crate::fixtures;
use crate::helpers::*;

/// Runs `scenario` of the script against `app`: what the page showed.
async fn drive(app: &TestApp, scenario: &str, args: &[String]) -> Value {
    let mut all = vec![scenario.to_string(), app.base.clone(), app.token.clone()];
    all.extend_from_slice(args);
    let seen = run_script("playground_tasks.py", &all).await;
    assert_eq!(seen["script_errors"], json!([]), "{seen}");
    seen
}

fn file(app: &TestApp, name: &str, bytes: Vec<u8>) -> String {
    let path = app.data_dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

async fn edit(app: &TestApp, id: &Value) -> Value {
    let id = id.as_str().unwrap();
    let (status, edit) = app
        .send(reqwest::Method::GET, &format!("/v1/edits/{id}"))
        .await;
    assert_eq!(status, 200, "{edit}");
    edit["attributes"].clone()
}

#[tokio::test]
async fn a_watermark_is_made_in_the_playground_from_a_long_url_or_from_an_upload() {
    let app = spawn_app().await;
    let photo = file(&app, "photo.jpg", fixtures::jpeg(320, 240));
    let logo = file(&app, "logo.png", fixtures::png_with_alpha(64, 32));
    app.fixtures
        .add("logo.png", fixtures::png_with_alpha(64, 32));
    // 700 characters: no field or hint may cut it.
    let long_url = format!("{}?{}", app.fixtures.url("logo.png"), "pad=x".repeat(136));
    assert!(long_url.len() > 700, "{}", long_url.len());
    let missing = app.fixtures.status_url(404);
    let seen = drive(&app, "overlay", &[photo, logo, long_url.clone(), missing]).await;

    // A URL the edit could not fetch is a failure the dry run predicts, at the option.
    let missing = seen["missing_overlay"].as_str().unwrap();
    assert!(missing.contains("Option overlay"), "{missing}");
    assert!(!missing.contains('`'), "{missing}");

    let hint = seen["overlay_hint"].as_str().unwrap();
    assert!(!hint.contains("undefined"), "{hint}");
    assert!(
        hint.contains("any length") && hint.contains("uploads"),
        "{hint}"
    );
    assert_eq!(seen["field_after_typing"], long_url.as_str());
    assert_eq!(seen["curl_has_url"], true);
    let by_url = edit(&app, &seen["url_edit"]).await;
    assert_eq!(by_url["status"], "done", "{by_url}");
    assert_eq!(by_url["options"]["overlay"], long_url.as_str());

    // The logo uploaded for the option is the option's value, not a second source,
    // and it is offered among the session's uploads beside the photo.
    let logo_src = seen["logo_src"].as_str().unwrap();
    assert!(
        logo_src.starts_with(&format!("{}/v1/uploads/", app.base)),
        "{logo_src}"
    );
    assert_eq!(seen["sources"], 1);
    assert_eq!(seen["picked_label"], "logo.png");
    assert_eq!(seen["field_after_pick"], logo_src);
    let choices = seen["upload_choices"].as_array().unwrap();
    assert!(choices.contains(&json!("photo.jpg")) && choices.contains(&json!("logo.png")));
    let by_upload = edit(&app, &seen["upload_edit"]).await;
    assert_eq!(by_upload["status"], "done", "{by_upload}");
    assert_eq!(by_upload["options"]["overlay"], logo_src);
    assert_eq!(
        by_upload["assets"].as_array().map(Vec::len),
        Some(1),
        "{by_upload}"
    );
    assert_eq!(
        (
            &by_upload["outputs"][0]["width"],
            &by_upload["outputs"][0]["height"]
        ),
        (&json!(320), &json!(240))
    );
}

#[tokio::test]
async fn a_preset_is_saved_listed_applied_and_deleted_in_the_playground() {
    let app = spawn_app().await;
    let seen = drive(&app, "presets", &[]).await;

    let listed = seen["listed"].as_str().unwrap();
    assert!(
        listed.contains("half-png") && listed.contains("scale=0.5"),
        "{listed}"
    );
    let stored = &seen["stored"]["data"][0];
    assert_eq!(stored["id"], "half-png");
    assert_eq!(stored["attributes"]["commands"], json!(["resize-image"]));
    assert_eq!(
        stored["attributes"]["options"],
        json!({"scale": 0.5, "format": "png"})
    );
    assert_eq!(seen["steps_applied"], json!(["resize-image"]));
    assert_eq!(seen["scale_applied"], "0.5");
    assert_eq!(seen["format_applied"], "png");
    assert_eq!(seen["after_delete"]["data"], json!([]));
    let (_, left) = app.send(reqwest::Method::GET, "/v1/presets").await;
    assert_eq!(left["data"], json!([]));
}

#[tokio::test]
async fn an_image_output_shows_its_dominant_colour_and_blurhash_while_its_preview_loads() {
    let app = spawn_app().await;
    let photo = file(&app, "photo.jpg", fixtures::jpeg(320, 240));
    let seen = drive(&app, "placeholders", &[photo]).await;

    let done = edit(&app, &seen["edit"]).await;
    let output = &done["outputs"][0];
    let colour = output["dominantColor"].as_str().unwrap();
    assert_eq!(seen["colour_text"], colour);
    let channel = |i: usize| u8::from_str_radix(&colour[i..i + 2], 16).unwrap();
    let rgb = format!("rgb({}, {}, {})", channel(1), channel(3), channel(5));
    assert_eq!(seen["swatch_colour"], rgb.as_str());
    let [w, h] = [0, 1].map(|i| seen["swatch_box"][i].as_u64().unwrap());
    assert!(w >= 10 && h >= 10, "a swatch one sees: {w}×{h}");
    // While the preview was held back, the image was hidden over its BlurHash, which
    // is the output's own, painted as the reference decoder paints it.
    assert_eq!(seen["image_pending"], 1);
    let hash = output["blurhash"].as_str().unwrap();
    assert_eq!(seen["blurhash"], hash);
    let expected = blurhash::decode(hash, 32, 32, 1.0).unwrap();
    let painted: Vec<u8> = serde_json::from_value(seen["canvas"].clone()).unwrap();
    assert_eq!(painted.len(), expected.len());
    let off = painted
        .iter()
        .zip(&expected)
        .map(|(a, b)| a.abs_diff(*b))
        .max();
    assert!(off <= Some(2), "the canvas is off by {off:?}");
}

#[tokio::test]
async fn run_stays_disabled_while_the_dry_run_predicts_a_failure_and_says_which() {
    let app = spawn_app().await;
    let clip = file(&app, "clip.mp4", clips::mp4("320x240", 10, 3.0, false));
    let seen = drive(&app, "failure", &[clip]).await;

    let failure = seen["failure"].as_str().unwrap();
    assert!(failure.contains("invalid_parameter"), "{failure}");
    assert!(
        failure.contains("Start must be before the end"),
        "{failure}"
    );
    assert!(!failure.contains('`'), "raw backticks: {failure}");
    assert!(
        seen["run_hint"].as_str().unwrap().contains("would fail"),
        "{seen}"
    );
    // A storyboard: its sheet (JPEG by default, with its size) and its VTT.
    let plan = seen["storyboard_plan"].as_str().unwrap();
    assert!(
        plan.contains("1 × JPEG ") && plan.contains("1 × VTT"),
        "{plan}"
    );
    assert!(!plan.contains("2 × VTT"), "{plan}");
}

#[tokio::test]
async fn the_docs_page_shows_the_api_as_formatted_text() {
    let app = spawn_app().await;
    let seen = drive(&app, "docs", &[]).await;
    assert_eq!(seen["backticks"], 0, "{seen}");
    assert_eq!(seen["rust_paths"], json!([]));
    assert!(seen["code_elements"].as_u64().unwrap() > 50, "{seen}");
    assert_eq!(
        seen["description_code"],
        json!(["Authorization: Bearer <token>"])
    );
    assert_eq!(seen["commands_enum"], true);
}

/// A `video-scenes` edit's chapters shown on the video it ran on: a chapters track, and
/// a list whose entries seek the video.
#[tokio::test]
async fn a_scenes_edit_shows_its_chapters_on_the_video_and_a_chapter_seeks_it() {
    let app = spawn_app().await;
    let clip = file(&app, "shots.mp4", crate::scenes::four_shots());
    let seen = drive(&app, "chapters", &[clip]).await;
    // Four shots: cuts at 1.6 s, 3 s and 4.6 s.
    let chapters = seen["chapters"].as_array().unwrap();
    assert_eq!(chapters.len(), 4, "{seen}");
    assert_eq!(chapters[0], "0:00 Scene 1", "{seen}");
    assert_eq!(seen["tracks"], 1, "{seen}");
    assert_eq!(seen["track_cues"], 4, "{seen}");
    let start = seen["third_start"].as_f64().unwrap();
    assert!((start - 3.0).abs() < 0.1, "{seen}");
    assert!(
        (seen["seeked_to"].as_f64().unwrap() - start).abs() < 0.01,
        "{seen}"
    );
}
