//! Chunks across nodes (`--chunk-across-nodes`): a chunked encode's chunks are claims
//! in the queue, run by any node, joined on the edit's node; a node killed while it
//! holds chunks loses only those, and the output is the single-process encode's.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use mediaedit::db::Db;
use serde_json::Value;

use crate::backends::{fresh_cluster_urls, Backend};
use crate::binary::Server;
use crate::clips;
use crate::cluster::{every_edit_done, start_nodes};
use crate::helpers::*;

on_both_backends!(one_node_runs_its_chunks_through_the_queue_and_keeps_no_scratch);

/// (video codec, audio codec, video frames, duration) of the file at `path`.
fn probe(path: &Path) -> (String, String, u64, f64) {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-count_packets", "-show_entries"])
        .args(["stream=codec_type,codec_name,nb_read_packets:format=duration"])
        .args(["-of", "json"])
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stream = |kind: &str| {
        doc["streams"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["codec_type"] == kind)
            .unwrap_or_else(|| panic!("a {kind} stream in {doc}"))
            .clone()
    };
    let (video, audio) = (stream("video"), stream("audio"));
    let frames = video["nb_read_packets"].as_str().unwrap().parse().unwrap();
    let duration = doc["format"]["duration"].as_str().unwrap().parse().unwrap();
    let name = |s: &Value| s["codec_name"].as_str().unwrap().to_string();
    (name(&video), name(&audio), frames, duration)
}

/// The same conversion in one ffmpeg process, as a person would run it.
fn single_process(source: &[u8]) -> (String, String, u64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in.mp4"), dir.path().join("out.ogv"));
    std::fs::write(&input, source).unwrap();
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-i"])
        .arg(&input)
        .args([
            "-map",
            "0:v:0",
            "-map",
            "0:a:0",
            "-c:v",
            "libtheora",
            "-q:v",
            "6",
        ])
        .args(["-c:a", "libvorbis", "-q:a", "4", "-f", "ogg"])
        .arg(&output)
        .status()
        .unwrap();
    assert!(status.success());
    probe(&output)
}

fn assert_same_as_one_process(
    chunked: (String, String, u64, f64),
    whole: &(String, String, u64, f64),
) {
    assert_eq!(
        (&chunked.0, &chunked.1, chunked.2),
        (&whole.0, &whole.1, whole.2),
        "codecs and frames of one process"
    );
    assert!(
        (chunked.3 - whole.3).abs() < 0.05,
        "{} s, {} s in one process",
        chunked.3,
        whole.3
    );
}

/// (id, state, attempts, claimed_by) of every chunk row.
async fn chunk_rows(db: &Db) -> Vec<(String, String, i64, Option<String>)> {
    let text =
        "SELECT id, state, CAST(attempts AS BIGINT), claimed_by FROM edit_chunks ORDER BY id";
    match db {
        Db::Sqlite(pool) => sqlx::query_as(text).fetch_all(pool).await.unwrap(),
        Db::Postgres(pool) => sqlx::query_as(text).fetch_all(pool).await.unwrap(),
    }
}

async fn one_node_runs_its_chunks_through_the_queue_and_keeps_no_scratch(backend: Backend) {
    let app = spawn_app_on(backend, |c| {
        c.chunking.min_chunk_work = 1;
        c.chunking.chunk_across_nodes = true;
        c.retention.sweep_interval_secs = 1;
    })
    .await;
    let source = clips::mp4("320x240", 25, 4.0, true);
    let src = app.fixtures.add("clip.mp4", source.clone());
    let doc = app.run_done(edit(&src, &["video-to-ogg"], None)).await;
    let output = app.download_all(&doc).await.remove(0);
    assert_same_as_one_process(probe(&output), &single_process(&source));

    let rows = chunk_rows(&app.db().await).await;
    assert!(rows.len() >= 2, "the clip was split: {rows:?}");
    for (id, state, attempts, _) in &rows {
        assert_eq!((state.as_str(), *attempts), ("done", 1), "chunk {id}");
    }
    // The source and the chunks were stored for other nodes, and are gone with the edit.
    let id = doc["id"].as_str().unwrap();
    let url = match &app.cluster {
        Some(urls) => urls.storage_url.clone(),
        None => format!("file://{}", app.data_dir.path().join("files").display()),
    };
    let store = mediaedit::storage::from_url(&url).unwrap();
    let scratch = object_store::path::Path::from(format!("edits/{id}/scratch"));
    let left: Vec<_> = store.list(Some(&scratch)).try_collect().await.unwrap();
    assert!(left.is_empty(), "scratch left behind: {left:?}");

    // A node killed between the edit's end and its clean-up leaves scratch objects and
    // chunks not forgotten: the sweep deletes them.
    let leftover = object_store::path::Path::from(format!("edits/{id}/scratch/0-0-0-x/source"));
    store.put(&leftover, b"left".to_vec().into()).await.unwrap();
    let db = app.db().await;
    let mark = "UPDATE edit_chunks SET output_key = 'left' WHERE edit_id = $1";
    match &db {
        Db::Sqlite(pool) => {
            let mark = mark.replace('$', "?");
            sqlx::query(&mark).bind(id).execute(pool).await.unwrap();
        }
        Db::Postgres(pool) => {
            sqlx::query(mark).bind(id).execute(pool).await.unwrap();
        }
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<_> = store.list(Some(&scratch)).try_collect().await.unwrap();
        let unforgotten = db.ended_edits_with_chunks(10).await.unwrap();
        if left.is_empty() && unforgotten.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the sweep left {left:?}, {unforgotten:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(chunk_rows(&db).await.len(), rows.len(), "the rows stay");
}

/// The chunk rows the node stopped with `-STOP` holds, and its node id, read from its
/// temp dir (each held chunk has one there, named after it) and the database: `None`
/// when it held none that is still pending.
async fn held_by_stopped(tmp: &Path, db: &sqlx::PgPool) -> Option<(String, BTreeSet<String>)> {
    let dirs: Vec<String> = std::fs::read_dir(tmp)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("chunk-"))
        .collect();
    let pending: Vec<(String, i64, String)> = sqlx::query_as(
        "SELECT id, CAST(attempts AS BIGINT), claimed_by FROM edit_chunks \
         WHERE state = 'pending' AND claimed_by IS NOT NULL",
    )
    .fetch_all(db)
    .await
    .unwrap();
    let node = pending.iter().find_map(|(id, attempts, node)| {
        let name = format!("chunk-{}-{attempts}-", id.replace('/', "_"));
        dirs.iter()
            .any(|d| d.starts_with(&name))
            .then(|| node.clone())
    })?;
    let held = pending
        .into_iter()
        .filter(|(_, _, n)| *n == node)
        .map(|(id, _, _)| id)
        .collect();
    Some((node, held))
}

/// Waits until `count` nodes have written their slots to `chunk_nodes`.
async fn every_node_seen(pool: &sqlx::PgPool, count: i64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let seen: i64 = sqlx::query_scalar("SELECT count(*) FROM chunk_nodes")
            .fetch_one(pool)
            .await
            .unwrap();
        if seen == count {
            return;
        }
        assert!(Instant::now() < deadline, "{seen} of {count} nodes seen");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn signal(server: &Server, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_share_chunks_and_a_killed_node_loses_only_the_chunks_it_held() {
    const EDITS: usize = 6;
    let urls = fresh_cluster_urls().await;
    let token = create_token_in(&urls.database_url, "chunk-org").await;
    // Every edit encodes: the result cache would answer an edit re-run after the kill
    // from another's output, leaving the chunks the killed node held never run again.
    // Leases of 6 s, not the cluster tests' 2: on a loaded machine a live node can
    // renew a 2 s lease late and lose a chunk it was running, which would then run
    // twice without any node having been killed.
    let chunking = [
        ("MEDIAEDIT_LEASE_SECS", "6"),
        ("MEDIAEDIT_CHUNK_ACROSS_NODES", "true"),
        ("MEDIAEDIT_MIN_CHUNK_WORK", "1"),
        ("MEDIAEDIT_RESULT_CACHE", "false"),
    ];
    let (mut nodes, dirs) = start_nodes(&urls, 3, &chunking).await;
    let db = Db::open(&urls.database_url, 2).await.unwrap();
    let Db::Postgres(pool) = &db else {
        unreachable!()
    };
    every_node_seen(pool, 3).await;
    let fixtures = FixtureServer::start().await;
    let source = clips::mp4("320x240", 25, 4.0, true);
    let src = fixtures.add("clip.mp4", source.clone());
    let mut ids = Vec::new();
    for i in 0..EDITS {
        let response = nodes[i % 3]
            .post_edit(&token, &edit(&src, &["video-to-ogg"], None))
            .await;
        assert_eq!(response.status(), 201);
        let doc: Value = response.json().await.unwrap();
        ids.push(doc["id"].as_str().unwrap().to_string());
    }

    // Freeze the last node the moment it holds a chunk, read what it holds, kill it.
    let tmp = dirs[2].path().join("tmp");
    let deadline = Instant::now() + Duration::from_secs(60);
    let (victim, held) = loop {
        assert!(
            Instant::now() < deadline,
            "the last node never held a chunk"
        );
        let busy = std::fs::read_dir(&tmp)
            .map(|d| {
                d.flatten()
                    .any(|e| e.file_name().to_string_lossy().starts_with("chunk-"))
            })
            .unwrap_or(false);
        if busy {
            signal(&nodes[2], "-STOP");
            // A claim the node sent just before it stopped still commits: let the
            // database finish it before reading what the node holds.
            tokio::time::sleep(Duration::from_millis(500)).await;
            if let Some(found) = held_by_stopped(&tmp, pool).await {
                break found;
            }
            signal(&nodes[2], "-CONT");
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    };
    let victim_edits: BTreeSet<String> =
        sqlx::query_scalar("SELECT id FROM edits WHERE claimed_by = $1 AND status = 'processing'")
            .bind(&victim)
            .fetch_all(pool)
            .await
            .unwrap()
            .into_iter()
            .collect();
    nodes[2].signal_and_wait("-KILL");

    every_edit_done(pool, EDITS, Duration::from_secs(60)).await;

    // Only the chunks the killed node held ran twice (so an edit it held, run again
    // elsewhere, reused its chunks already done); the chunks ran on several nodes.
    let rows = chunk_rows(&db).await;
    let twice: BTreeSet<String> = rows
        .iter()
        .filter(|r| r.2 > 1)
        .map(|r| r.0.clone())
        .collect();
    assert_eq!(twice, held, "chunks run more than once: {rows:?}");
    assert!(rows.iter().all(|r| r.1 == "done"), "{rows:?}");
    let runners: BTreeSet<_> = rows.iter().filter_map(|r| r.3.clone()).collect();
    assert!(runners.len() >= 2, "every chunk ran on one node: {rows:?}");
    // Each edit was cut for the three nodes' six slots, not for its own node's two.
    for id in &ids {
        let cut = rows
            .iter()
            .filter(|r| r.0.starts_with(&format!("{id}/")))
            .count();
        assert!(cut > 2, "edit {id} was cut into {cut} chunks: {rows:?}");
    }
    // An edit ran again only if the killed node held it.
    let again: Vec<String> = sqlx::query_scalar("SELECT id FROM edits WHERE attempt > 1")
        .fetch_all(pool)
        .await
        .unwrap();
    assert!(
        again.iter().all(|id| victim_edits.contains(id)),
        "{again:?}"
    );

    let whole = single_process(&source);
    let bucket = mediaedit::storage::from_url(&urls.storage_url).unwrap();
    for id in &ids {
        let doc = nodes[0].read_edit(&token, id).await;
        assert_eq!(doc["attributes"]["status"], "done", "{doc}");
        let url = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
        let bytes = reqwest::get(url).await.unwrap().bytes().await.unwrap();
        let file = dirs[0].path().join(format!("{id}.ogv"));
        std::fs::write(&file, &bytes).unwrap();
        assert_same_as_one_process(probe(&file), &whole);
        let scratch = object_store::path::Path::from(format!("edits/{id}/scratch"));
        let left: Vec<_> = bucket.list(Some(&scratch)).try_collect().await.unwrap();
        assert!(left.is_empty(), "edit {id} left scratch: {left:?}");
    }
}
