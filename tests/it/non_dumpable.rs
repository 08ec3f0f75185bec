//! The service is non-dumpable (docs/SECURITY.md, "What an exploited ffmpeg or
//! ffprobe can reach"): another process of its user cannot read its environment.
//!
//! Every process here — the service, the reader, and an ordinary process read for
//! comparison — runs as the test's own uid and without capabilities. As root that
//! takes `setpriv`: root's `CAP_SYS_PTRACE` passes over the flag, and the kernel also
//! refuses a reader holding fewer capabilities than its target, so only a service and
//! a reader of the same uid with the same (empty) set of capabilities make the flag the
//! one thing that differs — which is what a compromised ffmpeg of a service run as an
//! ordinary user is. The ordinary process, read the same way, shows its environment.

use std::process::{Command, Output, Stdio};

use crate::binary::{Server, BIN};

const MARKER: &str = "marker-e3a90c-only-the-service-may-read";

/// A command for `program` as this uid without any capability.
fn without_capabilities(program: &str) -> Command {
    // SAFETY: geteuid reads the caller's credentials and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Command::new(program);
    }
    let mut setpriv = Command::new("setpriv");
    setpriv.args(["--inh-caps=-all", "--bounding-set=-all", "--", program]);
    setpriv
}

/// `cat /proc/<pid>/environ`, without capabilities.
fn read_environ(pid: u32) -> Output {
    without_capabilities("cat")
        .arg(format!("/proc/{pid}/environ"))
        .output()
        .expect("starting the reader")
}

#[tokio::test]
async fn another_process_of_the_service_s_user_cannot_read_its_environment() {
    let data = tempfile::TempDir::new().unwrap();
    let server = Server::start_through(
        without_capabilities(BIN),
        data.path(),
        &[],
        &[("MEDIAEDIT_TEST_MARKER", MARKER)],
        Stdio::null(),
    )
    .await;

    let mut ordinary = without_capabilities("sleep");
    let mut ordinary = ordinary
        .arg("30")
        .env("MEDIAEDIT_TEST_MARKER", MARKER)
        .spawn()
        .unwrap();
    // Read once it runs `sleep` (the pid is setpriv's until it execs).
    std::thread::sleep(std::time::Duration::from_millis(200));
    let read = read_environ(ordinary.id());
    let _ = ordinary.kill();
    let _ = ordinary.wait();
    assert!(read.status.success(), "{read:?}");
    assert!(
        String::from_utf8_lossy(&read.stdout).contains(MARKER),
        "the reader cannot read even an ordinary process: {read:?}"
    );

    let read = read_environ(server.child.id());
    assert!(!read.status.success(), "the service's environment was read");
    assert!(
        !String::from_utf8_lossy(&read.stdout).contains(MARKER),
        "{read:?}"
    );
    let complaint = String::from_utf8_lossy(&read.stderr);
    assert!(complaint.contains("Permission denied"), "{complaint}");
}
