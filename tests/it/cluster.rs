//! Several nodes on one PostgreSQL and one S3 bucket: roles, NOTIFY wake-ups, and
//! every edit finished exactly once when a node is killed mid-work.

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use mediaedit::app::App;
use mediaedit::config::Role;
use mediaedit::db::Db;
use serde_json::{json, Value};

use crate::backends::{bucket, fresh_cluster_urls, s3_env, Backend, ClusterUrls};
use crate::binary::{Server, BIN};
use crate::fixtures;
use crate::helpers::*;

#[tokio::test]
async fn an_api_node_only_queues_and_a_worker_node_is_woken_by_notify() {
    let api = spawn_app_on(Backend::Cluster, |c| c.role = Role::Api).await;
    let src = api.fixtures.add("a.png", fixtures::png(40, 20));
    let first = api.create_edit(edit(&src, &["image-to-webp"], None)).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let doc: Value = api.get_edit(&first).await.json().await.unwrap();
    assert_eq!(
        doc["attributes"]["status"], "queued",
        "an api node runs no workers"
    );

    // A worker node that polls once a minute: only a notification wakes it in time.
    let worker_dir = tempfile::TempDir::new().unwrap();
    let mut config = test_config(worker_dir.path());
    use_backend(&mut config, api.cluster.as_ref());
    config.role = Role::Worker;
    config.poll_ms = 60_000;
    let worker = App::start(config).await.unwrap();
    let worker_base = format!("http://{}", worker.addr);
    let client = reqwest::Client::new();
    let health = client
        .get(format!("{worker_base}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    let api_route = client
        .get(format!("{worker_base}/v1/edits/{first}"))
        .bearer_auth(&api.token)
        .send()
        .await
        .unwrap();
    assert_eq!(api_route.status(), 404, "a worker node serves no API");

    // The worker's first look at the queue takes the waiting edit.
    assert_eq!(
        api.wait_finished(&first).await["attributes"]["status"],
        "done"
    );
    // Now it is idle until woken: a new edit on the api node must reach it at once.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    let doc = api
        .run_done(edit(&src, &["resize-image"], Some(json!({ "scale": 0.5 }))))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "woken by NOTIFY, not by the 60 s poll: {:?}",
        started.elapsed()
    );
    // Outputs are in the shared bucket: the api node serves the download.
    let out = &api.download_all(&doc).await[0];
    assert_eq!(
        image::GenericImageView::dimensions(&fixtures::decode(out)),
        (20, 10)
    );
    worker.stop().await.unwrap();
}

/// `mediaedit token create --database-url URL --org ORG`; the token printed last.
fn token_create_on(database_url: &str, org: &str) -> String {
    let out = Command::new(BIN)
        .args([
            "token",
            "create",
            "--database-url",
            database_url,
            "--org",
            org,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .trim()
        .to_string()
}

/// `count` nodes of the binary on the cluster of `urls`, each with a data dir of its
/// own, two workers, 2 s leases and no rate limits, with `extra` settings beside.
pub async fn start_nodes(
    urls: &ClusterUrls,
    count: usize,
    extra: &[(&str, &str)],
) -> (Vec<Server>, Vec<tempfile::TempDir>) {
    let mut env: Vec<(&str, String)> = s3_env();
    env.extend([
        ("MEDIAEDIT_DATABASE_URL", urls.database_url.clone()),
        ("MEDIAEDIT_STORAGE_URL", urls.storage_url.clone()),
        ("MEDIAEDIT_WORKERS", "2".into()),
        ("MEDIAEDIT_LEASE_SECS", "2".into()),
        ("MEDIAEDIT_WRITE_RATE_LIMIT_PER_SECOND", "0".into()),
        ("MEDIAEDIT_READ_RATE_LIMIT_PER_SECOND", "0".into()),
    ]);
    env.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let dirs: Vec<_> = (0..count)
        .map(|_| tempfile::TempDir::new().unwrap())
        .collect();
    let mut nodes = Vec::new();
    for dir in &dirs {
        nodes.push(Server::start(dir.path(), &env, Stdio::null()).await);
    }
    (nodes, dirs)
}

/// How many edits of the cluster's database have `status`.
async fn edits_with_status(pool: &sqlx::PgPool, status: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM edits WHERE status = $1")
        .bind(status)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// Waits until `edits` edits of the cluster's database are `done`, none `failed`,
/// for at most `within`.
pub async fn every_edit_done(pool: &sqlx::PgPool, edits: usize, within: Duration) {
    let count = |status| edits_with_status(pool, status);
    let deadline = Instant::now() + within;
    while count("done").await < edits as i64 {
        assert_eq!(count("failed").await, 0, "no edit may fail");
        let done = count("done").await;
        assert!(Instant::now() < deadline, "only {done} of {edits} done");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_finish_every_edit_exactly_once_when_one_is_killed() {
    const EDITS: usize = 100;
    let urls = fresh_cluster_urls().await;
    let token = token_create_on(&urls.database_url, "cluster-org");
    // A node holds 2 + 2 claims, of which one organization 2.
    let (mut nodes, _dirs) = start_nodes(&urls, 3, &[("MEDIAEDIT_FETCH_CONCURRENCY", "2")]).await;

    // Sources answer after 300 ms, so every node is mid-work when one is killed.
    let fixture_server = FixtureServer::start().await;
    fixture_server.add("a.png", fixtures::png(64, 32));
    fixture_server.add("b.jpg", fixtures::jpeg(48, 48));
    let client = reqwest::Client::new();
    let mut expected = BTreeMap::new();
    for i in 0..EDITS {
        let (name, command, options) = match i % 3 {
            0 => ("a.png", "resize-image", Some(json!({ "scale": 0.5 }))),
            1 => ("b.jpg", "image-to-webp", None),
            _ => ("b.jpg", "resize-image", Some(json!({ "format": "webp" }))),
        };
        let src = fixture_server.slow_url(name, 300);
        let mut body = edit(&src, &[command], options);
        // Every fifth edit has two assets, so two outputs.
        let outputs = if i % 5 == 0 {
            body["assets"]
                .as_array_mut()
                .unwrap()
                .push(json!({ "type": "image", "src": fixture_server.slow_url("a.png", 300) }));
            2
        } else {
            1
        };
        let node = &nodes[i % 3];
        let response = client
            .post(format!("{}/v1/edits", node.base))
            .bearer_auth(&token)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        let doc: Value = response.json().await.unwrap();
        expected.insert(doc["id"].as_str().unwrap().to_string(), outputs);
    }

    let db = Db::open(&urls.database_url, 2).await.unwrap();
    let Db::Postgres(pool) = &db else {
        unreachable!()
    };
    let count = |status| edits_with_status(pool, status);
    let deadline = Instant::now() + Duration::from_secs(60);
    while count("done").await < 10 {
        assert!(Instant::now() < deadline, "edits did not start finishing");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    nodes[2].signal_and_wait("-KILL");

    every_edit_done(pool, EDITS, Duration::from_secs(120)).await;

    // The recorded outputs belong to each edit's final claim, and no edit was retried
    // for a failure: an attempt above 1 can only come from the killed node's claims.
    let rows: Vec<(String, i64, i64, String)> =
        sqlx::query_as("SELECT id, attempt, failures, outputs FROM edits")
            .fetch_all(pool)
            .await
            .unwrap();
    assert_eq!(rows.len(), EDITS);
    let mut reclaimed = BTreeSet::new();
    for (id, attempt, failures, outputs) in &rows {
        assert_eq!(*failures, 0, "edit {id} hit a retryable failure");
        let outputs: Vec<mediaedit::db::StoredOutput> = serde_json::from_str(outputs).unwrap();
        let keys: Vec<&str> = outputs.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys.len(), expected[id], "edit {id}: {keys:?}");
        for key in &keys {
            assert!(
                key.starts_with(&format!("edits/{id}/{attempt}/")),
                "edit {id} attempt {attempt}: {key}"
            );
        }
        if *attempt > 1 {
            reclaimed.insert(id.clone());
        }
    }
    assert!(
        !reclaimed.is_empty(),
        "the killed node held no edit; the test proved nothing"
    );
    assert!(
        reclaimed.len() <= 2,
        "only the killed node's two claims may run again: {reclaimed:?}"
    );

    // In the bucket: every edit's outputs under its final attempt; any other attempt's
    // objects only for the edits the killed node held.
    let objects: Vec<_> = bucket()
        .list(Some(&format!("{}/edits", urls.prefix).as_str().into()))
        .try_collect()
        .await
        .unwrap();
    let mut attempts: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    for object in &objects {
        let parts: Vec<&str> = object.location.as_ref().split('/').collect();
        // <prefix>/edits/<id>/<attempt>/<asset>-<n>.<ext>
        attempts
            .entry(parts[2].to_string())
            .or_default()
            .insert(parts[3].parse().unwrap());
    }
    for (id, attempt, _, _) in &rows {
        let stored = &attempts[id];
        assert!(stored.contains(attempt), "edit {id}: {stored:?}");
        if !reclaimed.contains(id) {
            assert_eq!(stored.len(), 1, "edit {id} was processed twice: {stored:?}");
        }
    }

    // Every output downloads from either surviving node, whichever signed the URL.
    for (n, (id, outputs)) in expected.iter().enumerate() {
        let reader = &nodes[n % 2];
        let doc = reader.read_edit(&token, id).await;
        assert_eq!(doc["attributes"]["status"], "done", "{doc}");
        let links = doc["attributes"]["downloadUrls"].as_array().unwrap();
        assert_eq!(links.len(), *outputs, "{doc}");
        for link in links {
            let link = link.as_str().unwrap();
            let other = link.replace(&reader.base, &nodes[(n + 1) % 2].base);
            for url in [link, other.as_str()] {
                let response = client.get(url).send().await.unwrap();
                assert_eq!(response.status(), 200, "{url}");
                let bytes = response.bytes().await.unwrap();
                image::load_from_memory(&bytes).expect("a decodable image");
            }
        }
    }
}

#[tokio::test]
async fn a_signing_key_file_from_before_moves_into_the_database() {
    let dir = tempfile::TempDir::new().unwrap();
    let key = [7u8; 32];
    std::fs::write(dir.path().join("signing.key"), key).unwrap();
    let db = Db::open_sqlite(&dir.path().join("mediaedit.db"))
        .await
        .unwrap();
    let shared = mediaedit::storage::shared_signing_key;
    assert_eq!(shared(&db, Some(dir.path())).await.unwrap(), key);
    std::fs::remove_file(dir.path().join("signing.key")).unwrap();
    assert_eq!(
        shared(&db, Some(dir.path())).await.unwrap(),
        key,
        "kept in the database"
    );
}

#[tokio::test]
async fn nodes_starting_at_once_migrate_once_and_agree_on_one_signing_key() {
    let urls = fresh_cluster_urls().await;
    // Migrations run at every start; the migrator's advisory lock serializes them.
    let (a, b, c) = tokio::join!(
        Db::open(&urls.database_url, 2),
        Db::open(&urls.database_url, 2),
        Db::open(&urls.database_url, 2),
    );
    let (a, b, _) = (a.unwrap(), b.unwrap(), c.unwrap());
    let shared = mediaedit::storage::shared_signing_key;
    let (a, b) = tokio::join!(shared(&a, None), shared(&b, None));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a, b);
    assert_eq!(a.len(), 32);
}
