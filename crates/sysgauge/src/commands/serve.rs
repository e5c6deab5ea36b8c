//! `sysgauge serve`: the results site over a results database (see
//! `sysgauge_serve`), and `serve token add|list|revoke` for the upload
//! tokens. What is checked here, before anything listens: the listen
//! address (plain HTTP only on loopback unless asked), the TLS files, the
//! read token's file.

use crate::cli::DbArg;
use crate::config::resolve_db;
use crate::exit::Exit;
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;
use sysgauge_store::{display_name, Store, TokenAdded};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ServeArgs {
    #[command(subcommand)]
    pub command: Option<ServeCommand>,

    #[command(flatten)]
    pub db: DbArg,

    /// Address and port to listen on. Plain HTTP is served only on a
    /// loopback address unless --tls-cert/--tls-key or --insecure-http.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Serve HTTPS with this certificate chain (PEM); needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The private key of --tls-cert (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Serve plain HTTP on a non-loopback address (tokens then cross the
    /// network in clear: only behind a TLS-terminating proxy).
    #[arg(long)]
    pub insecure_http: bool,

    /// Reading the site (pages and API; not /health) needs this token, read
    /// from FILE's first line (or SYSGAUGE_READ_TOKEN). Upload tokens read
    /// too. Without it, reading is public.
    #[arg(long, value_name = "FILE")]
    pub read_token_file: Option<PathBuf>,

    /// Largest accepted upload, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = sysgauge_serve::DEFAULT_MAX_UPLOAD)]
    pub max_upload: usize,

    /// Uploads one token may make a minute (a burst of as many).
    #[arg(long, value_name = "N", default_value_t = sysgauge_serve::DEFAULT_UPLOADS_PER_MINUTE)]
    pub rate_limit: u32,

    /// Seconds an upload's body may take to arrive; a slower one is
    /// answered 408 and nothing is stored.
    #[arg(long, value_name = "SECS", default_value_t = sysgauge_serve::DEFAULT_BODY_TIMEOUT_SECS)]
    pub body_timeout: u64,
}

#[derive(Debug, Subcommand)]
pub enum ServeCommand {
    /// Upload tokens: add (prints the new token once), list, revoke.
    #[command(subcommand)]
    Token(TokenCommand),
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Make a token NAME; prints it once (only its hash is stored).
    Add {
        /// A name for whoever holds it (a machine, a fleet, a person).
        name: String,
        #[command(flatten)]
        db: DbArg,
    },
    /// List the tokens (names and dates, never the tokens).
    List {
        #[command(flatten)]
        db: DbArg,
    },
    /// Revoke the token NAME: its uploads are refused from now on.
    Revoke {
        name: String,
        #[command(flatten)]
        db: DbArg,
    },
}

/// A token name: what `list` prints on one line and messages quote.
fn check_name(name: &str) -> Result<&str> {
    let name = name.trim();
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.@".contains(c))
    {
        bail!("token name '{name}': use 1 to 64 letters, digits and - _ . @");
    }
    Ok(name)
}

fn open(db: &DbArg) -> Result<Store> {
    crate::db::open_for_writing(&resolve_db(db.db.as_deref())?, None)
}

fn token(cmd: TokenCommand) -> Result<Exit> {
    match cmd {
        TokenCommand::Add { name, db } => {
            let name = check_name(&name)?;
            let mut store = open(&db)?;
            let token = sysgauge_serve::new_token();
            match store.add_token(name, &sysgauge_serve::hash_token(&token))? {
                TokenAdded::Added => {
                    eprintln!(
                        "sysgauge: token '{name}' stored in {} (only its hash); it is shown once:",
                        display_name(store.path())
                    );
                    // A token nobody saw is a live credential nobody has:
                    // revoke it rather than leave it behind.
                    if let Err(e) = crate::output::stdout(&format!("{token}\n")) {
                        store.revoke_token(name)?;
                        return Err(e.context(format!(
                            "token '{name}' could not be shown, so it is revoked; add another"
                        )));
                    }
                }
                TokenAdded::NameTaken => bail!(
                    "a token '{name}' exists already (see `sysgauge serve token list`); choose another name"
                ),
            }
        }
        TokenCommand::List { db } => {
            let store = open(&db)?;
            let tokens = store.list_tokens()?;
            if tokens.is_empty() {
                eprintln!("sysgauge: no tokens; make one with `sysgauge serve token add NAME`");
            }
            let mut text = String::new();
            for t in tokens {
                let state = match t.revoked_at {
                    Some(r) => format!("revoked {}", r.format("%Y-%m-%d %H:%M UTC")),
                    None => "active".to_string(),
                };
                text.push_str(&format!(
                    "{}\tcreated {}\t{state}\n",
                    t.name,
                    t.created_at.format("%Y-%m-%d %H:%M UTC")
                ));
            }
            crate::output::stdout(&text)?;
        }
        TokenCommand::Revoke { name, db } => {
            let name = check_name(&name)?;
            let mut store = open(&db)?;
            if !store.revoke_token(name)? {
                bail!("no active token '{name}' (see `sysgauge serve token list`)");
            }
            eprintln!("sysgauge: token '{name}' revoked");
        }
    }
    Ok(Exit::Ok)
}

/// The read token, from its file or the environment.
fn read_token(args: &ServeArgs) -> Result<Option<String>> {
    // Never an option's value: every user of the machine could read it in
    // `ps`.
    let from_env = std::env::var("SYSGAUGE_READ_TOKEN")
        .ok()
        .filter(|t| !t.trim().is_empty());
    let token = match (&args.read_token_file, from_env) {
        (Some(f), _) => {
            let text = std::fs::read_to_string(f)
                .with_context(|| format!("reading --read-token-file {}", f.display()))?;
            Some(text.lines().next().unwrap_or_default().trim().to_string())
        }
        (None, Some(t)) => Some(t.trim().to_string()),
        (None, None) => None,
    };
    if token.as_ref().is_some_and(|t| t.len() < 16) {
        bail!("the read token is shorter than 16 characters; make one with `sysgauge serve token add NAME` and use it, or any long random string");
    }
    Ok(token)
}

pub fn run(args: ServeArgs) -> Result<Exit> {
    if let Some(cmd) = args.command {
        let ServeCommand::Token(cmd) = cmd;
        return token(cmd);
    }
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(c), Some(k)) => Some((c.clone(), k.clone())),
        _ => None,
    };
    if tls.is_none() && !args.listen.ip().is_loopback() && !args.insecure_http {
        bail!(
            "--listen {} is not a loopback address: serve HTTPS there (--tls-cert FILE --tls-key FILE), \
             or pass --insecure-http if a TLS proxy stands in front (tokens would otherwise cross the network in clear)",
            args.listen
        );
    }
    if args.max_upload < 1024 {
        bail!(
            "--max-upload {} is too small for any run record (1024 at least)",
            args.max_upload
        );
    }
    if args.rate_limit == 0 {
        bail!("--rate-limit must be at least 1 upload a minute");
    }
    if args.body_timeout == 0 {
        bail!("--body-timeout must be at least 1 second");
    }
    let db = resolve_db(args.db.db.as_deref())?;
    let mut config = sysgauge_serve::Config::new(db.clone());
    config.read_token = read_token(&args)?;
    config.max_upload = args.max_upload;
    config.uploads_per_minute = args.rate_limit;
    config.body_timeout = std::time::Duration::from_secs(args.body_timeout);
    let listen = sysgauge_serve::Listen {
        addr: args.listen,
        tls,
    };
    let scheme = if listen.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let shown = display_name(&db);
    sysgauge_serve::run(config, listen, |addr| {
        eprintln!(
            "sysgauge: serving {shown} on {scheme}://{addr} (SIGTERM or Ctrl-C stops it, after the requests under way)"
        )
    })?;
    eprintln!("sysgauge: stopped");
    Ok(Exit::Ok)
}
