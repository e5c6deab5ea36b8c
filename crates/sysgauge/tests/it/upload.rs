//! Uploads to a real `sysgauge serve` on loopback: `--upload` on a
//! measuring command, `sysgauge upload` of stored runs and files, the token
//! and URL rules, and HTTPS with a certificate made by `openssl` for the
//! test. Every server is a child killed on drop; every wait is bounded.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{stderr_of, stdout_of, Outcome, Sandbox};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use sysgauge_testkit::ChildGuard;

/// A results site for one test: its database, a token, and the server.
pub(crate) struct Site {
    pub url: String,
    pub token_file: PathBuf,
    pub db: PathBuf,
    _server: ChildGuard,
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// `sysgauge serve token add NAME`: the token it prints, into a file of
/// the sandbox (mode 600).
pub(crate) fn add_token(sb: &Sandbox, db: &Path, name: &str) -> PathBuf {
    let out = sb
        .cmd()
        .args(["serve", "token", "add", name, "--db"])
        .arg(db)
        .succeeds();
    let token = stdout_of(&out)
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .to_string();
    assert!(
        !token.is_empty() && !token.contains(' '),
        "no token in: {}",
        stdout_of(&out)
    );
    token_file(sb, name, &token)
}

/// `token` in a file of the sandbox (mode 600, as a token file must be).
fn token_file(sb: &Sandbox, name: &str, token: &str) -> PathBuf {
    let file = sb.path().join(format!("{name}.token"));
    std::fs::write(&file, format!("{token}\n")).unwrap();
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    file
}

/// A tiny `run --only hash.md5` that uploads to `url` with the token in
/// `token_file`.
fn md5_run_uploading(sb: &Sandbox, url: &str, token_file: &Path) -> assert_cmd::Command {
    let mut c = sb.tiny_run();
    c.args(["--only", "hash.md5", "--upload", url, "--token-file"])
        .arg(token_file);
    c
}

/// GET `url` (HTTPS trusting `ca`): status and body.
pub(crate) fn get(url: &str, ca: Option<&Path>) -> (u16, String) {
    let mut tls = ureq::tls::TlsConfig::builder().unversioned_rustls_crypto_provider(
        std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider()),
    );
    if let Some(ca) = ca {
        let pem = std::fs::read(ca).unwrap();
        let certs: Vec<_> = ureq::tls::parse_pem(&pem)
            .filter_map(|i| match i {
                Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
                _ => None,
            })
            .collect();
        tls = tls.root_certs(ureq::tls::RootCerts::new_with_certs(&certs));
    }
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .tls_config(tls.build())
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    match agent.get(url).call() {
        Ok(mut r) => (
            r.status().as_u16(),
            r.body_mut().read_to_string().unwrap_or_default(),
        ),
        Err(e) => (0, e.to_string()),
    }
}

impl Site {
    /// `sysgauge serve` on `db` at a free loopback port, with `extra`
    /// options; ready once /health answers 200 (20 s at most).
    pub(crate) fn start(
        sb: &Sandbox,
        db: &Path,
        scheme: &str,
        extra: &[&str],
        ca: Option<&Path>,
    ) -> Site {
        let token_file = add_token(sb, db, "tester");
        let port = free_port();
        let listen = format!("127.0.0.1:{port}");
        let mut cmd = sb.std_cmd();
        cmd.args(["serve", "--listen", &listen, "--db"])
            .arg(db)
            .args(extra);
        let server = ChildGuard::spawn(&mut cmd);
        let url = format!("{scheme}://127.0.0.1:{port}");
        let t0 = Instant::now();
        loop {
            if get(&format!("{url}/health"), ca).0 == 200 {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "the server did not answer /health: {}",
                server.output()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Site {
            url,
            token_file,
            db: db.to_path_buf(),
            _server: server,
        }
    }
}

/// The run page `--upload` named on stderr (`uploaded: URL`).
fn uploaded_url(out: &std::process::Output) -> String {
    stderr_of(out)
        .lines()
        .find_map(|l| {
            l.split_once("uploaded: ")
                .map(|(_, u)| u.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no upload line: {}", stderr_of(out)))
}

#[test]
fn a_run_uploads_once_and_the_site_shows_it() {
    let sb = Sandbox::new();
    let site = Site::start(&sb, &sb.path().join("site.db"), "http", &[], None);
    let tok = site.token_file.display().to_string();
    // Measured, stored at home, then uploaded; the page is the run's.
    let out = md5_run_uploading(&sb, &site.url, &site.token_file).succeeds();
    let page = uploaded_url(&out);
    assert!(page.starts_with(&format!("{}/runs/", site.url)), "{page}");
    assert!(
        stdout_of(&out).contains(&format!("Uploaded: {page}")),
        "{}",
        stdout_of(&out)
    );
    let run = sb.stored_run(1);
    assert!(page.ends_with(&run.run_id), "{page} vs {}", run.run_id);
    let (status, html) = get(&page, None);
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("hash.md5"), "{html}");
    // Again, from the store by number and from a --json file: already there.
    let out = sb
        .on_db("upload")
        .args(["1", "--to", &site.url, "--token-file", &tok])
        .succeeds();
    assert!(
        stderr_of(&out).contains("already on the server"),
        "{}",
        stderr_of(&out)
    );
    let json = sb.path().join("run.json");
    sb.on_db("results")
        .args(["export", "1", "--format", "json", "--output"])
        .arg(&json)
        .succeeds();
    let out = sb
        .cmd()
        .arg("upload")
        .arg(&json)
        .args(["--to", &site.url])
        .env(
            "SYSGAUGE_TOKEN",
            std::fs::read_to_string(&site.token_file).unwrap().trim(),
        )
        .succeeds();
    assert!(
        stderr_of(&out).contains("already on the server"),
        "{}",
        stderr_of(&out)
    );
    // A wrong token is refused by the site: the run stays home, status 2,
    // the reason and how to send it again said.
    let bad = token_file(&sb, "bad", "sgt_not_a_real_token");
    let out = md5_run_uploading(&sb, &site.url, &bad).exits_with(2);
    let err = stderr_of(&out);
    // The command said names everything the upload used: the token file
    // and the database the run is in (not the default one).
    let again = format!(
        "`sysgauge upload 2 --to {} --token-file {} --db {}`",
        site.url,
        bad.display(),
        sb.db().display()
    );
    assert!(err.contains("401") && err.contains(&again), "{err}");
    assert!(
        !err.contains("sgt_not_a_real_token"),
        "the token leaked: {err}"
    );
    assert_eq!(sb.listed_runs().as_array().map(Vec::len), Some(2));
    // With the token file put right, the command as said sends the run.
    std::fs::copy(&site.token_file, &bad).unwrap();
    let words: Vec<&str> = again.trim_matches('`').split_whitespace().collect();
    let out = sb.cmd().args(&words[1..]).succeeds();
    assert!(
        stderr_of(&out).contains("uploaded: "),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn bad_upload_options_are_refused_before_measuring() {
    let sb = Sandbox::new();
    let tok = sb.path().join("t");
    std::fs::write(&tok, "sgt_x\n").unwrap();
    for (args, says) in [
        (vec!["--upload", "http://192.0.2.7:8080"], "in clear"),
        (
            vec![
                "--upload",
                "https://h.example",
                "--token-file",
                "/nonexistent",
            ],
            "/nonexistent",
        ),
        (vec!["--token-file", "t"], "give --upload URL too"),
        (
            vec!["--upload", "ftp://127.0.0.1/"],
            "must start with https://",
        ),
    ] {
        let mut c = sb.tiny_run();
        c.args(["--only", "hash.md5"]).args(&args);
        if !args.contains(&"--token-file") {
            c.env("SYSGAUGE_TOKEN", "sgt_x");
        }
        c.usage_error(says);
    }
    // No token at all.
    let out = sb
        .tiny_run()
        .args(["--only", "hash.md5", "--upload", "http://127.0.0.1:9"])
        .env_remove("SYSGAUGE_TOKEN")
        .output()
        .unwrap();
    assert!(
        stderr_of(&out).contains("SYSGAUGE_TOKEN"),
        "{}",
        stderr_of(&out)
    );
    // Nothing was measured, so nothing stored.
    assert!(!sb.db().exists() || sb.listed_runs().as_array().is_none_or(Vec::is_empty));
}

#[test]
fn https_with_a_private_certificate() {
    let sb = Sandbox::new();
    let Some((cert, key)) =
        sysgauge_testkit::self_signed_certificate(sb.path(), "IP:127.0.0.1,DNS:localhost")
    else {
        return;
    };
    let (c, k) = (cert.display().to_string(), key.display().to_string());
    let site = Site::start(
        &sb,
        &sb.path().join("site.db"),
        "https",
        &["--tls-cert", &c, "--tls-key", &k],
        Some(&cert),
    );
    let tok = site.token_file.display().to_string();
    // Without --ca-cert the certificate is not trusted: the error says how.
    md5_run_uploading(&sb, &site.url, &site.token_file).usage_error("--ca-cert");
    // With it, the stored run goes up.
    let out = sb
        .on_db("upload")
        .args([
            "1",
            "--to",
            &site.url,
            "--token-file",
            &tok,
            "--ca-cert",
            &c,
        ])
        .succeeds();
    assert!(
        stderr_of(&out).contains("uploaded: https://127.0.0.1:"),
        "{}",
        stderr_of(&out)
    );
    let _ = site.db;
}

/// A token that could not be shown (stdout full or closed) is revoked, not
/// left live with nobody holding it; the listing survives a closed stdout.
#[test]
fn a_token_nobody_saw_is_revoked() {
    let sb = Sandbox::new();
    let db = sb.path().join("site.db");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = sb
        .std_cmd()
        .args(["serve", "token", "add", "lost", "--db"])
        .arg(&db)
        .stdout(full)
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert!(
        stderr_of(&out).contains("token 'lost' could not be shown, so it is revoked"),
        "{}",
        stderr_of(&out)
    );
    let list = sb
        .cmd()
        .args(["serve", "token", "list", "--db"])
        .arg(&db)
        .succeeds();
    let listed = stdout_of(&list);
    assert!(
        listed.starts_with("lost\t") && listed.contains("revoked"),
        "{listed}"
    );
}
