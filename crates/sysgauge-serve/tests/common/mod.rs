//! A site on loopback over a real database, and a plain HTTP client.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use sysgauge_compare::testutil::{run_with, throughput};
use sysgauge_core::RunRecord;
use sysgauge_serve::{Config, Site};
use sysgauge_store::Store;
use tokio::sync::oneshot;

/// A site served on a thread of its own until dropped (or `stop`ped).
pub struct Server {
    pub addr: SocketAddr,
    pub db: PathBuf,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    pub fn start(db: &Path, tweak: impl FnOnce(&mut Config)) -> Server {
        let mut config = Config::new(db.to_path_buf());
        config.uploads_per_minute = 10_000;
        tweak(&mut config);
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let site = Site::open(config).expect("opening the site");
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                addr_tx
                    .send(listener.local_addr().expect("addr"))
                    .expect("send");
                site.serve(listener, async {
                    let _ = stopped.await;
                })
                .await
                .expect("serve");
            });
        });
        let addr = addr_rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the site started");
        Server {
            addr,
            db: db.to_path_buf(),
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// A site with the default configuration over a new SQLite database
    /// in a temporary directory (kept while the directory is).
    pub fn fresh() -> (tempfile::TempDir, Server) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let server = Server::start(&dir.path().join("s.db"), |_| {});
        (dir, server)
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Ask the site to stop (graceful shutdown) without waiting.
    pub fn signal_stop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }

    /// Stop and wait until the server has finished.
    pub fn stop(&mut self) {
        self.signal_stop();
        if let Some(t) = self.thread.take() {
            t.join().expect("the server thread ended cleanly");
        }
    }

    /// A new token `name` stored in the site's database.
    pub fn token(&self, name: &str) -> String {
        let token = sysgauge_serve::new_token();
        let mut store = Store::open(&self.db).expect("open");
        store
            .add_token(name, &sysgauge_serve::hash_token(&token))
            .expect("add token");
        token
    }

    pub fn runs(&self) -> usize {
        Store::open_read_only(&self.db)
            .expect("open")
            .list_runs()
            .expect("list")
            .len()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// Status, headers we look at, and the body of a request.
pub struct Answer {
    pub status: u16,
    pub body: String,
    pub location: Option<String>,
    pub retry_after: Option<String>,
    pub www_authenticate: Vec<String>,
    pub content_type: Option<String>,
}

impl Answer {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The `error` of a JSON error body (which every refusal has).
    pub fn error(&self) -> String {
        self.json()["error"]
            .as_str()
            .unwrap_or_else(|| panic!("no error message in {}", self.body))
            .to_string()
    }
}

fn answer(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Answer {
    let mut r = r.expect("the request was answered");
    let h = |n: &str| {
        r.headers()
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let (location, retry_after, content_type) =
        (h("location"), h("retry-after"), h("content-type"));
    let www_authenticate = r
        .headers()
        .get_all("www-authenticate")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_string))
        .collect();
    Answer {
        status: r.status().as_u16(),
        body: r.body_mut().read_to_string().unwrap_or_default(),
        location,
        retry_after,
        www_authenticate,
        content_type,
    }
}

pub fn get(url: &str, token: Option<&str>) -> Answer {
    let mut req = agent().get(url);
    if let Some(t) = token {
        req = req.header("Authorization", &format!("Bearer {t}"));
    }
    answer(req.call())
}

pub fn post(url: &str, token: Option<&str>, content_type: &str, body: &str) -> Answer {
    let mut req = agent().post(url).header("Content-Type", content_type);
    if let Some(t) = token {
        req = req.header("Authorization", &format!("Bearer {t}"));
    }
    answer(req.send(body))
}

/// Upload `run` with `token`.
pub fn upload(server: &Server, token: &str, run: &RunRecord) -> Answer {
    let body = serde_json::to_string(run).expect("serialise");
    post(
        &server.url("/api/runs"),
        Some(token),
        "application/json",
        &body,
    )
}

/// A complete run of `host` with two cases, its run id unique per `n`.
pub fn a_run(host: &str, n: u32) -> RunRecord {
    let mut r = run_with(
        host,
        Some(4000.0),
        vec![
            throughput("hash.sha256", &[100.0 + f64::from(n), 101.0, 102.0]),
            throughput("hash.md5", &[300.0, 301.0, 299.0]),
        ],
    );
    r.run_id = format!("00000000-0000-4000-8000-{n:012}");
    r
}
