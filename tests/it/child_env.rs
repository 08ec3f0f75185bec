//! The environment of every ffmpeg, ffprobe and PDF drawer the service starts
//! (docs/API.md): the real binary, started with credentials in its own environment,
//! runs a video edit while the process tree is read from /proc; every child, warm
//! (waiting, and running its run) or cold, holds the allow-list and nothing else. The
//! PDF drawer, which stays between pages, holds it too, under the memory limit.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::binary::{token_create, Server};
use crate::clips;
use crate::helpers::*;

const SECRET: &str = "aws-secret-7d1f0c-never-in-a-child";
const MARKER: &str = "marker-3b9e52-never-in-a-child";

/// One child seen: its program, its command line and its environment's entries.
#[derive(Debug, Clone)]
struct Seen {
    comm: String,
    cmdline: String,
    env: Vec<String>,
}

/// The ffmpeg and ffprobe children of `parent` now, with their environments (a
/// child that ended while it was read is left out).
fn children_of(parent: u32) -> Vec<(u32, Seen)> {
    children_named(parent, &["ffmpeg", "ffprobe"])
}

/// The children of `parent` whose program name (cut to 15 bytes, as /proc has it)
/// is one of `names`.
fn children_named(parent: u32, names: &[&str]) -> Vec<(u32, Seen)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = stat[open + 1..close].to_string();
        let ppid = stat[close + 2..]
            .split(' ')
            .nth(1)
            .and_then(|p| p.parse().ok());
        if ppid != Some(parent) || !names.contains(&comm.as_str()) {
            continue;
        }
        // The command line first: a warm process's shim writes its run's environment
        // before its run's command line, so a run's command line read here comes
        // with the run's environment read next. The shim writes both in place, so
        // a read can land halfway through a write: only a pair read the same twice
        // in a row is taken (a torn read is not what the process holds).
        let read = || {
            Some((
                std::fs::read(format!("/proc/{pid}/cmdline")).ok()?,
                std::fs::read(format!("/proc/{pid}/environ")).ok()?,
            ))
        };
        let (Some(first), Some(again)) = (read(), read()) else {
            continue;
        };
        if first != again {
            continue;
        }
        let (cmdline, environ) = first;
        // A child that has exited but is not yet reaped has no memory left: its
        // command line and environment read empty, and it holds nothing.
        if cmdline.is_empty() {
            continue;
        }
        let env = environ
            .split(|b| *b == 0)
            .filter(|e| !e.is_empty())
            .map(|e| String::from_utf8_lossy(e).into_owned())
            .collect();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        found.push((pid, Seen { comm, cmdline, env }));
    }
    found
}

/// Reads the children of `parent` every few milliseconds until `stop`: every
/// distinct (process, environment) seen.
fn watch(parent: u32, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<Vec<Seen>> {
    std::thread::spawn(move || {
        let seen = Mutex::new(BTreeMap::<(u32, Vec<String>, bool), Seen>::new());
        while !stop.load(Ordering::SeqCst) {
            for (pid, child) in children_of(parent) {
                let waiting = child.cmdline.contains("(warm: waiting");
                let key = (pid, child.env.clone(), waiting);
                seen.lock().unwrap().entry(key).or_insert(child);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        seen.into_inner().unwrap().into_values().collect()
    })
}

/// Posts `body` to `server` and waits (90 s at most) for the edit to be done.
async fn edit_done(server: &Server, token: &str, body: &serde_json::Value) {
    let response = server.post_edit(token, body).await;
    assert_eq!(response.status(), 201);
    let id = response.json::<serde_json::Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let doc = server.read_edit(token, &id).await;
        match doc["attributes"]["status"].as_str().unwrap() {
            "done" => return,
            "failed" => panic!("{doc}"),
            _ => assert!(Instant::now() < deadline, "{doc}"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Runs a video edit on a server with `warm` warm processes per program, its own
/// environment holding a secret, the database URL and a marker; every child seen.
async fn children_during_a_video_edit(warm: &str) -> (Vec<Seen>, std::path::PathBuf) {
    let data = tempfile::TempDir::new().unwrap();
    let token = token_create(data.path(), "acme");
    let database_url = format!("sqlite://{}", data.path().join("mediaedit.db").display());
    let server = Server::start(
        data.path(),
        &[
            ("AWS_SECRET_ACCESS_KEY", SECRET),
            ("MEDIAEDIT_DATABASE_URL", &database_url),
            ("MEDIAEDIT_CHILD_ENV_MARKER", MARKER),
            ("MEDIAEDIT_WARM_PROCESSES", warm),
        ],
        Stdio::null(),
    )
    .await;
    let fixtures = FixtureServer::start().await;
    let src = fixtures.add("clip.mp4", clips::mp4("320x240", 25, 2.0, true));
    if warm != "0" {
        // The warm processes load their libraries after the server is up.
        let deadline = Instant::now() + Duration::from_secs(30);
        while !children_of(server.child.id())
            .iter()
            .any(|(_, c)| c.cmdline.contains("(warm: waiting") && c.env.len() == 4)
        {
            assert!(Instant::now() < deadline, "no warm process became ready");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = watch(server.child.id(), stop.clone());
    edit_done(&server, &token, &edit(&src, &["video-to-webm"], None)).await;
    // The warm processes that replace the ones used start after the run: seen too.
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::SeqCst);
    let seen = watcher.join().unwrap();
    drop(server);
    (seen, data.path().join("tmp"))
}

/// Every child in `seen` holds the allow-list, `HOME` and `TMPDIR` under `tmp`, and
/// nothing of the server's environment. Returns how many were seen while a warm
/// process loaded its libraries, before its shim took `LD_PRELOAD` (naming the shim,
/// and nothing else) out of the environment.
fn assert_allow_listed(seen: &[Seen], tmp: &Path) -> usize {
    let path = format!("PATH={}", std::env::var("PATH").unwrap());
    let shim = format!("LD_PRELOAD={}/", tmp.with_file_name("lib").display());
    let mut loading = 0;
    for child in seen {
        let mut env = child.env.clone();
        if let Some(at) = env.iter().position(|e| e.starts_with("LD_PRELOAD=")) {
            let preload = env.remove(at);
            assert!(
                preload.starts_with(&shim)
                    && preload.ends_with(".so")
                    && !preload.contains(':')
                    && child.cmdline.contains("(warm: waiting"),
                "only a loading warm process names its shim: {child:?}"
            );
            loading += 1;
        }
        let text = env.join("\n");
        for leak in [
            SECRET,
            MARKER,
            "AWS_",
            "MEDIAEDIT_",
            "LD_PRELOAD",
            "sqlite:",
        ] {
            assert!(!text.contains(leak), "{leak} reached {child:?}");
        }
        let child = &Seen {
            env,
            ..child.clone()
        };
        let names: Vec<&str> = child
            .env
            .iter()
            .map(|e| e.split_once('=').map_or(e.as_str(), |(name, _)| name))
            .collect();
        assert_eq!(names, ["HOME", "LC_ALL", "PATH", "TMPDIR"], "{child:?}");
        assert_eq!(
            (child.env[1].as_str(), child.env[2].as_str()),
            ("LC_ALL=C", path.as_str())
        );
        let home = Path::new(child.env[0].strip_prefix("HOME=").unwrap());
        assert!(home.starts_with(tmp), "{child:?}");
        assert_eq!(
            child.env[3].strip_prefix("TMPDIR="),
            child.env[0].strip_prefix("HOME=")
        );
    }
    loading
}

#[tokio::test]
async fn warm_ffmpeg_and_ffprobe_hold_only_the_allow_list_waiting_and_running() {
    let (seen, tmp) = children_during_a_video_edit("2").await;
    // ffmpeg and ffprobe are both started warm; on a machine too loaded for one to
    // load within its 10 s it starts cold instead, so one program waiting suffices.
    assert!(
        seen.iter().any(|c| c.cmdline.contains("(warm: waiting")),
        "{seen:#?}"
    );
    let ran = seen
        .iter()
        .filter(|c| c.comm == "ffmpeg" && c.cmdline.contains("libvpx"))
        .count();
    assert!(ran >= 1, "an ffmpeg was seen running the edit: {seen:#?}");
    let loading = assert_allow_listed(&seen, &tmp);
    // The shim is out of the environment once it is loaded: a waiting process is
    // seen far more often than one that is loading.
    let waited = seen
        .iter()
        .filter(|c| c.cmdline.contains("(warm: waiting"))
        .count();
    assert!(waited > loading, "{waited} waiting, {loading} loading");
    // A running one's HOME is its run's own directory, not the waiting one's.
    let neutral = format!("HOME={}", tmp.display());
    for child in seen.iter().filter(|c| c.cmdline.contains("libvpx")) {
        assert_ne!(child.env[0], neutral, "{child:?}");
    }
}

#[tokio::test]
async fn cold_ffmpeg_holds_only_the_allow_list() {
    let (seen, tmp) = children_during_a_video_edit("0").await;
    assert!(
        seen.iter()
            .any(|c| c.comm == "ffmpeg" && c.cmdline.contains("libvpx")),
        "an ffmpeg was seen running the edit: {seen:#?}"
    );
    assert!(seen.iter().all(|c| !c.cmdline.contains("(warm:")));
    assert_eq!(
        assert_allow_listed(&seen, &tmp),
        0,
        "no warm process loading"
    );
}

#[tokio::test]
async fn the_pdf_drawer_holds_only_the_allow_list_under_the_memory_limit() {
    let data = tempfile::TempDir::new().unwrap();
    let token = token_create(data.path(), "acme");
    let server = Server::start(
        data.path(),
        &[
            ("AWS_SECRET_ACCESS_KEY", SECRET),
            ("MEDIAEDIT_CHILD_ENV_MARKER", MARKER),
            ("MEDIAEDIT_PROCESS_MEMORY_LIMIT", "1073741824"),
        ],
        Stdio::null(),
    )
    .await;
    let fixtures = FixtureServer::start().await;
    let src = fixtures.add("doc.pdf", crate::pdf::two_pages());
    edit_done(&server, &token, &edit(&src, &["image-to-webp"], None)).await;
    // The drawer waits for the next page: read it at leisure.
    let drawers = children_named(server.child.id(), &["mediaedit-pdf-d"]);
    assert_eq!(drawers.len(), 1, "one idle drawer after one page");
    let (pid, drawer) = &drawers[0];
    assert!(
        drawer.cmdline.starts_with(&format!(
            "{}/mediaedit-pdf-drawer-",
            data.path().join("lib").display()
        )),
        "{drawer:?}"
    );
    assert_allow_listed(std::slice::from_ref(drawer), &data.path().join("tmp"));
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let data_limit = limits
        .lines()
        .find(|l| l.starts_with("Max data size"))
        .unwrap()
        .split_whitespace()
        .nth(3)
        .unwrap()
        .to_string();
    assert_eq!(data_limit, "1073741824", "{limits}");
}
