//! The playground at `/` (docs/API.md), driven end to end in Debian's headless
//! Chromium by Playwright for Python (`playground.py`): a file uploaded through the page,
//! a three-command pipeline picked from what the page offers, the service's errors shown
//! by code, the run followed live to `done`, the GIF previewed at its real size.
//!
//! With `MEDIAEDIT_SCREENSHOTS=DIR` the screenshots of the main states go to DIR
//! (`MEDIAEDIT_SCREENSHOTS=$PWD/docs cargo test playground` refreshes those of docs/).

use mediaedit::commands::Command;
use mediaedit::media::MediaFormat;

use crate::fixtures;
use crate::helpers::*;

#[tokio::test]
async fn a_person_uploads_a_file_runs_a_pipeline_and_sees_the_gif_in_the_playground() {
    let app = spawn_app().await;
    let page = reqwest::get(format!("{}/", app.base)).await.unwrap();
    assert_eq!(page.status(), 200);
    let csp = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("connect-src 'self'"), "{csp}");
    let html = page.text().await.unwrap();
    for external in [
        "src=\"http",
        "href=\"http",
        "@import",
        "src=\"//",
        "url(http",
    ] {
        assert!(
            !html.contains(external),
            "the page loads from elsewhere: {external}"
        );
    }

    let jpeg = app.data_dir.path().join("photo.jpg");
    std::fs::write(&jpeg, fixtures::jpeg(640, 480)).unwrap();
    let shots = match std::env::var_os("MEDIAEDIT_SCREENSHOTS") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => app.data_dir.path().join("screenshots"),
    };
    std::fs::create_dir_all(&shots).unwrap();
    let args = [
        app.base.as_ref(),
        app.token.as_ref(),
        jpeg.as_os_str(),
        shots.as_os_str(),
    ];
    let seen = run_script("playground.py", &args).await;

    assert_eq!(seen["stored_token"], true);
    assert_eq!(seen["token_after_reload"], true);
    let every = Command::ALL.len();
    assert_eq!(
        seen["offered_without_source"].as_array().unwrap().len(),
        every
    );
    // What the page offers is what the registry says each command takes, in the
    // page's (alphabetical) order.
    let taking = |format: MediaFormat| {
        let mut names: Vec<&str> = Command::ALL
            .into_iter()
            .filter(|c| c.accepts(format))
            .map(Command::name)
            .collect();
        names.sort();
        serde_json::json!(names)
    };
    assert_eq!(seen["offered_for_jpeg"], taking(MediaFormat::Jpeg));
    assert_eq!(seen["offered_after_video"], taking(MediaFormat::Mp4));
    assert_eq!(
        seen["steps"],
        serde_json::json!(["resize-image", "image-to-video", "video-to-gif"])
    );
    assert!(
        seen["server_error"]
            .as_str()
            .unwrap()
            .contains("duration × fps"),
        "{seen}"
    );
    let curl = seen["curl"].as_str().unwrap();
    assert!(
        curl.contains("\"scale\": 0.5") && curl.contains("/v1/uploads/"),
        "{curl}"
    );
    // 640×480 halved, then a GIF at its own size.
    assert_eq!(seen["preview"], serde_json::json!([320, 240]));
    assert!(seen["caption"].as_str().unwrap().contains("GIF"), "{seen}");
    assert_eq!(seen["script_errors"], serde_json::json!([]));

    // The download link the page shows is the edit's own (signed afresh on each read),
    // and it downloads the GIF: 1 s at 10 fps.
    let edits = app.send(reqwest::Method::GET, "/v1/edits").await.1;
    let edit = &edits["data"][0]["attributes"];
    assert_eq!(edit["status"], "done");
    let shown = seen["download"].as_str().unwrap();
    let path_of = |url: &str| url.split('?').next().unwrap().to_string();
    assert_eq!(
        path_of(edit["downloadUrls"][0].as_str().unwrap()),
        path_of(shown)
    );
    let gif = reqwest::get(shown).await.unwrap();
    assert_eq!(gif.status(), 200);
    let file = app.data_dir.path().join("downloaded.gif");
    std::fs::write(&file, gif.bytes().await.unwrap()).unwrap();
    let stream = probe(&file);
    let stream = video_stream(&stream);
    assert_eq!(
        (&stream["width"], &stream["height"]),
        (&320.into(), &240.into())
    );
    assert_eq!(edit["outputs"][0]["frames"], 10);
    for shot in [
        "playground-compose.png",
        "playground-done.png",
        "playground-error.png",
    ] {
        let bytes = std::fs::metadata(shots.join(shot)).unwrap().len();
        assert!(bytes > 10_000, "{shot} is {bytes} bytes");
    }
}
