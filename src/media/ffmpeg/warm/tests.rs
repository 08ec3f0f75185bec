use std::os::unix::ffi::OsStringExt;
use std::time::Duration;

use crate::media::ffmpeg::process::ProcessRunner;
use crate::media::ffmpeg::warm::*;
use crate::media::MediaError;

/// A runner that keeps one process of each program warm, its shim in `dir`.
fn warm_runner(dir: &Path) -> ProcessRunner {
    ProcessRunner::new(2, Duration::from_secs(10)).with_warm_processes(1, Some(dir))
}

/// A runner with a process of `program` ready, and the directory its shim is in.
async fn warmed(program: &Path) -> (tempfile::TempDir, ProcessRunner) {
    let dir = tempfile::tempdir().unwrap();
    let runner = warm_runner(dir.path());
    runner.prewarm(program);
    until_ready(&runner, program).await;
    (dir, runner)
}

/// Waits until `program` has a warm process ready in `runner`.
async fn until_ready(runner: &ProcessRunner, program: &Path) {
    for _ in 0..500 {
        if runner.warm_ready(program) > 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no warm {} became ready", program.display());
}

fn arg(bytes: &[u8]) -> OsString {
    OsString::from_vec(bytes.to_vec())
}

#[tokio::test]
async fn a_warm_process_runs_with_exactly_the_arguments_it_is_handed() {
    let printf = Path::new("printf");
    let (_dir, runner) = warmed(printf).await;
    let args = [
        arg(b"%s|"),
        arg(b"a b"),
        arg(b""),
        arg(b"$HOME;"),
        arg("é".as_bytes()),
        arg(b"\xff\xfe not UTF-8"),
    ];
    let out = runner.run(printf, &args).await.unwrap();
    assert_eq!(out.stdout, b"a b||$HOME;|\xc3\xa9|\xff\xfe not UTF-8|");
    assert_eq!(runner.warm_ready(printf), 0, "the warm process ran it");
    // The run made room: another one starts after it.
    until_ready(&runner, printf).await;
}

/// The variables of a process's environment block as `/proc/PID/environ` shows it
/// (what anyone reading the process from outside sees), in order.
fn environ_entries(block: &[u8]) -> Vec<String> {
    block
        .split(|b| *b == 0)
        .filter(|entry| !entry.is_empty())
        .map(|entry| String::from_utf8(entry.to_vec()).unwrap())
        .collect()
}

/// The allow-list, with `HOME` and `TMPDIR` replaced by a placeholder; and the
/// directory they named.
fn allow_listed(entries: &[String]) -> (Vec<String>, String) {
    let home = entries
        .iter()
        .find_map(|e| e.strip_prefix("HOME="))
        .expect("HOME is set")
        .to_string();
    let shown = entries.iter().map(|e| e.replace(&home, "<home>")).collect();
    (shown, home)
}

fn expected_allow_list() -> Vec<String> {
    vec![
        "HOME=<home>".to_string(),
        "LC_ALL=C".to_string(),
        format!("PATH={}", std::env::var("PATH").unwrap()),
        "TMPDIR=<home>".to_string(),
    ]
}

#[tokio::test]
async fn a_warm_process_runs_with_the_allow_list_and_its_own_run_s_directory() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let runner = ProcessRunner::new(2, Duration::from_secs(10))
        .with_scratch_dir(Some(scratch.path()))
        .with_warm_processes(1, Some(dir.path()));
    let cat = Path::new("cat");
    runner.prewarm(cat);
    until_ready(&runner, cat).await;
    // Waiting, it shows the allow-list with the neutral directory, without the shim.
    let pid = runner.warm_pids(cat)[0];
    let block = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let (waiting, neutral) = allow_listed(&environ_entries(&block));
    assert_eq!(waiting, expected_allow_list());
    assert_eq!(Path::new(&neutral), scratch.path());

    // Running, it reads its own block: the run's environment written over it.
    let out = runner.run(cat, ["/proc/self/environ"]).await.unwrap();
    assert_eq!(runner.warm_ready(cat), 0, "the warm process ran it");
    let (running, home) = allow_listed(&environ_entries(&out.stdout));
    assert_eq!(running, expected_allow_list());
    assert_eq!(Path::new(&home).parent(), Some(scratch.path()));
    assert!(!Path::new(&home).exists(), "removed after the run");

    // What the program itself reads agrees, and nothing it runs gets the shim.
    let sh = Path::new("sh");
    runner.prewarm(sh);
    until_ready(&runner, sh).await;
    let script =
        "test -d \"$HOME\" && printf '%s|%s|%s' \"$LC_ALL\" \"$TMPDIR\" \"${LD_PRELOAD-unset}\"";
    let out = runner.run(sh, ["-c", script]).await.unwrap();
    assert_eq!(runner.warm_ready(sh), 0, "the warm process ran it");
    let out = String::from_utf8(out.stdout).unwrap();
    let parts: Vec<&str> = out.split('|').collect();
    assert_eq!((parts[0], parts[2]), ("C", "unset"), "{out}");
    assert_eq!(Path::new(parts[1]).parent(), Some(scratch.path()), "{out}");
}

#[tokio::test]
async fn a_cold_process_runs_with_the_allow_list_and_its_own_run_s_directory() {
    let scratch = tempfile::tempdir().unwrap();
    let runner =
        ProcessRunner::new(1, Duration::from_secs(10)).with_scratch_dir(Some(scratch.path()));
    let out = runner
        .run(Path::new("cat"), ["/proc/self/environ"])
        .await
        .unwrap();
    let (entries, home) = allow_listed(&environ_entries(&out.stdout));
    assert_eq!(entries, expected_allow_list());
    assert_eq!(Path::new(&home).parent(), Some(scratch.path()));
    assert!(!Path::new(&home).exists(), "removed after the run");
}

#[tokio::test]
async fn ps_shows_a_warm_process_s_real_command_line_cut_to_its_room() {
    let dir = tempfile::tempdir().unwrap();
    let runner = warm_runner(dir.path());
    let sh = Path::new("sh");
    let cmdline = || async {
        runner.prewarm(sh);
        until_ready(&runner, sh).await;
        let script = "cat /proc/$$/cmdline";
        runner
            .run(sh, ["-c", script, "sh", "argument"])
            .await
            .unwrap()
            .stdout
    };
    // The room: what the process was started with, "sh", "-version" and the padding.
    let room = 2 + 1 + 8 + 1 + SHOWN_COMMAND_LINE_BYTES + 1;
    let shown = cmdline().await;
    let expected = b"sh\0-c\0cat /proc/$$/cmdline\0sh\0argument\0";
    assert_eq!(&shown[..expected.len()], expected);
    assert!(shown[expected.len()..].iter().all(|b| *b == 0));
    assert_eq!(shown.len(), room);
    // A longer one is cut; the program still gets every byte of it.
    let long = "x".repeat(2 * SHOWN_COMMAND_LINE_BYTES);
    runner.prewarm(sh);
    until_ready(&runner, sh).await;
    let script = "printf '%s' \"$1\" | wc -c; tr -d '\\0' < /proc/$$/cmdline | wc -c";
    let out = runner.run(sh, ["-c", script, "sh", &long]).await.unwrap();
    let counts: Vec<usize> = String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(counts[0], long.len());
    assert!(
        counts[1] > SHOWN_COMMAND_LINE_BYTES && counts[1] < room,
        "{counts:?}"
    );
}

#[tokio::test]
async fn a_warm_ffmpeg_writes_what_a_cold_one_writes() {
    let dir = tempfile::tempdir().unwrap();
    let ffmpeg = Path::new("ffmpeg");
    let args = [
        "-nostdin",
        "-v",
        "error",
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=32x24:rate=5",
        "-frames:v",
        "3",
        "-pix_fmt",
        "gray",
        "-f",
        "rawvideo",
        "pipe:1",
    ];
    let cold = ProcessRunner::new(1, Duration::from_secs(10))
        .run(ffmpeg, args)
        .await
        .unwrap();
    assert_eq!(cold.stdout.len(), 3 * 32 * 24);
    let runner = warm_runner(dir.path());
    runner.prewarm(ffmpeg);
    until_ready(&runner, ffmpeg).await;
    let warm = runner.run(ffmpeg, args).await.unwrap();
    assert_eq!(runner.warm_ready(ffmpeg), 0, "the warm process ran it");
    assert_eq!(warm.stdout, cold.stdout);
    // Its failures read as a cold start's do.
    let err = runner
        .run(
            ffmpeg,
            [
                "-v",
                "error",
                "-i",
                "/nonexistent/clip.mp4",
                "-f",
                "null",
                "-",
            ],
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, MediaError::ProcessFailed { stderr_tail, .. } if stderr_tail.contains("No such file")),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_warm_process_that_died_while_it_waited_is_replaced_by_a_cold_start() {
    let printf = Path::new("printf");
    let (_dir, runner) = warmed(printf).await;
    runner.kill_warm(printf).await;
    let out = runner.run(printf, ["%s", "still here"]).await.unwrap();
    assert_eq!(out.stdout, b"still here");
}

#[tokio::test]
async fn a_program_the_library_cannot_enter_always_starts_cold() {
    let dir = tempfile::tempdir().unwrap();
    // A shim that is not a library: the dynamic loader skips it, and the program
    // runs its own arguments (prints its version) instead of saying it is ready.
    let pool = Arc::new(WarmPool {
        per_program: 1,
        shim: Some(dir.path().join("not-a-library.so")),
        memory_limit: 0,
        env: ChildEnv::new(None),
        programs: Mutex::default(),
    });
    std::fs::write(dir.path().join("not-a-library.so"), b"text").unwrap();
    let ffmpeg = Path::new("ffmpeg");
    pool.refill(ffmpeg);
    for _ in 0..500 {
        let refused = pool.stocks()[ffmpeg].refused;
        if refused {
            assert_eq!(pool.ready(ffmpeg), 0);
            pool.refill(ffmpeg);
            assert_eq!(pool.stocks()[ffmpeg].starting, 0, "not tried again");
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the program was never given up on");
}

#[test]
fn an_argument_with_a_nul_byte_never_goes_to_a_warm_process() {
    let pool = WarmPool::off();
    assert!(pool.take(Path::new("printf"), &[arg(b"a\0b")]).is_none());
}

#[test]
fn the_shim_is_written_under_a_name_that_follows_its_content() {
    let dir = tempfile::tempdir().unwrap();
    let path = install_shim(dir.path()).expect("the shim is built on Linux");
    assert_eq!(std::fs::read(&path).unwrap(), SHIM);
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with("mediaedit-warm-") && name.ends_with(".so"),
        "{name}"
    );
    assert_eq!(
        install_shim(dir.path()),
        Some(path),
        "written again in place"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no staging file left"
    );
    let spaced = dir.path().join("a b");
    std::fs::create_dir(&spaced).unwrap();
    assert_eq!(install_shim(&spaced), None, "LD_PRELOAD cannot name it");
}
