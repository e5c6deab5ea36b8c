//! `sysgauge serve`: the results site. Server-rendered HTML pages and a
//! JSON API over the results database, and token uploads of run records
//! (`POST /api/runs`), on axum and tokio.
//!
//! Shaped by what it serves: the store is synchronous, so every database
//! call goes through a small pool of connections on blocking threads
//! (`pool`); every comparison is built by the same code as `sysgauge
//! compare` (`sysgauge_compare`, the machines named as the command line
//! names them), so a page shows the numbers the command prints; every page
//! is a `maud` template, which escapes every value it inserts, or the
//! report crate's HTML, which escapes its own. Nothing here measures, and
//! no route writes anywhere but the database.

#![forbid(unsafe_code)]

mod api;
mod auth;
mod pages;
mod pool;
pub mod tls;

pub use auth::{hash_token, new_token, TOKEN_PREFIX};

use anyhow::Context;
use axum::routing::{get, post};
use axum::Router;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// The version of every JSON document the API serves (`"schema": 1`).
pub const API_SCHEMA: u32 = 1;

/// The largest upload accepted by default: a `run --json` record of the
/// full profile is well under 1 MiB; 8 MiB leaves room for long telemetry.
pub const DEFAULT_MAX_UPLOAD: usize = 8 << 20;

/// Uploads one token may make a minute, by default (a fleet of 50 machines
/// uploading at once fits).
pub const DEFAULT_UPLOADS_PER_MINUTE: u32 = 120;

/// Seconds an upload's body may take to arrive (8 MiB at 140 KB/s).
pub const DEFAULT_BODY_TIMEOUT_SECS: u64 = 60;

/// How the site runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The results database: a file or a PostgreSQL URL.
    pub db: PathBuf,
    /// When set, reading (pages and the API, not `/health`) needs this
    /// token (or an upload token).
    pub read_token: Option<String>,
    pub max_upload: usize,
    pub uploads_per_minute: u32,
    /// How long an upload's body may take to arrive once its headers have
    /// (a client that trickles its body would otherwise hold a connection
    /// and its memory for ever).
    pub body_timeout: std::time::Duration,
    /// Database connections used at once.
    pub connections: usize,
}

impl Config {
    pub fn new(db: PathBuf) -> Config {
        Config {
            db,
            read_token: None,
            max_upload: DEFAULT_MAX_UPLOAD,
            uploads_per_minute: DEFAULT_UPLOADS_PER_MINUTE,
            body_timeout: std::time::Duration::from_secs(DEFAULT_BODY_TIMEOUT_SECS),
            connections: 4,
        }
    }
}

/// What every handler shares.
pub(crate) struct AppState {
    pub config: Config,
    pub pool: Arc<pool::Pool>,
    pub limit: auth::RateLimit,
    /// The read token's hash (compared as hashes, so the comparison's time
    /// says nothing of the token).
    pub read_hash: Option<String>,
    /// The baseline index of each run already shown, by run id: a stored
    /// complete run never changes, and the index (a bootstrap interval
    /// with it) is most of the machines page's work.
    pub index_cache: std::sync::Mutex<std::collections::HashMap<String, Option<f64>>>,
    /// The baseline index of each machine already shown (all its results),
    /// by its runs' rows.
    pub machine_index_cache: std::sync::Mutex<std::collections::HashMap<String, Option<f64>>>,
}

/// The site, ready to be served: opens (creating and migrating if needed)
/// the database first, so a bad `--db` fails before anything listens.
pub struct Site {
    state: Arc<AppState>,
}

impl Site {
    pub fn open(config: Config) -> anyhow::Result<Site> {
        let pool = pool::Pool::open(config.db.clone(), config.connections)?;
        Ok(Site {
            state: Arc::new(AppState {
                limit: auth::RateLimit::new(config.uploads_per_minute),
                read_hash: config.read_token.as_deref().map(hash_token),
                index_cache: Default::default(),
                machine_index_cache: Default::default(),
                pool: Arc::new(pool),
                config,
            }),
        })
    }

    /// Every route.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/health", get(api::health))
            .route("/api/runs", post(api::upload))
            .route("/api/runs/{run_id}", get(api::run))
            .route("/api/machines", get(api::machines))
            .route("/api/compare", get(api::compare))
            .route("/api/cases", get(api::case_view))
            .route("/", get(pages::machines))
            .route("/runs/{run_id}", get(pages::run))
            .route("/compare", get(pages::compare))
            .route("/cases", get(pages::case_view))
            .fallback(api::not_found)
            .method_not_allowed_fallback(api::method_not_allowed)
            .layer(axum::middleware::from_fn(api::limit_target))
            .with_state(Arc::clone(&self.state))
    }

    /// Serve on `listener` (plain HTTP) until `shutdown` completes; requests
    /// under way then (an upload being stored) are finished first.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        tokio::spawn(pages::warm_index_cache(Arc::clone(&self.state)));
        axum::serve(listener, self.router())
            .with_graceful_shutdown(shutdown)
            .await
    }
}

impl Site {
    /// Serve HTTPS on `listener` until `shutdown` completes (as `serve`).
    pub async fn serve_tls(
        self,
        listener: tokio::net::TcpListener,
        acceptor: tokio_rustls::TlsAcceptor,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let listener = tls::TlsListener::new(listener, acceptor)?;
        tokio::spawn(pages::warm_index_cache(Arc::clone(&self.state)));
        axum::serve(listener, self.router())
            .with_graceful_shutdown(shutdown)
            .await
    }
}

/// Where and how `run` listens.
#[derive(Debug, Clone)]
pub struct Listen {
    pub addr: SocketAddr,
    /// Certificate chain and key (PEM files) for HTTPS.
    pub tls: Option<(PathBuf, PathBuf)>,
}

/// Open the site and serve it until SIGTERM or SIGINT, on a runtime of its
/// own; `ready` is told the address once it listens.
pub fn run(config: Config, listen: Listen, ready: impl FnOnce(SocketAddr)) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the server's runtime")?;
    runtime.block_on(async move {
        let acceptor = match &listen.tls {
            Some((cert, key)) => Some(tls::acceptor(cert, key)?),
            None => None,
        };
        let site = Site::open(config)?;
        let listener = tokio::net::TcpListener::bind(listen.addr)
            .await
            .with_context(|| format!("listening on {}", listen.addr))?;
        ready(listener.local_addr().unwrap_or(listen.addr));
        match acceptor {
            Some(a) => site.serve_tls(listener, a, shutdown_signal()).await,
            None => site.serve(listener, shutdown_signal()).await,
        }
        .context("serving")
    })
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
pub async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    match (term, int) {
        (Ok(mut t), Ok(mut i)) => {
            tokio::select! {
                _ = t.recv() => {}
                _ = i.recv() => {}
            }
        }
        // Without signal handling there is nothing to wait for but the end.
        _ => std::future::pending::<()>().await,
    }
}
