//! A frozen PostgreSQL server: the postmaster and every backend stopped
//! with SIGSTOP, so the kernel keeps their connections up and nothing
//! answers (what a hung host or a silent network looks like). A run whose
//! server freezes mid-run must say so, naming the database without its
//! password, within `sysgauge_store::FROZEN_AFTER` of the first unanswered
//! call, and keep every measurement in its JSON record; a run waiting on
//! the frozen server must answer SIGTERM within two seconds.
//!
//! The server is started by the test (Debian's postgresql in a temporary
//! directory) and thawed with SIGCONT by a Drop guard on every exit path,
//! so it can be stopped and removed. Skipped without PostgreSQL; failing
//! under `SYSGAUGE_REQUIRE_ALL=1`.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{await_line, read_record, Sandbox};
use std::time::{Duration, Instant};
use sysgauge_testkit::{processes_mentioning, require_postgres, ChildGuard, PgServer};

/// The stopped processes of a server, continued on drop.
struct Frozen(Vec<i32>);

impl Frozen {
    /// Stops the postmaster listening on `port` first (so it forks no new
    /// backend), then each of its children.
    fn server(pg: &PgServer) -> Frozen {
        let needle = format!("-p {} -k", pg.port());
        let postmaster = processes_mentioning(&needle)
            .into_iter()
            .find(|p| p.cmdline.contains("postgres"))
            .unwrap_or_else(|| panic!("no postmaster with {needle:?}"))
            .pid;
        let mut frozen = Frozen(Vec::new());
        frozen.stop(postmaster);
        for child in children_of(postmaster) {
            frozen.stop(child);
        }
        frozen
    }

    fn stop(&mut self, pid: i32) {
        // SAFETY: signals a process of the server this test started.
        if unsafe { libc::kill(pid, libc::SIGSTOP) } == 0 {
            self.0.push(pid);
        }
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        for &pid in &self.0 {
            // SAFETY: continues a process this guard stopped.
            unsafe { libc::kill(pid, libc::SIGCONT) };
        }
    }
}

/// Live children of `parent`, from /proc.
fn children_of(parent: i32) -> Vec<i32> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, not ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<i32>().ok());
        if ppid == Some(parent) {
            found.push(pid);
        }
    }
    found
}

/// `run` of three small cases on `url`, its record also in `json`.
fn run_on(sb: &Sandbox, url: &str, json: &std::path::Path) -> ChildGuard {
    let mut cmd = sb.std_cmd();
    cmd.args(["run", "--profile", "tiny", "--repetitions", "3"])
        .args(["--only", "hash.md5,hash.sha1,hash.sha256"])
        .arg("--scratch-dir")
        .arg(sb.scratch())
        .args(["--db", url, "--json"])
        .arg(json);
    ChildGuard::spawn(&mut cmd)
}

/// [`run_on`], once its first case is done (within two minutes).
fn past_its_first_case(sb: &Sandbox, url: &str, json: &std::path::Path) -> ChildGuard {
    let mut run = run_on(sb, url, json);
    await_line(&mut run, "[1/", Duration::from_secs(120));
    run
}

/// SIGTERM to a run waiting on the frozen server: it ends within 2 s,
/// saying it was interrupted while waiting. What it printed.
fn terminated_at_once(mut run: ChildGuard, when: &str) -> String {
    // SAFETY: signals the child this test spawned.
    unsafe { libc::kill(run.pid() as i32, libc::SIGTERM) };
    let t0 = Instant::now();
    let status = run.wait_exit(Duration::from_secs(30));
    let took = t0.elapsed();
    let log = run.output();
    assert!(status.is_some(), "{when}: no exit after SIGTERM: {log}");
    eprintln!("{when}: exit {took:?} after SIGTERM\n{log}");
    assert!(
        took < Duration::from_secs(2),
        "{when}: {took:?} from SIGTERM to the exit: {log}"
    );
    assert!(log.contains("interrupted while waiting"), "{log}");
    log
}

#[test]
fn a_frozen_postgres_ends_the_run_with_its_json_and_signals_are_answered() {
    let Some(pg) = require_postgres("a frozen PostgreSQL") else {
        return;
    };
    let plain = pg.create_database("frozen");
    // The server trusts every local connection, so a password is ignored:
    // it is there to be hidden.
    let url = plain.replacen("postgres@", "postgres:frozenpw@", 1);
    let sb = Sandbox::new();

    // Frozen once the first case is stored.
    let json = sb.path().join("run.json");
    let mut run = past_its_first_case(&sb, &url, &json);
    let frozen = Frozen::server(&pg);
    let t0 = Instant::now();
    let status = run.wait_exit(Duration::from_secs(90));
    let took = t0.elapsed();
    let log = run.output();
    let status = status.unwrap_or_else(|| panic!("the run did not end: {log}"));
    assert_eq!(status.code(), Some(2), "{log}");
    assert!(log.contains("no answer from the server"), "{log}");
    assert!(log.contains(&plain), "the database is named: {log}");
    assert!(!log.contains("frozenpw"), "{log}");
    assert!(log.contains("could not be stored"), "{log}");
    // The first unanswered call began at most a case's time after the
    // freeze (tiny cases take a second or two).
    let bound = sysgauge_store::FROZEN_AFTER + Duration::from_secs(10);
    assert!(took < bound, "{took:?} from the freeze to the exit: {log}");
    eprintln!("frozen mid-run: exit {took:?} after the freeze\n{log}");
    let record = read_record(&json);
    assert_eq!(record.results.len(), 3, "{log}");
    assert!(record.results.iter().all(|r| r.is_ok()), "{log}");

    // Still frozen: a new run hangs on its connection; SIGTERM ends it.
    let json2 = sb.path().join("run2.json");
    let run = run_on(&sb, &url, &json2);
    std::thread::sleep(Duration::from_secs(2));
    let log = terminated_at_once(run, "frozen at open");
    assert!(log.contains(&plain), "{log}");
    assert!(!log.contains("frozenpw"), "{log}");

    // Thawed, the server serves again; frozen again while a run's call
    // to store a case waits, SIGTERM still ends the run at once, its
    // record kept.
    drop(frozen);
    let json3 = sb.path().join("run3.json");
    let run = past_its_first_case(&sb, &url, &json3);
    let frozen = Frozen::server(&pg);
    // A store call is waiting now (well before the 13 s give it up).
    std::thread::sleep(Duration::from_secs(3));
    let log = terminated_at_once(run, "frozen mid-run");
    let record = read_record(&json3);
    assert!(!record.results.is_empty(), "{log}");
    drop(frozen);
    let listed = sb
        .cmd()
        .args(["results", "list", "--json", "--db", &url])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(listed.status.success(), "{listed:?}");
}
