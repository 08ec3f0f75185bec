//! The `mediaedit` binary: parses the command line and runs a subcommand.

use anyhow::Context;
use clap::Parser;
use mediaedit::config::{Cli, Command, DatabaseUrl, OrgArgs, TokenCommand, WebhookSecretArgs};
use mediaedit::db::{valid_org_id, Db};
use rand::RngCore;

fn main() -> anyhow::Result<()> {
    let cli = parse_or_exit();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,sqlx=warn,tower_http=info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        match cli.command {
            Command::Serve(config) => serve(*config).await,
            Command::Token {
                command: TokenCommand::Create(args),
            } => create_token(args).await,
            Command::WebhookSecret(args) => webhook_secret(args).await,
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

/// Creates the organization if needed and a new token; the token is the last line
/// printed on standard output.
async fn create_token(args: OrgArgs) -> anyhow::Result<()> {
    let db = open_for(&args).await?;
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    let token = format!("me_{}", hex::encode(bytes));
    db.create_token(&args.org, &token).await?;
    eprintln!("Created a token for organization {}.", args.org);
    println!("{token}");
    Ok(())
}

/// Prints the organization's webhook signing secret (made if it has none), after
/// replacing it with `--rotate`.
async fn webhook_secret(args: WebhookSecretArgs) -> anyhow::Result<()> {
    let db = open_for(&args.org).await?;
    let fresh = mediaedit::webhooks::signing::new_secret();
    let secrets = match args.rotate {
        true => {
            let now = mediaedit::db::unix_ms(std::time::SystemTime::now());
            let secrets = db.rotate_webhook_secret(&args.org.org, &fresh, now).await?;
            eprintln!("Rotated; the previous secret keeps signing for 24 hours.");
            secrets
        }
        false => db.webhook_secrets(&args.org.org, &fresh).await?,
    };
    println!("{}", secrets.current);
    Ok(())
}

/// The database `args` names, after checking the organization id.
async fn open_for(args: &OrgArgs) -> anyhow::Result<Db> {
    anyhow::ensure!(
        valid_org_id(&args.org),
        "the organization id must be 1 to 64 letters, digits, '-' or '_'"
    );
    if args.database_url.is_none() {
        std::fs::create_dir_all(&args.data_dir)
            .with_context(|| format!("creating {}", args.data_dir.display()))?;
    }
    let url = DatabaseUrl::or_default(&args.database_url, &args.data_dir);
    Ok(Db::open(&url, 2).await?)
}
