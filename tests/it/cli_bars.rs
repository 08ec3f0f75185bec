//! `edit create --wait`'s progress bar on a real terminal — a pseudo-terminal from
//! `openpty`, which the CLI's stderr is — drawn as the edit ended: a failed or
//! canceled edit's bar stays where its progress stood, with its status, never at
//! 100 % (docs/API.md, "The CLI client").

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tokio::process::Command;

use crate::binary::BIN;
use crate::cli_client::mediaedit;
use crate::fixtures;
use crate::helpers::*;

/// A pseudo-terminal of 100×30: its controller, and the terminal a child writes to.
fn pty() -> (std::fs::File, OwnedFd) {
    let (mut controller, mut terminal) = (-1, -1);
    let size = libc::winsize {
        ws_row: 30,
        ws_col: 100,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let (no_name, default_settings) = (std::ptr::null_mut(), std::ptr::null());
    // SAFETY: out-pointers to two ints, no name, default settings, a valid size.
    let made = unsafe {
        libc::openpty(
            &mut controller,
            &mut terminal,
            no_name,
            default_settings,
            &size,
        )
    };
    assert_eq!(made, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: two descriptors openpty just opened, each owned once from here.
    unsafe {
        (
            std::fs::File::from_raw_fd(controller),
            OwnedFd::from_raw_fd(terminal),
        )
    }
}

/// What a terminal shows last of `screen`: the last line drawn (escape sequences
/// removed, each `\r` starting the line again) that holds a percentage.
fn last_frame(screen: &str) -> String {
    let mut plain = String::new();
    let mut chars = screen.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: `ESC [`, parameters, one final letter.
            if chars.next_if_eq(&'[').is_some() {
                while chars.next().is_some_and(|c| !c.is_ascii_alphabetic()) {}
            }
            plain.push('\n');
        } else {
            plain.push(c);
        }
    }
    let mut frames = plain.split(['\r', '\n']).filter(|l| l.contains('%'));
    frames.next_back().unwrap_or_default().to_string()
}

/// The percentage a frame shows.
fn percent(frame: &str) -> u32 {
    let head = &frame[..frame.find('%').unwrap()];
    head.rsplit(' ').next().unwrap().parse().unwrap()
}

/// Runs `mediaedit edit create --wait` for `src` with its stderr a terminal; once it
/// has said the edit's id, `meanwhile(id)`. Exit status and the terminal's bytes.
async fn create_on_a_terminal<F: std::future::Future<Output = ()>>(
    app: &TestApp,
    src: &str,
    meanwhile: impl FnOnce(String) -> F,
) -> (i32, String) {
    let (mut controller, terminal) = pty();
    let out = tempfile::TempDir::new().unwrap();
    let mut command = Command::new(BIN);
    command
        .args(["edit", "create", "--src", src, "--command", "image-to-webp"])
        .args(["--wait", "--output"])
        .arg(out.path())
        .env("MEDIAEDIT_URL", &app.base)
        .env("MEDIAEDIT_TOKEN", &app.token)
        .env("TERM", "xterm-256color")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(terminal));
    let mut child = command.spawn().unwrap();
    // Our copy of the terminal closed: the controller reads its end once the child's is.
    drop(command);
    let (sender, chunks) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        // Linux answers EIO once no one holds the terminal open.
        while let Ok(n @ 1..) = controller.read(&mut buffer) {
            if sender.send(buffer[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut screen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let id = loop {
        while let Ok(chunk) = chunks.try_recv() {
            screen.extend(chunk);
        }
        let text = String::from_utf8_lossy(&screen);
        if let Some(at) = text.find("Created edit ") {
            if let Some(id) = text.get(at + 13..at + 49) {
                break id.to_string();
            }
        }
        assert!(Instant::now() < deadline, "no edit created: {text}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    meanwhile(id).await;
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("the CLI ends")
        .unwrap();
    reader.join().unwrap();
    screen.extend(chunks.into_iter().flatten());
    let screen = String::from_utf8_lossy(&screen).into_owned();
    (status.code().unwrap_or(-1), screen)
}

#[tokio::test]
async fn a_failed_or_canceled_edit_s_bar_is_left_where_it_stood_not_full() {
    let app = spawn_app().await;

    // Failed: the source is missing.
    let missing = app.fixtures.status_url(404);
    let (code, screen) = create_on_a_terminal(&app, &missing, |_| async {}).await;
    assert_eq!(code, 1, "{screen}");
    let frame = last_frame(&screen);
    assert!(frame.contains("failed"), "{frame:?} of {screen:?}");
    assert!(percent(&frame) < 100, "{frame:?}");

    // Canceled while its source trickles in.
    app.fixtures.add("slow.png", fixtures::png(8, 8));
    let slow = app.fixtures.slow_url("slow.png", 5000);
    let canceled = std::sync::Mutex::new(String::new());
    let (code, screen) = create_on_a_terminal(&app, &slow, |id| async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (code, _, stderr) = mediaedit(&app, &["edit", "cancel", &id]).await;
        assert_eq!(code, 0, "{stderr}");
        *canceled.lock().unwrap() = id;
    })
    .await;
    assert_eq!(code, 1, "{screen}");
    let frame = last_frame(&screen);
    assert!(frame.contains("canceled"), "{frame:?} of {screen:?}");
    // Where the edit's progress stood, not filled.
    let id = canceled.into_inner().unwrap();
    let doc = app
        .get_edit(&id)
        .await
        .json::<serde_json::Value>()
        .await
        .unwrap();
    let progress = doc["attributes"]["progress"].as_f64().unwrap_or(0.0);
    assert_eq!(doc["attributes"]["status"], "canceled");
    assert!(progress < 1.0, "{doc}");
    assert_eq!(
        percent(&frame),
        (progress * 100.0).floor() as u32,
        "{frame:?}"
    );
    let bar = &frame[frame.find('[').unwrap() + 1..frame.find(']').unwrap()];
    assert!(bar.contains(' '), "the bar is not full: {frame:?}");
}
