//! The `mediaedit` binary: parses the command line and runs a subcommand.

use clap::Parser;
use mediaedit::admin;
use mediaedit::config::{Cli, Command};

/// glibc's allocator, large blocks on huge pages (`mediaedit::allocator`).
#[global_allocator]
static ALLOCATOR: mediaedit::allocator::LargeBlocksOnHugePages =
    mediaedit::allocator::LargeBlocksOnHugePages;

fn main() -> anyhow::Result<()> {
    mediaedit::allocator::return_large_buffers();
    let cli = parse_or_exit();
    mediaedit::telemetry::init(cli.log_format);
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        match cli.command {
            Command::Serve(config) => {
                make_non_dumpable()?;
                // C libraries other than those the bindings were generated for would be
                // read with the wrong struct layouts: refuse to start, in one line.
                if let Err(line) = mediaedit::media::check_libraries() {
                    eprintln!("{line}");
                    std::process::exit(1);
                }
                serve(*config).await
            }
            Command::Token { command } => admin::token(command).await,
            Command::RenderKey { command } => admin::render_key(command).await,
            Command::WebhookSecret(args) => admin::webhook_secret(args).await,
            Command::Edit { command } => std::process::exit(mediaedit::client::run(command).await),
            Command::Preset { command } => {
                std::process::exit(mediaedit::client::presets::run(command).await)
            }
        }
    })
}

/// The command line, or exit 2 with one line naming the flag at fault: an operator's
/// log shows the cause, not a usage screen. `--help` and `--version` print as usual.
fn parse_or_exit() -> Cli {
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            let rendered = e.render().to_string();
            let line = rendered
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            eprintln!("{line}");
            std::process::exit(2);
        }
        Err(e) => e.exit(),
    }
}

/// Makes the service non-dumpable (`PR_SET_DUMPABLE` 0), before it opens its database
/// or starts a child. Its ffmpeg and ffprobe children run as the same user on hostile
/// files: without this, an exploited one could read `/proc/<service>/environ` (the
/// database URL, S3 keys), its memory (`/proc/<service>/mem`: tokens and signing keys
/// as they pass) or attach with `ptrace`, all of which the kernel allows among
/// processes of one user. A non-dumpable process's `/proc` files belong to root, and
/// reading its environment or memory needs `CAP_SYS_PTRACE`. A child gets the flag
/// back when it `exec`s, so nothing of theirs changes; the service writes no core dump
/// either, which would hold the same secrets.
fn make_non_dumpable() -> anyhow::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_DUMPABLE takes one integer argument and touches no memory of ours.
        let set = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong, 0, 0, 0) };
        if set != 0 {
            anyhow::bail!(
                "making the process non-dumpable failed: {}",
                std::io::Error::last_os_error()
            );
        }
    }
    Ok(())
}

async fn serve(config: mediaedit::config::ServeConfig) -> anyhow::Result<()> {
    let app = mediaedit::app::App::start(config).await?;
    let shutdown = app.shutdown_token();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutting down");
        shutdown.cancel();
    });
    app.wait().await
}

/// Resolves on SIGINT or SIGTERM.
async fn wait_for_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("installing a SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
