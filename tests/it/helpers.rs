//! The test harness: the real app on port 0 with a temp data dir, a fixture server
//! on loopback, and typed helpers for the API.

use std::path::Path;
use std::process::Command as Process;
use std::sync::Once;
use std::time::{Duration, Instant};

use mediaedit::app::App;
use mediaedit::config::ServeConfig;
use mediaedit::db::Db;
use serde_json::{json, Value};
use tempfile::TempDir;

use crate::backends::{fresh_cluster_urls, Backend, ClusterUrls};
pub use crate::fixture_server::FixtureServer;

pub const ORG: &str = "acme";

fn init_logging() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("TEST_LOG").is_some() {
            tracing_subscriber::fmt()
                .with_env_filter("info,sqlx=warn")
                .with_test_writer()
                .init();
        }
    });
}

/// A running app plus everything a test needs to talk to it.
pub struct TestApp {
    pub app: Option<App>,
    pub base: String,
    pub token: String,
    pub client: reqwest::Client,
    pub data_dir: TempDir,
    pub fixtures: FixtureServer,
    /// PostgreSQL and S3 locations when the app runs on [`Backend::Cluster`].
    pub cluster: Option<ClusterUrls>,
}

/// The settings tests use: loopback sources allowed, fast polling and retries.
pub fn test_config(data_dir: &Path) -> ServeConfig {
    let mut config = ServeConfig::with_data_dir(data_dir.to_path_buf());
    config.listen = "127.0.0.1:0".parse().unwrap();
    config.allow_private_sources = true;
    config.poll_ms = 100;
    config.retry_base_ms = 100;
    config.lease_secs = 5;
    // Tests poll fast; the rate limit has its own test.
    config.rate_limits.off();
    config
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// Starts an app whose config `adjust` may change (from [`test_config`]).
pub async fn spawn_app_with(adjust: impl FnOnce(&mut ServeConfig)) -> TestApp {
    spawn_app_on(Backend::Embedded, adjust).await
}

/// Starts an app on `backend` whose config `adjust` may change (from [`test_config`]).
pub async fn spawn_app_on(backend: Backend, adjust: impl FnOnce(&mut ServeConfig)) -> TestApp {
    init_logging();
    let data_dir = TempDir::new().unwrap();
    let cluster = match backend {
        Backend::Embedded => None,
        Backend::Cluster => Some(fresh_cluster_urls().await),
    };
    let mut config = test_config(data_dir.path());
    use_backend(&mut config, cluster.as_ref());
    let token = create_token_in(&config.database_url(), ORG).await;
    adjust(&mut config);
    let app = App::start(config).await.expect("the app starts");
    let base = format!("http://{}", app.addr);
    let test_app = TestApp {
        app: Some(app),
        base,
        token,
        client: reqwest::Client::new(),
        data_dir,
        fixtures: FixtureServer::start().await,
        cluster,
    };
    test_app.wait_healthy().await;
    test_app
}

/// Points `config` at the cluster backend's database and bucket prefix, if any.
pub fn use_backend(config: &mut ServeConfig, cluster: Option<&ClusterUrls>) {
    if let Some(urls) = cluster {
        config.database_url = Some(urls.database_url.parse().unwrap());
        config.storage_url = Some(urls.storage_url.clone());
    }
}

/// Creates a token for `org` in the database under `data_dir`.
pub async fn create_token(data_dir: &Path, org: &str) -> String {
    create_token_in(
        &format!("sqlite://{}", data_dir.join("mediaedit.db").display()),
        org,
    )
    .await
}

/// Creates a token for `org` in the database at `url`.
pub async fn create_token_in(url: &str, org: &str) -> String {
    let db = Db::open(url, 2).await.unwrap();
    let token = format!("me_test_{}", uuid::Uuid::new_v4().simple());
    db.create_token(org, &token).await.unwrap();
    token
}

impl TestApp {
    /// The database this app runs on, for tokens of other organizations.
    pub fn database_url(&self) -> String {
        let mut config = test_config(self.data_dir.path());
        use_backend(&mut config, self.cluster.as_ref());
        config.database_url()
    }

    pub async fn wait_healthy(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(r) = self
                .client
                .get(format!("{}/healthz", self.base))
                .send()
                .await
            {
                if r.status() == 200 {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "the app did not become healthy");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops the app (graceful), keeping its data dir.
    pub async fn stop(&mut self) {
        if let Some(app) = self.app.take() {
            app.stop().await.unwrap();
        }
    }

    /// Starts the app again on the same data dir (a new port).
    pub async fn restart_with(&mut self, adjust: impl FnOnce(&mut ServeConfig)) {
        self.stop().await;
        let mut config = test_config(self.data_dir.path());
        use_backend(&mut config, self.cluster.as_ref());
        adjust(&mut config);
        let app = App::start(config).await.unwrap();
        self.base = format!("http://{}", app.addr);
        self.app = Some(app);
        self.wait_healthy().await;
    }

    /// A second handle on the app's database (as another node would open it).
    pub async fn db(&self) -> Db {
        let mut config = test_config(self.data_dir.path());
        use_backend(&mut config, self.cluster.as_ref());
        Db::open(&config.database_url(), 4).await.unwrap()
    }

    /// Edit `id` of [`ORG`] as its row is stored, read straight from the database.
    pub async fn edit_row(&self, id: &str) -> mediaedit::db::EditRow {
        let db = self.db().await;
        let row = db.get_edit(&ORG.into(), &id.into(), 0).await.unwrap();
        row.expect("the edit's row")
    }

    /// `method path` with the app's token and no body: the status and the JSON answer
    /// (`Null` when there is none).
    pub async fn send(&self, method: reqwest::Method, path: &str) -> (u16, Value) {
        let response = self
            .client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Uploads `bytes` in one direct `POST /v1/uploads` that must be accepted; returns
    /// the Upload document.
    pub async fn upload(&self, bytes: Vec<u8>) -> Value {
        let response = self
            .client
            .post(format!("{}/v1/uploads", self.base))
            .bearer_auth(&self.token)
            .body(bytes)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201, "upload not created");
        response.json().await.unwrap()
    }

    /// The body of `GET url` with the app's token (an upload's `src`, say).
    pub async fn bytes_of(&self, url: &str) -> Vec<u8> {
        let response = self.client.get(url).bearer_auth(&self.token).send();
        response.await.unwrap().bytes().await.unwrap().to_vec()
    }

    pub async fn post_edit(&self, body: Value) -> reqwest::Response {
        self.post_edit_as(&self.token, body).await
    }

    pub async fn post_edit_as(&self, token: &str, body: Value) -> reqwest::Response {
        self.client
            .post(format!("{}/v1/edits", self.base))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    pub async fn get_edit(&self, id: &str) -> reqwest::Response {
        self.get_edit_as(&self.token, id).await
    }

    pub async fn get_edit_as(&self, token: &str, id: &str) -> reqwest::Response {
        self.client
            .get(format!("{}/v1/edits/{id}", self.base))
            .bearer_auth(token)
            .header("Content-Type", "application/json")
            .send()
            .await
            .unwrap()
    }

    /// Posts an edit that must be accepted; returns its id.
    pub async fn create_edit(&self, body: Value) -> String {
        let response = self.post_edit(body).await;
        let status = response.status();
        let doc: Value = response.json().await.unwrap();
        assert_eq!(status, 201, "edit not created: {doc}");
        assert_eq!(doc["attributes"]["status"], "queued");
        doc["id"].as_str().unwrap().to_string()
    }

    /// Polls until the edit is `done`, `failed` or `canceled`; returns the document.
    pub async fn wait_finished(&self, id: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let doc: Value = self.get_edit(id).await.json().await.unwrap();
            let status = doc["attributes"]["status"].as_str().unwrap().to_string();
            if ["done", "failed", "canceled"].contains(&status.as_str()) {
                return doc;
            }
            assert!(Instant::now() < deadline, "edit {id} still {status}: {doc}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Runs an edit to completion and asserts it is `done`.
    pub async fn run_done(&self, body: Value) -> Value {
        let id = self.create_edit(body).await;
        let doc = self.wait_finished(&id).await;
        assert_eq!(doc["attributes"]["status"], "done", "edit failed: {doc}");
        doc
    }

    /// Runs an edit to completion and asserts it `failed`; returns `error`.
    pub async fn run_failed(&self, body: Value) -> Value {
        let id = self.create_edit(body).await;
        let doc = self.wait_finished(&id).await;
        assert_eq!(
            doc["attributes"]["status"], "failed",
            "edit did not fail: {doc}"
        );
        assert!(doc["attributes"].get("downloadUrls").is_none());
        doc["attributes"]["error"].clone()
    }

    /// Downloads every URL of a done edit into the data dir; returns the paths.
    pub async fn download_all(&self, doc: &Value) -> Vec<std::path::PathBuf> {
        let mut paths = Vec::new();
        for (i, url) in doc["attributes"]["downloadUrls"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            let url = url.as_str().unwrap();
            let response = reqwest::get(url).await.unwrap();
            assert_eq!(response.status(), 200, "download of {url}");
            let bytes = response.bytes().await.unwrap();
            let ext = url.split('?').next().unwrap().rsplit('.').next().unwrap();
            let path = self.data_dir.path().join(format!(
                "download-{}-{i}.{ext}",
                uuid::Uuid::new_v4().simple()
            ));
            std::fs::write(&path, &bytes).unwrap();
            paths.push(path);
        }
        paths
    }
}

/// An edit body with one asset.
pub fn edit(src: &str, commands: &[&str], options: Option<Value>) -> Value {
    let mut body = json!({ "assets": [{ "type": "image", "src": src }], "commands": commands });
    if let Some(options) = options {
        body["options"] = options;
    }
    body
}

/// `ffprobe -of json` of a file.
pub fn probe(path: &Path) -> Value {
    let out = Process::new("ffprobe")
        .args([
            "-v",
            "error",
            "-print_format",
            "json",
            "-show_format",
            "-show_streams",
            "-count_frames",
        ])
        .arg(path)
        .output()
        .expect("ffprobe runs");
    assert!(
        out.status.success(),
        "ffprobe failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The first video stream of a probe.
pub fn video_stream(probe: &Value) -> &Value {
    probe["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["codec_type"] == "video")
        .expect("a video stream")
}

/// The Python of the virtual environment `scripts/install-deps.sh --test` makes.
/// Runs the Python script `name` of tests/it (a browser driven by Playwright) with
/// `args` in the test venv, as a child process (the app serves from the test's own
/// runtime meanwhile): the JSON object it prints last. Fails the test on a non-zero exit.
pub async fn run_script<S: AsRef<std::ffi::OsStr>>(name: &str, args: &[S]) -> serde_json::Value {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it")
        .join(name);
    let out = tokio::process::Command::new(test_python())
        .arg(script)
        .args(args)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

/// The path of a browser player fetched once from npm by `scripts/<script>` (dash.js,
/// hls.js's full build), which prints it.
pub async fn npm_player(script: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(script);
    let out = tokio::process::Command::new(path).output().await.unwrap();
    assert!(
        out.status.success(),
        "scripts/{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

pub fn test_python() -> std::path::PathBuf {
    match std::env::var_os("MEDIAEDIT_TEST_VENV") {
        Some(dir) => std::path::PathBuf::from(dir).join("bin/python"),
        None => dirs_home().join(".cache/mediaedit-test-venv/bin/python"),
    }
}

fn dirs_home() -> std::path::PathBuf {
    std::path::PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
}
