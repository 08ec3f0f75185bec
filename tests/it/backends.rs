//! The scale-out backends, for real: a throwaway PostgreSQL cluster (`initdb` +
//! `pg_ctl` on a free port in a temp dir) and an S3-protocol server (`s3s-fs`, which
//! checks request signatures) on loopback.
//!
//! Both start once per test binary, on first use, and are stopped when the binary
//! exits (an `atexit` hook drops them; each kills its server on drop). Every test gets
//! its own database and its own key prefix in the one bucket. If either cannot start,
//! the test fails and says why: these tests are never skipped.
//!
//! Finding the programs: `MEDIAEDIT_TEST_PG_BIN` (a directory holding `initdb`,
//! `pg_ctl`), else `PATH`, else the newest `/usr/lib/postgresql/*/bin` (Debian's
//! `postgresql` package); `MEDIAEDIT_TEST_S3S_FS` (the `s3s-fs` binary), else `PATH`,
//! else `~/.cargo/bin/s3s-fs`. `scripts/install-deps.sh` installs both.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The bucket every test's objects go into, each test under its own prefix.
pub const BUCKET: &str = "mediaedit-test";
const S3_ACCESS_KEY: &str = "mediaedit-test-access";
const S3_SECRET_KEY: &str = "mediaedit-test-secret-key";

/// Which database and store a test app runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite and local files in the data dir: the embedded default.
    Embedded,
    /// PostgreSQL and an S3 bucket: what a cluster runs on.
    Cluster,
}

/// Where one test's cluster-backend data lives.
#[derive(Debug, Clone)]
pub struct ClusterUrls {
    pub database_url: String,
    pub storage_url: String,
    /// The key prefix in [`BUCKET`] that `storage_url` names.
    pub prefix: String,
}

/// A fresh database and bucket prefix on the shared servers (started on first use).
pub async fn fresh_cluster_urls() -> ClusterUrls {
    let (pg_port, _) = shared();
    let name = format!("t_{}", uuid::Uuid::new_v4().simple());
    let admin = format!("postgres://postgres@127.0.0.1:{pg_port}/postgres");
    let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&admin)
        .await
        .unwrap_or_else(|e| panic!("connecting to the test PostgreSQL failed: {e}"));
    sqlx::Executor::execute(&mut conn, format!("CREATE DATABASE {name}").as_str())
        .await
        .expect("creating a test database");
    let prefix = format!("run-{}", uuid::Uuid::new_v4().simple());
    ClusterUrls {
        database_url: format!("postgres://postgres@127.0.0.1:{pg_port}/{name}"),
        storage_url: format!("s3://{BUCKET}/{prefix}"),
        prefix,
    }
}

/// The `AWS_*` variables that point the S3 client at the test server (also set in
/// this process's environment once the server runs, for apps started in-process).
pub fn s3_env() -> Vec<(&'static str, String)> {
    let (_, s3_port) = shared();
    vec![
        ("AWS_ENDPOINT", format!("http://127.0.0.1:{s3_port}")),
        ("AWS_REGION", "us-east-1".into()),
        ("AWS_ACCESS_KEY_ID", S3_ACCESS_KEY.into()),
        ("AWS_SECRET_ACCESS_KEY", S3_SECRET_KEY.into()),
        ("AWS_ALLOW_HTTP", "true".into()),
    ]
}

/// The bucket, as the app's storage sees it (for listing what was stored).
pub fn bucket() -> std::sync::Arc<dyn object_store::ObjectStore> {
    shared();
    mediaedit::storage::from_url(&format!("s3://{BUCKET}")).expect("the test bucket opens")
}

/// Held only to be dropped at exit, which stops both servers.
struct Servers {
    _pg: PgCluster,
    _s3: S3Server,
}

static SERVERS: Mutex<Option<Servers>> = Mutex::new(None);
static PORTS: OnceLock<(u16, u16)> = OnceLock::new();

/// Starts both servers once; returns (PostgreSQL port, S3 port).
fn shared() -> (u16, u16) {
    *PORTS.get_or_init(|| {
        let pg = PgCluster::start().unwrap_or_else(|e| {
            panic!("PostgreSQL could not be started for the tests: {e} (scripts/install-deps.sh installs it)")
        });
        let s3 = S3Server::start().unwrap_or_else(|e| {
            panic!("the S3 server (s3s-fs) could not be started for the tests: {e} (scripts/install-deps.sh installs it)")
        });
        let ports = (pg.port, s3.port);
        // Set once, before any cluster-backend app exists; std serializes environment
        // access, so readers in other threads see either nothing or the whole value.
        for (k, v) in [
            ("AWS_ENDPOINT", format!("http://127.0.0.1:{}", s3.port)),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ACCESS_KEY_ID", S3_ACCESS_KEY.into()),
            ("AWS_SECRET_ACCESS_KEY", S3_SECRET_KEY.into()),
            ("AWS_ALLOW_HTTP", "true".into()),
        ] {
            std::env::set_var(k, v);
        }
        *SERVERS.lock().unwrap() = Some(Servers { _pg: pg, _s3: s3 });
        extern "C" fn stop_servers() {
            if let Ok(mut servers) = SERVERS.lock() {
                drop(servers.take());
            }
        }
        extern "C" {
            fn atexit(callback: extern "C" fn()) -> std::os::raw::c_int;
        }
        // SAFETY: registers a plain function without captured state; the test harness
        // exits through `exit`, which runs it once.
        unsafe { atexit(stop_servers) };
        ports
    })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// `name` in `env_dir`, on `PATH`, or in one of `fallbacks`.
fn find_program(name: &str, env_dir: Option<PathBuf>, fallbacks: &[PathBuf]) -> Option<PathBuf> {
    if let Some(dir) = env_dir {
        return Some(dir.join(name)).filter(|p| p.exists());
    }
    let on_path = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path
        .iter()
        .chain(fallbacks)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// A PostgreSQL cluster in a temp dir; stopped (immediately) on drop.
pub struct PgCluster {
    dir: TempDir,
    pg_ctl: PathBuf,
    as_postgres: bool,
    pub port: u16,
}

impl PgCluster {
    pub fn start() -> Result<PgCluster, String> {
        let env_dir = std::env::var_os("MEDIAEDIT_TEST_PG_BIN").map(PathBuf::from);
        let mut debian: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .map(|entries| entries.flatten().map(|e| e.path().join("bin")).collect())
            .unwrap_or_default();
        debian.sort_by_key(|p| {
            // Newest major version first.
            let version = p
                .parent()
                .and_then(|v| v.file_name())
                .and_then(|v| v.to_str());
            std::cmp::Reverse(version.and_then(|v| v.parse::<u32>().ok()).unwrap_or(0))
        });
        let initdb = find_program("initdb", env_dir.clone(), &debian)
            .ok_or("initdb was not found (set MEDIAEDIT_TEST_PG_BIN or install postgresql)")?;
        let pg_ctl = find_program("pg_ctl", env_dir, &debian)
            .ok_or("pg_ctl was not found (set MEDIAEDIT_TEST_PG_BIN or install postgresql)")?;
        // PostgreSQL refuses to run as root: then it runs as the `postgres` user.
        let as_postgres = running_as_root();
        // The postgres user must reach the cluster dir: under /tmp, not a $TMPDIR that
        // may sit in root's home.
        let parent = if as_postgres {
            PathBuf::from("/tmp")
        } else {
            std::env::temp_dir()
        };
        let dir = tempfile::Builder::new()
            .prefix("mediaedit-pg-")
            .tempdir_in(parent)
            .map_err(|e| e.to_string())?;
        let data = dir.path().join("data");
        if as_postgres {
            let chown = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .map_err(|e| format!("chown: {e}"))?;
            if !chown.success() {
                return Err(
                    "chown of the cluster dir to postgres failed (is there a postgres user?)"
                        .into(),
                );
            }
        }
        let mut cluster = PgCluster {
            dir,
            pg_ctl,
            as_postgres,
            port: 0,
        };
        cluster.run(
            &initdb,
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
            ],
        )?;
        // A free port can be taken between choosing and binding it: try a few.
        let mut last_error = String::new();
        for _ in 0..3 {
            let port = free_port();
            let options = format!(
                "-p {port} -c listen_addresses=127.0.0.1 -k {} -c fsync=off -c synchronous_commit=off \
                 -c full_page_writes=off -c max_connections=400 -c shared_buffers=64MB",
                cluster.dir.path().display()
            );
            let log = cluster.dir.path().join("postgres.log");
            let started = cluster.run(
                &cluster.pg_ctl.clone(),
                &[
                    "start",
                    "-w",
                    "-t",
                    "30",
                    "-D",
                    data.to_str().unwrap(),
                    "-l",
                    log.to_str().unwrap(),
                    "-o",
                    &options,
                ],
            );
            match started {
                Ok(()) => {
                    cluster.port = port;
                    return Ok(cluster);
                }
                Err(e) => {
                    last_error = format!(
                        "{e}; log: {}",
                        std::fs::read_to_string(&log).unwrap_or_default()
                    )
                }
            }
        }
        Err(last_error)
    }

    /// Runs `program args` as the cluster's owner; Err with its output on failure.
    fn run(&self, program: &Path, args: &[&str]) -> Result<(), String> {
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        };
        let out = command
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("running {}: {e}", program.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{} {} failed: {}{}",
                program.display(),
                args.first().unwrap_or(&""),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        let _ = self.run(
            &self.pg_ctl.clone(),
            &["stop", "-m", "immediate", "-D", data.to_str().unwrap()],
        );
    }
}

/// An `s3s-fs` server on loopback with one bucket; killed on drop.
pub struct S3Server {
    child: Child,
    _root: TempDir,
    pub port: u16,
}

impl S3Server {
    pub fn start() -> Result<S3Server, String> {
        let home_bin = std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(".cargo/bin"))
            .into_iter()
            .collect::<Vec<_>>();
        let binary = match std::env::var_os("MEDIAEDIT_TEST_S3S_FS") {
            Some(path) => Some(PathBuf::from(path)).filter(|p| p.is_file()),
            None => find_program("s3s-fs", None, &home_bin),
        }
        .ok_or("s3s-fs was not found (set MEDIAEDIT_TEST_S3S_FS, or `cargo install s3s-fs --version 0.14.1 --features binary --locked`)")?;
        let root = tempfile::Builder::new()
            .prefix("mediaedit-s3-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        // s3s-fs keeps each bucket as a directory under its root.
        std::fs::create_dir(root.path().join(BUCKET)).map_err(|e| e.to_string())?;
        let mut last_error = String::new();
        for _ in 0..3 {
            let port = free_port();
            let mut child = Command::new(&binary)
                .args(["--host", "127.0.0.1", "--port", &port.to_string()])
                .args(["--access-key", S3_ACCESS_KEY, "--secret-key", S3_SECRET_KEY])
                .arg(root.path())
                .env("RUST_LOG", "error")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("running {}: {e}", binary.display()))?;
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(status)) = child.try_wait() {
                    last_error = format!("s3s-fs exited with {status}");
                    break;
                }
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Ok(S3Server {
                        child,
                        _root: root,
                        port,
                    });
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
            if last_error.is_empty() {
                last_error = "s3s-fs did not listen within 10 s".into();
            }
        }
        Err(last_error)
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
