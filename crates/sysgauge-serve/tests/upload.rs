//! `POST /api/runs` and `/health` over a real SQLite file and a real
//! PostgreSQL server: what is stored, what is refused (with which status),
//! and that a refusal changes nothing.

#![allow(clippy::unwrap_used)] // a test panics on the first broken step

mod common;

use common::*;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;
use sysgauge_store::Store;

fn sqlite_db(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("site.db")
}

/// Two tests of one `scenario` (a function of the database's path or
/// URL): on a SQLite file, and on PostgreSQL database `database` (skipped,
/// or failing under `SYSGAUGE_REQUIRE_ALL=1`, without PostgreSQL).
macro_rules! on_sqlite_and_postgres {
    ($scenario:ident, $database:literal: $sqlite:ident, $postgres:ident) => {
        #[test]
        fn $sqlite() {
            let dir = tempfile::tempdir().unwrap();
            $scenario(&sqlite_db(&dir));
        }

        #[test]
        fn $postgres() {
            let Some(pg) = sysgauge_testkit::require_postgres(stringify!($postgres)) else {
                return;
            };
            let url = pg.create_database($database);
            $scenario(std::path::Path::new(&url));
        }
    };
}

/// Every refusal the wire contract names, then a good upload and its
/// duplicate, on the database `db`.
fn refusals_change_nothing(db: &std::path::Path) {
    let server = Server::start(db, |c| c.max_upload = 64 * 1024);
    let token = server.token("lab");
    let revoked = server.token("old");
    assert!(Store::open(db).unwrap().revoke_token("old").unwrap());
    let run = a_run("pi", 1);
    let body = serde_json::to_string(&run).unwrap();
    let url = server.url("/api/runs");

    let none = post(&url, None, "application/json", &body);
    assert_eq!(none.status, 401, "{}", none.body);
    assert!(none
        .www_authenticate
        .iter()
        .any(|w| w.starts_with("Bearer")));
    assert!(none.error().contains("token"), "{}", none.body);
    let unknown = post(&url, Some("sgt_nope"), "application/json", &body);
    assert_eq!(unknown.status, 401);
    assert_eq!(unknown.error(), "unknown token");
    let old = post(&url, Some(&revoked), "application/json", &body);
    assert_eq!(old.status, 401);
    assert!(old.error().contains("revoked"), "{}", old.body);

    let text = post(&url, Some(&token), "text/plain", &body);
    assert_eq!(text.status, 415, "{}", text.body);
    assert!(text.error().contains("application/json"));

    let mut big = run.clone();
    big.label = Some("x".repeat(70 * 1024));
    let over = post(
        &url,
        Some(&token),
        "application/json",
        &serde_json::to_string(&big).unwrap(),
    );
    assert_eq!(over.status, 413, "{}", over.body);
    assert!(over.error().contains("65536 bytes"), "{}", over.body);

    for (bad, says) in [
        ("{not json", "not valid JSON"),
        ("[]", "one run record"),
        (r#"{"run_id": "x"}"#, "schema_version"),
        ("42", "one run record"),
    ] {
        let a = post(&url, Some(&token), "application/json", bad);
        assert_eq!(a.status, 400, "{bad}: {}", a.body);
        assert!(a.error().contains(says), "{bad}: {}", a.body);
    }
    // A record the importer refuses: a negative throughput.
    let mut negative = a_run("pi", 2);
    negative.results[0].metrics[0].samples[0] = -1.0;
    let a = upload(&server, &token, &negative);
    assert_eq!(a.status, 400, "{}", a.body);
    assert!(a.error().contains("negative"), "{}", a.body);
    // Two records in one body.
    let two = serde_json::to_string(&vec![a_run("pi", 3), a_run("pi", 4)]).unwrap();
    let a = post(&url, Some(&token), "application/json", &two);
    assert_eq!(a.status, 400, "{}", a.body);
    assert_eq!(server.runs(), 0, "no refused upload stored anything");

    let ok = upload(&server, &token, &run);
    assert_eq!(ok.status, 201, "{}", ok.body);
    let url_of_run = format!("/runs/{}", run.run_id);
    assert_eq!(ok.json()["run_id"], run.run_id.as_str());
    assert_eq!(ok.json()["url"], url_of_run.as_str());
    assert_eq!(ok.location.as_deref(), Some(url_of_run.as_str()));
    assert_eq!(server.runs(), 1);
    let stored = Store::open_read_only(db).unwrap().list_runs().unwrap();
    assert_eq!(stored[0].run_uuid, run.run_id);
    assert_eq!(stored[0].source, "upload");

    let again = upload(&server, &token, &run);
    assert_eq!(again.status, 409, "{}", again.body);
    assert_eq!(again.json()["run_id"], run.run_id.as_str());
    assert_eq!(again.json()["url"], url_of_run.as_str());
    assert!(again.error().contains("already stored"));
    assert_eq!(server.runs(), 1, "a duplicate changes nothing");

    // The API serves the stored run back.
    let back = get(&server.url(&format!("/api/runs/{}", run.run_id)), None);
    assert_eq!(back.status, 200, "{}", back.body);
    assert_eq!(back.json()["schema"], 1);
    assert_eq!(back.json()["run"]["run_id"], run.run_id.as_str());
}

on_sqlite_and_postgres!(refusals_change_nothing, "serve_refusals": refusals_change_nothing_sqlite, refusals_change_nothing_postgres);

/// 50 runs, each uploaded twice at the same moment: every run lands once,
/// one upload of each pair is told 201 and the other 409.
fn concurrent_uploads_land_once(db: &std::path::Path) {
    let server = Server::start(db, |_| {});
    let token = server.token("fleet");
    let runs: Vec<_> = (0..50).map(|i| a_run(&format!("host{i}"), i)).collect();
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let handles: Vec<_> = runs
            .iter()
            .chain(runs.iter())
            .map(|r| s.spawn(|| upload(&server, &token, r).status))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        statuses.iter().filter(|&&s| s == 201).count(),
        50,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|&&s| s == 409).count(),
        50,
        "{statuses:?}"
    );
    let stored = Store::open_read_only(db).unwrap().list_runs().unwrap();
    assert_eq!(stored.len(), 50);
    let mut ids: Vec<&str> = stored.iter().map(|r| r.run_uuid.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 50);
    assert!(stored.iter().all(|r| r.results == 2), "every run whole");
}

on_sqlite_and_postgres!(concurrent_uploads_land_once, "serve_concurrent": concurrent_uploads_land_once_sqlite, concurrent_uploads_land_once_postgres);

#[test]
fn a_token_over_its_rate_is_told_when_to_come_back() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&sqlite_db(&dir), |c| c.uploads_per_minute = 2);
    let token = server.token("slow");
    assert_eq!(upload(&server, &token, &a_run("a", 1)).status, 201);
    assert_eq!(upload(&server, &token, &a_run("a", 2)).status, 201);
    let third = upload(&server, &token, &a_run("a", 3));
    assert_eq!(third.status, 429, "{}", third.body);
    let wait: u64 = third.retry_after.as_deref().unwrap().parse().unwrap();
    assert!((1..=30).contains(&wait), "Retry-After {wait}");
    assert!(third.error().contains("try again"), "{}", third.body);
    assert_eq!(server.runs(), 2);
    // Another token has its own allowance.
    let other = server.token("other");
    assert_eq!(upload(&server, &other, &a_run("a", 3)).status, 201);
}

#[test]
fn health_says_whether_the_database_answers() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&sqlite_db(&dir), |c| {
        c.read_token = Some("a-read-token-long-enough".into())
    });
    let h = get(&server.url("/health"), None);
    assert_eq!(h.status, 200, "{}", h.body);
    let j = h.json();
    assert_eq!(j["status"], "ok");
    assert_eq!(j["database"], "ok");
    assert_eq!(j["backend"], "sqlite");
    assert_eq!(j["schema"], 1);
    // Reading needs the read token (or an upload token); /health did not.
    let denied = get(&server.url("/api/runs/x"), None);
    assert_eq!(denied.status, 401);
    assert!(denied
        .www_authenticate
        .iter()
        .any(|w| w.starts_with("Basic")));
    let found = get(
        &server.url("/api/runs/00000000-0000-4000-8000-000000000001"),
        Some("a-read-token-long-enough"),
    );
    assert_eq!(found.status, 404, "{}", found.body);
}

#[test]
fn health_is_503_when_the_database_is_gone() {
    let Some(pg) = sysgauge_testkit::require_postgres("health_is_503_when_the_database_is_gone")
    else {
        return;
    };
    let url = pg.create_database("serve_health");
    let server = Server::start(std::path::Path::new(&url), |_| {});
    assert_eq!(get(&server.url("/health"), None).status, 200);
    drop(pg);
    let h = get(&server.url("/health"), None);
    assert_eq!(h.status, 503, "{}", h.body);
    assert_eq!(h.json()["status"], "unavailable");
}

/// A connection that has sent an upload's headers, for a body of `len`
/// bytes sent by the caller as it likes.
fn upload_by_hand(server: &Server, token: &str, len: usize) -> std::net::TcpStream {
    let mut conn = std::net::TcpStream::connect(server.addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        conn,
        "POST /api/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n"
    )
    .unwrap();
    conn
}

/// An upload whose body is still arriving when the server is told to stop
/// is finished and stored; the server then ends.
#[test]
fn shutdown_finishes_an_upload_under_way() {
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite_db(&dir);
    let mut server = Server::start(&db, |_| {});
    let token = server.token("t");
    let run = a_run("late", 7);
    let body = serde_json::to_string(&run).unwrap();
    let mut conn = upload_by_hand(&server, &token, body.len());
    let (head, tail) = body.split_at(body.len() / 2);
    conn.write_all(head.as_bytes()).unwrap();
    conn.flush().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    server.signal_stop();
    std::thread::sleep(Duration::from_millis(300));
    conn.write_all(tail.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = conn.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    server.stop();
    assert_eq!(
        Store::open_read_only(&db)
            .unwrap()
            .list_runs()
            .unwrap()
            .len(),
        1
    );
}

/// A body that trickles in slower than `body_timeout` is answered 408 and
/// nothing is stored; the server goes on answering.
#[test]
fn a_body_too_slow_to_arrive_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite_db(&dir);
    let server = Server::start(&db, |c| c.body_timeout = Duration::from_secs(1));
    let token = server.token("t");
    let body = serde_json::to_string(&a_run("slowpoke", 3)).unwrap();
    let mut conn = upload_by_hand(&server, &token, body.len());
    conn.write_all(&body.as_bytes()[..body.len() / 2]).unwrap();
    conn.flush().unwrap();
    let mut answer = String::new();
    let _ = conn.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive within 1 s"), "{answer}");
    assert_eq!(server.runs(), 0);
    assert_eq!(get(&server.url("/health"), None).status, 200);
}
