//! `mediaedit edit …` and `mediaedit preset …` (docs/API.md): the binary as a client
//! of a live server — a local file uploaded, a pipeline followed to the end, outputs
//! downloaded and probed; presets stored and run; exit statuses;
//! `MEDIAEDIT_URL`/`MEDIAEDIT_TOKEN`; `--json`.

use tokio::process::Command;

use serde_json::Value;

use crate::binary::BIN;
use crate::fixtures;
use crate::helpers::*;

/// Runs `mediaedit edit ARGS` against `app` (URL and token from the environment):
/// exit status, stdout, stderr.
async fn cli(app: &TestApp, args: &[&str]) -> (i32, String, String) {
    mediaedit(app, &[&["edit"], args].concat()).await
}

/// Runs `mediaedit preset ARGS` against `app`, as [`cli`] does.
async fn preset(app: &TestApp, args: &[&str]) -> (i32, String, String) {
    mediaedit(app, &[&["preset"], args].concat()).await
}

/// Runs `mediaedit ARGS` against `app`, as [`cli`] does.
pub async fn mediaedit(app: &TestApp, args: &[&str]) -> (i32, String, String) {
    // Awaited, not blocking: the server runs on this test's runtime.
    let out = Command::new(BIN)
        .args(args)
        .env("MEDIAEDIT_URL", &app.base)
        .env("MEDIAEDIT_TOKEN", &app.token)
        .output()
        .await
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (
        out.status.code().unwrap_or(-1),
        text(out.stdout),
        text(out.stderr),
    )
}

#[tokio::test]
async fn a_local_file_goes_through_a_three_step_pipeline_and_comes_back_downloaded() {
    let app = spawn_app().await;
    let work = tempfile::TempDir::new().unwrap();
    let source = work.path().join("photo.png");
    std::fs::write(&source, fixtures::png(64, 48)).unwrap();
    let out_dir = work.path().join("out");
    let (code, stdout, stderr) = cli(
        &app,
        &[
            "create",
            "--src",
            source.to_str().unwrap(),
            "--command",
            "resize-image",
            "--command",
            "image-to-video",
            "--command",
            "video-to-gif",
            "--option",
            "scale=0.5",
            "--option",
            "duration=1",
            "--option",
            "fps=5",
            "--wait",
            "--output",
            out_dir.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stderr.contains("Created edit"), "{stderr}");
    assert!(
        stderr.contains("done 100%"),
        "plain progress lines off a terminal: {stderr}"
    );
    let files: Vec<&str> = stdout.lines().collect();
    assert_eq!(files.len(), 1, "{stdout}");
    assert!(files[0].ends_with("-0-0.gif"), "{stdout}");
    let probed = probe(std::path::Path::new(files[0]));
    let stream = &probed["streams"][0];
    assert_eq!(
        (stream["width"].as_u64(), stream["height"].as_u64()),
        (Some(32), Some(24))
    );
    assert_eq!(stream["nb_read_frames"], "5", "{probed}");

    // The edit is there for get and list, as JSON or lines.
    let id = std::path::Path::new(files[0])
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()[..36]
        .to_string();
    let (code, stdout, _) = cli(&app, &["get", &id, "--json"]).await;
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["attributes"]["status"], "done");
    let (code, stdout, _) = cli(&app, &["list"]).await;
    assert_eq!(code, 0);
    assert!(stdout.contains(&format!("{id}\tdone")), "{stdout}");
}

#[tokio::test]
async fn exit_statuses_tell_a_failed_edit_a_refusal_and_a_cancel_apart() {
    let app = spawn_app().await;
    let missing = app.fixtures.status_url(404);
    let (code, stdout, _) = cli(
        &app,
        &[
            "create",
            "--src",
            &missing,
            "--command",
            "image-to-webp",
            "--wait",
        ],
    )
    .await;
    assert_eq!(code, 1, "a failed edit: {stdout}");
    assert!(stdout.contains("error\t"), "{stdout}");

    let (code, _, stderr) = cli(
        &app,
        &[
            "create",
            "--src",
            "https://x.example/a.png",
            "--command",
            "no-such-command",
        ],
    )
    .await;
    assert_eq!(code, 3, "a refused request: {stderr}");
    assert!(stderr.contains("422"), "{stderr}");
    let out = Command::new(BIN)
        .args(["edit", "list", "--url", &app.base, "--token", "me_wrong"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "a bad token");

    app.fixtures.add("slow.png", fixtures::png(8, 8));
    let slow = app.fixtures.slow_url("slow.png", 5000);
    let (code, stdout, _) = cli(
        &app,
        &["create", "--src", &slow, "--command", "image-to-webp"],
    )
    .await;
    assert_eq!(code, 0);
    let id = stdout.split('\t').next().unwrap().to_string();
    // The cancel was accepted: success, so `set -e` scripts go on.
    let (code, stdout, _) = cli(&app, &["cancel", &id]).await;
    assert_eq!(
        (code, stdout.trim_end()),
        (0, format!("{id}\tcanceled").as_str())
    );
}

#[tokio::test]
async fn presets_are_stored_listed_run_and_deleted_from_the_command_line() {
    let app = spawn_app().await;
    let put = [
        "put",
        "thumb",
        "--command",
        "resize-image",
        "--option",
        "scale=0.5",
        "--option",
        "format=webp",
    ];
    let (code, stdout, stderr) = preset(&app, &put).await;
    assert_eq!(code, 0, "{stderr}");
    let mut lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.remove(0), "thumb\tresize-image", "{stdout}");
    lines.sort();
    assert_eq!(lines, ["option\tformat=webp", "option\tscale=0.5"]);

    let (code, stdout, _) = preset(&app, &["list"]).await;
    assert_eq!(code, 0);
    assert!(stdout.starts_with("thumb\tresize-image\t20"), "{stdout}");
    let (code, stdout, _) = preset(&app, &["get", "thumb", "--json"]).await;
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["data"]["attributes"]["options"]["scale"], 0.5, "{doc}");

    // An edit from the preset, its own option over the preset's.
    let work = tempfile::TempDir::new().unwrap();
    let source = work.path().join("photo.png");
    std::fs::write(&source, fixtures::png(64, 48)).unwrap();
    let out_dir = work.path().join("out");
    let (source, out_dir) = (source.to_str().unwrap(), out_dir.to_str().unwrap());
    let create = ["create", "--src", source, "--preset", "thumb"];
    let options = ["--option", "scale=0.25", "--wait", "--output", out_dir];
    let (code, stdout, stderr) = cli(&app, &[&create[..], &options].concat()).await;
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let file = stdout.trim();
    assert!(file.ends_with("-0-0.webp"), "the preset's format: {stdout}");
    let image = crate::fixtures::decode(std::path::Path::new(file));
    assert_eq!(
        (image.width(), image.height()),
        (16, 12),
        "the edit's scale"
    );
    // `--preset` or `--command`, never both, never neither: a bad command line.
    let (code, _, _) = cli(
        &app,
        &[&create[..], &["--command", "resize-image"]].concat(),
    )
    .await;
    assert_eq!(code, 2);
    let (code, _, _) = cli(&app, &["create", "--src", source]).await;
    assert_eq!(code, 2);

    let (code, stdout, _) = preset(&app, &["delete", "thumb"]).await;
    assert_eq!((code, stdout.as_str()), (0, "thumb\tdeleted\n"));
    let (code, _, stderr) = preset(&app, &["get", "thumb"]).await;
    assert_eq!(code, 3, "gone: {stderr}");
    assert!(stderr.contains("404"), "{stderr}");
    let (code, _, stderr) = cli(&app, &create).await;
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("unknown_preset"), "{stderr}");
    let (code, stdout, _) = preset(&app, &["list"]).await;
    assert_eq!((code, stdout.as_str()), (0, ""));
    // A name the service could not store never becomes a request's path.
    let (code, _, stderr) = preset(&app, &["delete", "../edits"]).await;
    assert_eq!(code, 3);
    assert!(stderr.contains("not a preset name"), "{stderr}");
}
