//! `sysgauge serve` as a user runs it: a token made with `serve token add`,
//! two runs uploaded, the site's comparison equal to what `sysgauge
//! compare` prints of the same database, and SIGTERM ending it cleanly.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{stdout_of, Browser, Outcome, Sandbox};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use sysgauge_testkit::ChildGuard;

/// The ADDR:PORT of the `http://ADDR:PORT …` that `serve` says it
/// serves on (the port is the one the kernel gave `127.0.0.1:0`).
fn served_address(said: &str) -> String {
    said.split("http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {said}"))
        .to_string()
}

/// One HTTP/1.1 request; the status and the body.
fn http(addr: &str, method: &str, path: &str, headers: &str, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_string())
}

#[test]
fn the_site_takes_uploads_and_compares_as_the_command_does() {
    let sb = Sandbox::new();
    let site = sb.path().join("site.db");
    for (label, rate) in [("A", 250), ("B", 100)] {
        sb.tiny_run()
            .env("SYSGAUGE_FAKE_FAMILY", format!("rate={rate},latency=40"))
            .args(["--only", "fake", "--label", label, "--json"])
            .arg(sb.path().join(format!("{label}.json")))
            .succeeds();
    }
    let out = sb
        .cmd()
        .args(["serve", "token", "add", "ci", "--db"])
        .arg(&site)
        .succeeds();
    let token = stdout_of(&out).trim().to_string();
    assert!(token.starts_with("sgt_"), "{token}");

    let mut server = sb
        .std_cmd()
        .args(["serve", "--listen", "127.0.0.1:0", "--db"])
        .arg(&site)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let addr = served_address(&first);

    let auth = format!("Authorization: Bearer {token}\r\nContent-Type: application/json\r\n");
    for label in ["A", "B"] {
        let body = std::fs::read_to_string(sb.path().join(format!("{label}.json"))).unwrap();
        let (status, answer) = http(&addr, "POST", "/api/runs", &auth, &body);
        assert_eq!(status, 201, "{answer}");
        let (again, _) = http(&addr, "POST", "/api/runs", &auth, &body);
        assert_eq!(again, 409);
    }
    let (status, served) = http(&addr, "GET", "/api/compare?m=A&m=B&ref=B", "", "");
    assert_eq!(status, 200, "{served}");
    let served: serde_json::Value = serde_json::from_str(&served).unwrap();

    let cli = sb
        .cmd()
        .args([
            "compare",
            "A",
            "B",
            "--reference",
            "B",
            "--format",
            "json",
            "--db",
        ])
        .arg(&site)
        .env("SYSGAUGE_FAKE_FAMILY", "rate=1")
        .succeeds();
    let cli: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(served["comparison"], cli);
    let ratio = cli["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["bench_id"] == "fake.rate")
        .map(|r| r["cells"][0]["ratio"].clone());
    assert_eq!(ratio, Some(serde_json::json!(2.5)), "{cli}");

    std::process::Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    let status = server.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(rest.iter().any(|l| l.contains("stopped")), "{rest:?}");
}

/// A reader's browser (headless Chromium) on the site: the machines page
/// shows an alias with its host name, and a page that fails is a page
/// with the reason, written as text, and nothing on the console.
#[test]
fn a_browser_reads_the_machines_page_and_an_error_page() {
    let sb = Sandbox::new();
    let Some(browser) = Browser::find(&sb) else {
        return;
    };
    let site = sb.path().join("site.db");
    let json = sb.path().join("run.json");
    sb.tiny_on("run", &site)
        .env("SYSGAUGE_FAKE_FAMILY", "rate=250,latency=40")
        .args(["--only", "fake", "--tag", "alias=kitchen", "--json"])
        .arg(&json)
        .succeeds();
    let host = crate::common::read_record(&json).host_name().to_string();
    let mut cmd = sb.std_cmd();
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--db"])
        .arg(&site);
    let server = ChildGuard::spawn_ready(&mut cmd, "serving", Duration::from_secs(30));
    let said = server.output();
    let addr = served_address(&said);
    let home = browser.url_silent_dom(&format!("http://{addr}/"));
    assert!(home.contains("kitchen"), "{home}");
    assert!(home.contains(&format!("host {host}")), "{home}");
    let error = browser.url_silent_dom(&format!(
        "http://{addr}/compare?m=%3Cb%3Enope%3C%2Fb%3E&m=kitchen"
    ));
    assert!(error.contains("<h1>404 Not Found</h1>"), "{error}");
    assert!(
        error.contains("'&lt;b&gt;nope&lt;/b&gt;' is not a host"),
        "{error}"
    );
    drop(server);
}
