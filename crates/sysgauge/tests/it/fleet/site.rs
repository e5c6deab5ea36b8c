//! The results site end to end: `sysgauge serve` over a real PostgreSQL
//! with an HTTPS certificate made by openssl, in the lab's hub namespace;
//! two lab hosts (alpha and bravo, both named `twin`) measure through
//! `fleet run` and upload their own runs over the bridge with a token, the
//! controller uploads them again (already there), and the hub itself (the
//! local machine) uploads its run; headless Chromium in the hub loads the
//! machines page, a run page and a comparison link, and the page shows the
//! numbers the CLI's `compare` prints for the same machines.

use super::{available, Lab, TINY_MD5};
use crate::common::{stderr_of, stdout_of, Browser, Outcome, Sandbox};
use crate::upload::add_token;
use std::path::Path;
use std::time::{Duration, Instant};
use sysgauge_testkit::ChildGuard;

const PORT: u16 = 8443;

/// GET `url` from inside namespace `ns`, trusting `ca`: status and body.
fn get_in(ns: &str, url: &str, ca: &str) -> (u16, String) {
    let (url, ca) = (url.to_string(), ca.to_string());
    sysgauge_testkit::netns::in_netns(ns, move || crate::upload::get(&url, Some(Path::new(&ca))))
        .join()
        .unwrap_or((0, "the request panicked".into()))
}

/// Every number a text table of `compare` shows (`1.234`, `+5.6 %`, `0.98x`
/// lose their decorations): what the site's page must show too.
fn numbers_of(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == '|' || c == '(' || c == ')' || c == ',')
        .map(|w| w.trim_matches(|c: char| !c.is_ascii_digit()))
        .filter(|w| w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_string)
        .collect()
}

#[test]
fn three_machines_upload_and_the_site_shows_what_compare_prints() {
    if !available() {
        return;
    }
    let Some(pg) = sysgauge_testkit::require_postgres("site_end_to_end") else {
        return;
    };
    let sb = Sandbox::new();
    let Some(browser) = Browser::find(&sb) else {
        return;
    };
    pg.create_database("site");
    let site_db = pg.socket_url("site");
    let lab = Lab::running(2);
    let hub = lab.hub.hub.clone();
    let ip = lab.hub.bridge_address();
    let Some((cert, key)) =
        sysgauge_testkit::self_signed_certificate(sb.path(), &format!("IP:{ip}"))
    else {
        return;
    };
    let (cert, key) = (cert.display().to_string(), key.display().to_string());
    let token = add_token(&sb, Path::new(&site_db), "lab")
        .display()
        .to_string();
    let url = format!("https://{ip}:{PORT}");
    // The site, in the hub namespace, on the bridge's address.
    let mut cmd = std::process::Command::new("ip");
    cmd.args(["netns", "exec", &hub])
        .arg(crate::common::sysgauge_bin())
        .args([
            "serve",
            "--db",
            &site_db,
            "--listen",
            &format!("{ip}:{PORT}"),
        ])
        .args(["--tls-cert", &cert, "--tls-key", &key]);
    let mut server = ChildGuard::spawn(&mut cmd);
    let t0 = Instant::now();
    while get_in(&hub, &format!("{url}/health"), &cert).0 != 200 {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the site did not start: {}",
            server.output()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // alpha and bravo measure and upload their own runs; the controller
    // stores them and uploads them too (already there).
    let inventory = lab.inventory();
    let upload = ["--upload", &url, "--token-file", &token, "--ca-cert", &cert];
    let mut args = vec!["--inventory", &inventory, "--limit", "alpha,bravo"];
    args.extend(upload);
    args.extend(TINY_MD5);
    args.extend(upload);
    let out = lab.fleet(&sb, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let table = stdout_of(&out);
    assert_eq!(table.matches("(uploaded)").count(), 2, "{table}");
    // The local machine (the hub) uploads its own.
    let out = sysgauge_testkit::output_of_success(
        std::process::Command::new("ip")
            .args(["netns", "exec", &hub])
            .arg(crate::common::sysgauge_bin())
            .args([
                "run",
                "--no-wait",
                "--profile",
                "tiny",
                "--only",
                "hash.md5",
                "--db",
            ])
            .arg(sb.path().join("local.db"))
            .args(upload),
    );
    assert!(
        stderr_of(&out).contains("uploaded: https://"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(pg.psql("site", "SELECT count(*) FROM runs"), "3");

    // What the CLI's compare prints for the local machine against the two
    // twins (one host name, two machines).
    let local = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string();
    let cli = sb
        .cmd()
        .args(["compare", &local, "twin", "--db", &site_db])
        .succeeds();
    let cli_text = stdout_of(&cli);
    let numbers = numbers_of(&cli_text);
    assert!(numbers.len() >= 3, "{cli_text}");

    // The pages, as a reader's browser shows them.
    let browser = browser.in_netns(&hub);
    let machines = browser.url_silent_dom(&format!("{url}/"));
    assert!(machines.matches("twin").count() >= 2, "{machines}");
    browser.url_screenshot(&format!("{url}/"), &sb.path().join("machines.png"));
    let runs = sb.listed_runs_on(&site_db);
    let first = runs[0]["run_id"].as_str().unwrap().to_string();
    let (page, _) = browser.url_dom_and_console(&format!("{url}/runs/{first}"));
    assert!(page.contains("hash.md5"), "{page}");
    browser.url_screenshot(&format!("{url}/runs/{first}"), &sb.path().join("run.png"));
    let link = format!("{url}/compare?m={local}&m=twin&ref={local}");
    let compare = browser.url_silent_dom(&link);
    for n in &numbers {
        assert!(
            compare.contains(n.as_str()),
            "{n} (from compare) is not on the page:\n{cli_text}\n{compare}"
        );
    }
    assert!(compare.matches("twin").count() >= 2, "{compare}");
    browser.url_screenshot(&link, &sb.path().join("compare.png"));
    if let Some(dir) = std::env::var_os("SYSGAUGE_KEEP_REPORT") {
        for f in ["machines.png", "run.png", "compare.png"] {
            let _ = std::fs::copy(sb.path().join(f), Path::new(&dir).join(format!("site-{f}")));
        }
    }
    // SIGTERM: the site stops by itself.
    server.interrupt();
    assert!(server.wait_exit(Duration::from_secs(20)).is_some());
    drop(lab);
}
