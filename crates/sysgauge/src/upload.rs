//! Sending run records to a results server (`sysgauge serve`): `--upload
//! URL` on every measuring command and `fleet run`, and `sysgauge upload`
//! for runs already stored or files to read.
//!
//! The wire (docs/serve.md): `POST URL/api/runs` with `Authorization:
//! Bearer TOKEN` and one run record as `--json` writes it; 201 stored, 409
//! already stored (the same run id: nothing changed), anything else refused
//! with a JSON `{"error": …}`. A token crosses the network only inside
//! TLS: plain `http://` is accepted for loopback addresses alone.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use sysgauge_core::record::RunRecord;
use sysgauge_fleet::ssh::shell_quote;

/// The environment variable that holds the upload token when no
/// `--token-file` is given.
pub const TOKEN_ENV: &str = "SYSGAUGE_TOKEN";

/// The most a record may be: the server's default limit is larger, so a
/// record refused here would be refused there after a long upload.
const MAX_RECORD_BYTES: usize = 32 << 20;

/// What an upload needs besides the address: the token and whom to trust.
#[derive(Debug, Clone, Default, Args)]
pub struct TokenArgs {
    /// A file holding the upload token (`sysgauge serve token add NAME`
    /// prints one); default: the SYSGAUGE_TOKEN environment variable.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,

    /// A PEM file with the certificate (or its authority) that the results
    /// server's HTTPS certificate must chain to, for a server with a private
    /// or self-signed certificate (default: the Mozilla root certificates).
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
}

/// A results server and the means to write to it, checked before anything
/// is measured.
#[derive(Clone)]
pub struct Uploader {
    /// The server's address as the user gave it, without a trailing `/`.
    base: String,
    endpoint: String,
    token: String,
    agent: ureq::Agent,
    /// The options besides the address that this server needs, as the user
    /// gave them (` --token-file F --ca-cert F`): sending a run again needs
    /// them too.
    options: String,
}

impl std::fmt::Debug for Uploader {
    // The token never reaches a log or an error message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Uploader")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

/// How one upload ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uploaded {
    /// Stored now; the run's page on the server.
    Stored(String),
    /// The server already had this run id; nothing changed.
    AlreadyThere(String),
}

impl Uploaded {
    pub fn url(&self) -> &str {
        match self {
            Uploaded::Stored(u) | Uploaded::AlreadyThere(u) => u,
        }
    }

    /// One line for people: where the run is now.
    pub fn describe(&self) -> String {
        match self {
            Uploaded::Stored(u) => format!("uploaded: {u}"),
            Uploaded::AlreadyThere(u) => format!("already on the server: {u}"),
        }
    }
}

impl Uploader {
    /// The server at `url` (e.g. `https://results.example.org`, or
    /// `http://127.0.0.1:8080` on this machine) with the token and trust
    /// `auth` names. `option` is the option that gave the URL, for errors.
    pub fn new(url: &str, auth: &TokenArgs, option: &str) -> Result<Uploader> {
        let base = check_url(url, option)?;
        let token = read_token(auth.token_file.as_deref())?;
        let roots = match &auth.ca_cert {
            Some(p) => read_ca(p)?,
            None => ureq::tls::RootCerts::WebPki,
        };
        let tls = ureq::tls::TlsConfig::builder()
            .provider(ureq::tls::TlsProvider::Rustls)
            .root_certs(roots)
            .unversioned_rustls_crypto_provider(Arc::new(
                rustls::crypto::aws_lc_rs::default_provider(),
            ))
            .build();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .tls_config(tls)
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_global(Some(Duration::from_secs(120)))
            .max_redirects(0)
            .user_agent(concat!("sysgauge/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        let endpoint = if base.ends_with("/api/runs") {
            base.clone()
        } else {
            format!("{base}/api/runs")
        };
        let mut options = String::new();
        for (option, file) in [
            ("--token-file", &auth.token_file),
            ("--ca-cert", &auth.ca_cert),
        ] {
            if let Some(f) = file {
                options.push_str(&format!(
                    " {option} {}",
                    shell_quote(&f.display().to_string())
                ));
            }
        }
        Ok(Uploader {
            base: base.trim_end_matches("/api/runs").to_string(),
            endpoint,
            token,
            agent,
            options,
        })
    }

    /// The server as the user named it.
    pub fn server(&self) -> &str {
        &self.base
    }

    /// The command that sends `what` (stored runs or files, as `sysgauge
    /// upload` takes them) to this server again, with the token and trust
    /// options this upload used and the database `db` the runs are stored
    /// in (left out when it is the default one, or for files).
    pub fn send_again(&self, what: &str, db: Option<&Path>) -> String {
        let db = db
            .filter(|d| crate::config::default_db_path().ok().as_deref() != Some(*d))
            .map(|d| format!(" --db {}", shell_quote(&sysgauge_store::display_name(d))))
            .unwrap_or_default();
        format!(
            "`sysgauge upload {what} --to {}{}{db}`",
            shell_quote(&self.base),
            self.options
        )
    }

    /// Send one record. A refused upload is an error naming the server, the
    /// status and the server's reason; a busy server (429, 502-504) or a
    /// broken connection is tried again, three times at most, waiting what
    /// the server asks up to 10 s.
    pub fn upload(&self, run: &RunRecord) -> Result<Uploaded> {
        let body = serde_json::to_vec(run).context("encoding the run record")?;
        if body.len() > MAX_RECORD_BYTES {
            bail!(
                "run {} is {} MiB as JSON, more than an upload may be ({} MiB)",
                run.run_id,
                body.len() >> 20,
                MAX_RECORD_BYTES >> 20
            );
        }
        let mut attempt = 0;
        loop {
            attempt += 1;
            let last = attempt == 3;
            let sent = self
                .agent
                .post(&self.endpoint)
                .header("Authorization", &format!("Bearer {}", self.token))
                .content_type("application/json")
                .send(&body[..]);
            let mut response = match sent {
                Ok(r) => r,
                Err(e) if !last && retryable(&e) => {
                    std::thread::sleep(Duration::from_secs(attempt));
                    continue;
                }
                Err(e) => bail!("{}: {}", self.endpoint, describe_error(&e)),
            };
            let status = response.status().as_u16();
            let wait = retry_after(&response);
            let text = response
                .body_mut()
                .with_config()
                .limit(64 * 1024)
                .read_to_string()
                .unwrap_or_default();
            let reply = Reply::parse(&text);
            match status {
                201 | 200 => return Ok(Uploaded::Stored(self.page(&reply, run))),
                409 => return Ok(Uploaded::AlreadyThere(self.page(&reply, run))),
                429 | 502..=504 if !last => {
                    std::thread::sleep(wait.unwrap_or(Duration::from_secs(attempt)));
                    continue;
                }
                _ => bail!(
                    "{} refused run {}: {} {}{}",
                    self.endpoint,
                    run.run_id,
                    status,
                    reason(status),
                    reply
                        .error
                        .map(|e| format!(": {}", sysgauge_core::text::for_terminal(&e)))
                        .unwrap_or_default()
                ),
            }
        }
    }

    /// The run's page: what the server said, else where it keeps runs.
    fn page(&self, reply: &Reply, run: &RunRecord) -> String {
        let path = reply
            .url
            .clone()
            .unwrap_or_else(|| format!("/runs/{}", run.run_id));
        if path.starts_with("http://") || path.starts_with("https://") {
            path
        } else {
            format!("{}/{}", self.base, path.trim_start_matches('/'))
        }
    }
}

/// The parts of a server's JSON answer the client reads.
#[derive(Default)]
struct Reply {
    url: Option<String>,
    error: Option<String>,
}

impl Reply {
    fn parse(text: &str) -> Reply {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
            return Reply::default();
        };
        let field = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
        Reply {
            url: field("url"),
            error: field("error"),
        }
    }
}

fn retryable(e: &ureq::Error) -> bool {
    matches!(
        e,
        ureq::Error::Io(_) | ureq::Error::ConnectionFailed | ureq::Error::Timeout(_)
    )
}

/// The error, with what to do about a certificate the client refused (rustls
/// reports those as I/O errors naming the certificate).
fn describe_error(e: &ureq::Error) -> String {
    let text = e.to_string();
    if text.contains("CaUsedAsEndEntity") {
        format!(
            "{text} (the server's certificate is a CA certificate, as `openssl req -x509` makes by \
             default: make it with -addext basicConstraints=critical,CA:FALSE, or sign it with a CA \
             and pass that CA with --ca-cert)"
        )
    } else if matches!(e, ureq::Error::Tls(_) | ureq::Error::Rustls(_))
        || text.contains("certificate")
    {
        format!("{text} (a server with a private or self-signed certificate needs --ca-cert FILE)")
    } else {
        text
    }
}

fn retry_after(r: &ureq::http::Response<ureq::Body>) -> Option<Duration> {
    let secs: u64 = r
        .headers()
        .get("retry-after")?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(secs.clamp(1, 10)))
}

fn reason(status: u16) -> &'static str {
    match status {
        400 => "(bad request)",
        401 => "(the token is missing, unknown or revoked)",
        403 => "(forbidden)",
        404 => "(no results server there: is the URL right?)",
        413 => "(too large)",
        415 => "(not JSON)",
        422 => "(not a valid run record)",
        429 => "(too many uploads: try again later)",
        _ => "",
    }
}

/// An `http://` or `https://` URL with a host; plain HTTP only to this
/// machine, since the token travels in the request.
pub fn check_url(url: &str, option: &str) -> Result<String> {
    let url = url.trim();
    let uri: ureq::http::Uri = url
        .parse()
        .with_context(|| format!("{option} {url}: not a URL (e.g. https://results.example.org)"))?;
    let Some(host) = uri.host().filter(|h| !h.is_empty()) else {
        bail!("{option} {url}: no host in the URL (e.g. https://results.example.org)");
    };
    if uri.query().is_some() {
        bail!("{option} {url}: a results server's address has no query (`?…`)");
    }
    match uri.scheme_str() {
        Some("https") => {}
        Some("http") if is_loopback(host) => {}
        Some("http") => bail!(
            "{option} {url}: plain http:// would send the upload token in clear; \
             use https:// (plain HTTP is accepted only on this machine: 127.0.0.1, ::1, localhost)"
        ),
        _ => bail!("{option} {url}: the URL must start with https:// (or http:// on this machine)"),
    }
    Ok(url.trim_end_matches('/').to_string())
}

fn is_loopback(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost")
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The token: the file's one line, else the environment's. A token is
/// printable ASCII without spaces, as `serve token add` makes them.
fn read_token(file: Option<&Path>) -> Result<String> {
    let (token, from) = match file {
        Some(p) => {
            let bytes = sysgauge_core::file::read_regular_file(p, "--token-file", 64 * 1024)?;
            let text = String::from_utf8(bytes)
                .map_err(|_| anyhow::anyhow!("--token-file {}: not text", p.display()))?;
            warn_if_readable_by_others(p);
            (text, format!("--token-file {}", p.display()))
        }
        None => match std::env::var(TOKEN_ENV) {
            Ok(t) => (t, TOKEN_ENV.to_string()),
            Err(_) => bail!(
                "uploading needs a token: --token-file FILE or the {TOKEN_ENV} environment variable \
                 (`sysgauge serve token add NAME` on the server makes one)"
            ),
        },
    };
    let token = token.trim();
    if token.is_empty() {
        bail!("{from}: the token is empty");
    }
    if token.lines().count() > 1 || !token.bytes().all(|b| b.is_ascii_graphic()) {
        bail!("{from}: a token is one word of printable characters (as `sysgauge serve token add` prints it)");
    }
    Ok(token.to_string())
}

fn warn_if_readable_by_others(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(m) = std::fs::metadata(p) {
        if m.permissions().mode() & 0o044 != 0 {
            eprintln!(
                "sysgauge: warning: --token-file {} is readable by other users (chmod 600 it)",
                p.display()
            );
        }
    }
}

fn read_ca(p: &Path) -> Result<ureq::tls::RootCerts> {
    let pem = sysgauge_core::file::read_regular_file(p, "--ca-cert", 4 << 20)?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => certs.push(c),
            Ok(_) => {}
            Err(e) => bail!("--ca-cert {}: not a PEM file: {e}", p.display()),
        }
    }
    if certs.is_empty() {
        bail!(
            "--ca-cert {}: no certificate in it (expected PEM, -----BEGIN CERTIFICATE-----)",
            p.display()
        );
    }
    Ok(ureq::tls::RootCerts::new_with_certs(&certs))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file `name` holding `text` in a new temporary directory (removed
    /// when the directory is dropped).
    fn file_holding(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join(name);
        std::fs::write(&f, text).expect("write");
        (dir, f)
    }

    #[test]
    fn plain_http_only_on_loopback() {
        for ok in [
            "http://127.0.0.1:8080",
            "http://localhost:8080/",
            "http://[::1]:9000",
            "https://results.example.org",
            "https://10.0.0.5:8443/sg/",
        ] {
            assert!(check_url(ok, "--upload").is_ok(), "{ok}");
        }
        for (bad, says) in [
            ("http://10.0.0.5:8080", "in clear"),
            ("http://results.example.org", "in clear"),
            ("ftp://127.0.0.1/", "must start with https://"),
            ("results.example.org", "must start with https://"),
            ("https://", "not a URL"),
            ("https://h/?token=x", "no query"),
            ("not a url at all", "not a URL"),
        ] {
            let e = check_url(bad, "--upload").expect_err(bad).to_string();
            assert!(e.contains(says) && e.contains("--upload"), "{bad}: {e}");
        }
        assert_eq!(
            check_url("https://h.example/sg/", "--to").unwrap_or_default(),
            "https://h.example/sg"
        );
    }

    #[test]
    fn tokens_are_one_printable_word() {
        let (dir, f) = file_holding("t", "sgt_abc123\n");
        assert_eq!(read_token(Some(&f)).expect("token"), "sgt_abc123");
        for bad in ["", "  \n", "two words", "a\nb"] {
            std::fs::write(&f, bad).expect("write");
            let e = read_token(Some(&f)).expect_err(bad).to_string();
            assert!(e.contains("--token-file"), "{bad:?}: {e}");
        }
        let e = read_token(Some(&dir.path().join("missing")))
            .expect_err("missing")
            .to_string();
        assert!(e.contains("missing"), "{e}");
    }

    #[test]
    fn a_ca_file_must_hold_a_certificate() {
        let (_dir, f) = file_holding("ca.pem", "hello\n");
        let e = match read_ca(&f) {
            Ok(_) => panic!("a file without a certificate was accepted"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("no certificate"), "{e}");
    }

    #[test]
    fn the_token_stays_out_of_debug_output() {
        let (_dir, f) = file_holding("t", "sgt_secret_value");
        let u = Uploader::new(
            "http://127.0.0.1:1",
            &TokenArgs {
                token_file: Some(f),
                ca_cert: None,
            },
            "--upload",
        )
        .expect("uploader");
        assert!(!format!("{u:?}").contains("sgt_secret_value"));
        assert_eq!(u.server(), "http://127.0.0.1:1");
    }
}
