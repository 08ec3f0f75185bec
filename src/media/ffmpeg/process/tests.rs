use crate::media::ffmpeg::process::*;

fn runner() -> ProcessRunner {
    ProcessRunner::new(2, Duration::from_secs(10))
}

#[test]
fn stderr_lines_lose_addresses_and_paths() {
    let stderr =
        b"[gif @ 0x559ec8dc88c0] [IMGUTILS @ 0x7ffede905570] Picture size 60000x60000 is invalid\n\
file:/work/data/tmp/e1-1-x/asset-0/source: Invalid data found when processing input\n";
    assert_eq!(
        stderr_tail(stderr),
        "Picture size 60000x60000 is invalid\nsource: Invalid data found when processing input"
    );
    assert_eq!(last_line("a\nb c \n"), "b c");
}

#[test]
fn stderr_tail_keeps_short_output_whole() {
    assert_eq!(stderr_tail(b"  first\n\nsecond  \n"), "  first\nsecond");
    assert_eq!(stderr_tail(b""), "");
}

#[test]
fn stderr_tail_keeps_the_last_whole_lines() {
    let mut stderr = String::new();
    for i in 0..500 {
        stderr.push_str(&format!("line {i:03} of the log\n"));
    }
    let tail = stderr_tail(stderr.as_bytes());
    assert!(tail.len() <= STDERR_TAIL_BYTES);
    assert!(tail.starts_with("line "), "{tail}");
    assert!(tail.ends_with("line 499 of the log"));
}

#[test]
fn stderr_tail_survives_a_multibyte_cut() {
    let stderr = "é".repeat(STDERR_TAIL_BYTES);
    let tail = stderr_tail(stderr.as_bytes());
    assert!(tail.len() <= STDERR_TAIL_BYTES && !tail.is_empty());
}

#[tokio::test]
async fn run_returns_stdout_and_passes_arguments_verbatim() {
    let out = runner()
        .run(Path::new("printf"), ["%s|", "a b", "$HOME;"])
        .await
        .unwrap();
    assert_eq!(out.stdout, b"a b|$HOME;|");
}

#[tokio::test]
async fn run_streaming_hands_over_each_line_as_printed() {
    let mut lines = Vec::new();
    runner()
        .run_streaming(
            Path::new("sh"),
            ["-c", "printf 'a=1\\nb=2\\r\\nlast'; echo noise >&2"],
            &mut |line| lines.push(line.to_string()),
        )
        .await
        .unwrap();
    assert_eq!(lines, ["a=1", "b=2", "last"]);
}

#[tokio::test]
async fn run_streaming_keeps_the_timeout_and_the_stderr_tail() {
    let err = ProcessRunner::new(1, Duration::from_millis(200))
        .run_streaming(Path::new("sleep"), ["5"], &mut |_| {})
        .await
        .unwrap_err();
    assert!(matches!(err, MediaError::Timeout { .. }), "{err:?}");
    let err = runner()
        .run_streaming(
            Path::new("sh"),
            [
                "-c",
                "echo out=1; yes spam | head -c 300000 >&2; echo 'the cause' >&2; exit 1",
            ],
            &mut |_| {},
        )
        .await
        .unwrap_err();
    match err {
        MediaError::ProcessFailed { stderr_tail, .. } => {
            assert!(stderr_tail.ends_with("the cause"), "{stderr_tail}");
            assert!(stderr_tail.len() <= STDERR_TAIL_BYTES);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn run_reports_a_missing_program() {
    let err = runner()
        .run(Path::new("/nonexistent/ffmpeg-nope"), ["-h"])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, MediaError::ToolMissing { program } if program == "ffmpeg-nope"),
        "{err:?}"
    );
}

#[tokio::test]
async fn run_reports_failure_with_the_stderr_tail() {
    let err = runner()
        .run(
            Path::new("sh"),
            ["-c", "echo progress; echo 'bad input' >&2; exit 3"],
        )
        .await
        .unwrap_err();
    match err {
        MediaError::ProcessFailed {
            program,
            stderr_tail,
        } => {
            assert_eq!(program, "sh");
            assert_eq!(stderr_tail, "bad input");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn run_kills_a_process_past_the_timeout() {
    let started = std::time::Instant::now();
    let err = ProcessRunner::new(1, Duration::from_millis(200))
        .run(Path::new("sleep"), ["5"])
        .await
        .unwrap_err();
    assert!(
        matches!(err, MediaError::Timeout { seconds: 1, .. }),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn run_holds_a_permit_per_process() {
    let runner = ProcessRunner::new(1, Duration::from_secs(10));
    let started = std::time::Instant::now();
    let (a, b) = tokio::join!(
        runner.run(Path::new("sleep"), ["0.3"]),
        runner.run(Path::new("sleep"), ["0.3"]),
    );
    a.unwrap();
    b.unwrap();
    // With one permit the two sleeps cannot overlap.
    assert!(started.elapsed() >= Duration::from_millis(600));
}
