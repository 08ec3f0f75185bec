//! Running the built `mediaedit` binary as a child process.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_mediaedit");

/// `mediaedit token create`; returns the last line of standard output.
pub fn token_create(data_dir: &Path, org: &str) -> String {
    let out = Command::new(BIN)
        .args(["token", "create", "--data-dir"])
        .arg(data_dir)
        .args(["--org", org])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    stdout
        .lines()
        .last()
        .expect("a token line")
        .trim()
        .to_string()
}

/// A `mediaedit serve` child, killed when dropped however the test ends.
pub struct Server {
    pub child: Child,
    pub base: String,
}

impl Server {
    /// The lines of the server's piped stderr, read on a thread as they come (so a full
    /// pipe never blocks the server) until it exits: join the handle after stopping it.
    pub fn stderr_lines(&mut self) -> std::thread::JoinHandle<Vec<String>> {
        use std::io::BufRead;
        let stderr = self
            .child
            .stderr
            .take()
            .expect("started with Stdio::piped()");
        std::thread::spawn(move || {
            std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
                .collect()
        })
    }

    /// Starts `serve` on a free port with private sources allowed, plus `env`, and
    /// waits for `/healthz`.
    pub async fn start(data_dir: &Path, env: &[(&str, &str)], stderr: Stdio) -> Server {
        Server::start_with_args(data_dir, &[], env, stderr).await
    }

    /// [`Server::start`] with `args` after `serve` on the command line.
    pub async fn start_with_args(
        data_dir: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        stderr: Stdio,
    ) -> Server {
        Server::start_through(Command::new(BIN), data_dir, args, env, stderr).await
    }

    /// [`Server::start_with_args`] with `command` as the start of the command line: the
    /// binary itself, or a program that runs it in the same process (`setpriv … BIN`).
    pub async fn start_through(
        mut command: Command,
        data_dir: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        stderr: Stdio,
    ) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        command
            .arg("serve")
            .args(args)
            .env("MEDIAEDIT_LISTEN", format!("127.0.0.1:{port}"))
            .env("MEDIAEDIT_DATA_DIR", data_dir)
            .env("MEDIAEDIT_ALLOW_PRIVATE_SOURCES", "true")
            .env("MEDIAEDIT_POLL_MS", "100")
            .stderr(stderr);
        for (k, v) in env {
            command.env(k, v);
        }
        let server = Server {
            child: command.spawn().unwrap(),
            base: format!("http://127.0.0.1:{port}"),
        };
        server.wait_healthy().await;
        server
    }

    async fn wait_healthy(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(r) = reqwest::get(format!("{}/healthz", self.base)).await {
                if r.status() == 200 {
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the server did not become healthy");
    }

    /// `POST /v1/edits` as `token`; returns the response.
    pub async fn post_edit(&self, token: &str, body: &serde_json::Value) -> reqwest::Response {
        reqwest::Client::new()
            .post(format!("{}/v1/edits", self.base))
            .bearer_auth(token)
            .json(body)
            .send()
            .await
            .unwrap()
    }

    /// `GET /v1/edits/{id}` as `token`; returns the document.
    pub async fn read_edit(&self, token: &str, id: &str) -> serde_json::Value {
        reqwest::Client::new()
            .get(format!("{}/v1/edits/{id}", self.base))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Sends a signal (`-KILL`, `-TERM`) and waits for the process to end.
    pub fn signal_and_wait(&mut self, signal: &str) -> std::process::ExitStatus {
        Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap();
        self.child.wait().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
