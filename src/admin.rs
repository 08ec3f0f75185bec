//! The administration commands: `mediaedit token create|list|revoke`,
//! `mediaedit render-key create|list|revoke` and `mediaedit webhook-secret`. They work on the database directly (a node need not
//! run); what they print on standard output is meant for scripts, what they say on
//! standard error for people.

use std::time::SystemTime;

use anyhow::Context;
use rand::RngCore;

use crate::config::{
    DatabaseUrl, DbArgs, OrgArgs, RenderKeyCommand, TokenCommand, WebhookSecretArgs,
};
use crate::db::{unix_ms, valid_org_id, Db, Revoked};
use crate::edits::timestamp;

/// `mediaedit token …`.
pub async fn token(command: TokenCommand) -> anyhow::Result<()> {
    match command {
        TokenCommand::Create(args) => create_token(args).await,
        TokenCommand::List(args) => list_tokens(args).await,
        TokenCommand::Revoke(args) => {
            let db = open(&args.db).await?;
            match db.revoke_by_prefix(&args.token_prefix).await? {
                Revoked::One { org } => {
                    eprintln!("Revoked a token of organization {org}; every node refuses it within --auth-cache-ttl-secs.");
                    Ok(())
                }
                Revoked::NotFound => anyhow::bail!("no token starts with {}", args.token_prefix),
                Revoked::Ambiguous(n) => anyhow::bail!(
                    "{n} tokens start with {}; give the whole token",
                    args.token_prefix
                ),
            }
        }
    }
}

/// Creates the organization if needed and a new token; the token is the last line
/// printed on standard output.
async fn create_token(args: OrgArgs) -> anyhow::Result<()> {
    let db = open_org(&args).await?;
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    let token = format!("me_{}", hex::encode(bytes));
    db.create_token(&args.org, &token).await?;
    eprintln!("Created a token for organization {}.", args.org);
    println!("{token}");
    Ok(())
}

/// One line per token: its prefix (or, for a token made before prefixes were kept,
/// `hash:` and the start of its hash) and when it was made.
async fn list_tokens(args: OrgArgs) -> anyhow::Result<()> {
    let db = open_org(&args).await?;
    for token in db.list_tokens(&args.org).await? {
        let name = match token.prefix {
            Some(prefix) => prefix,
            None => format!(
                "hash:{}",
                &token.token_hash[..12.min(token.token_hash.len())]
            ),
        };
        println!("{name}\t{}", timestamp(token.created_at));
    }
    Ok(())
}

/// `mediaedit render-key …`: the keys render URLs are signed with. A key is `rk_` and
/// 64 hex digits; the HMAC key is that whole string's bytes (docs/API.md, "Render").
pub async fn render_key(command: RenderKeyCommand) -> anyhow::Result<()> {
    match command {
        RenderKeyCommand::Create(args) => {
            let db = open_org(&args).await?;
            let mut bytes = [0u8; 32];
            rand::thread_rng().fill_bytes(&mut bytes);
            let key = format!("rk_{}", hex::encode(bytes));
            let now = unix_ms(SystemTime::now());
            db.create_render_key(&args.org, &key, now).await?;
            eprintln!("Created a render key for organization {}.", args.org);
            println!("{key}");
            Ok(())
        }
        RenderKeyCommand::List(args) => {
            let db = open_org(&args).await?;
            for key in db.list_render_keys(&args.org).await? {
                println!("{}\t{}", key.prefix, timestamp(key.created_at));
            }
            Ok(())
        }
        RenderKeyCommand::Revoke(args) => {
            let db = open_org(&args.org).await?;
            match db.revoke_render_key(&args.org.org, &args.key).await? {
                true => {
                    eprintln!("Revoked; every node refuses URLs signed with it within 5 seconds.");
                    Ok(())
                }
                false => anyhow::bail!(
                    "organization {} has no render key {}",
                    args.org.org,
                    args.key
                ),
            }
        }
    }
}

/// Prints the organization's webhook signing secret (made if it has none), after
/// replacing it with `--rotate`.
pub async fn webhook_secret(args: WebhookSecretArgs) -> anyhow::Result<()> {
    let db = open_org(&args.org).await?;
    let fresh = crate::webhooks::signing::new_secret();
    let secrets = match args.rotate {
        true => {
            let now = unix_ms(SystemTime::now());
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
async fn open_org(args: &OrgArgs) -> anyhow::Result<Db> {
    anyhow::ensure!(
        valid_org_id(&args.org),
        "the organization id must be 1 to 64 letters, digits, '-' or '_'"
    );
    open(&args.db).await
}

/// The database `args` names (the SQLite file in the data dir, made if needed).
async fn open(args: &DbArgs) -> anyhow::Result<Db> {
    if args.database_url.is_none() {
        std::fs::create_dir_all(&args.data_dir)
            .with_context(|| format!("creating {}", args.data_dir.display()))?;
    }
    let url = DatabaseUrl::or_default(&args.database_url, &args.data_dir);
    Ok(Db::open(&url, 2).await?)
}
