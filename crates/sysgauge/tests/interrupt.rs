//! Ctrl-C during a run: the process exits 130, the database is intact and
//! holds the finished results with the run marked interrupted, and no
//! scratch file is left behind. The run is the sweep family, whose input
//! files live in the scratch directory while it runs, so "no scratch file
//! left" is checked against files that really existed.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

mod common;

use common::Sandbox;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[test]
fn sigint_leaves_intact_database_and_no_scratch() {
    let sb = Sandbox::new();
    let scratch = sb.scratch();
    let db = sb.db();
    let bin = assert_cmd::cargo::cargo_bin("sysgauge");
    let mut child = Command::new(bin)
        .args(["run", "--only", "sweep", "--profile", "quick", "--db"])
        .arg(&db)
        .arg("--scratch-dir")
        .arg(&scratch)
        .env("HOME", sb.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.starts_with("[2/") {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    // Wait (bounded) until two cases have finished, then interrupt.
    let started = rx.recv_timeout(Duration::from_secs(120));
    let had_files: Vec<_> = files_under(&scratch)
        .into_iter()
        .filter(|p| p.is_file())
        .collect();
    // SAFETY: kill with a valid pid and signal number has no memory effects.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("sysgauge did not stop within 60 s of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let log = reader.join().unwrap_or_default();
    assert!(
        started.is_ok(),
        "no case finished before the timeout:\n{log}"
    );
    assert!(
        !had_files.is_empty(),
        "the scratch directory held no file when the run was interrupted:\n{log}"
    );
    assert_eq!(status.code(), Some(130), "stderr:\n{log}");
    assert!(log.contains("interrupted"), "{log}");

    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let (status, n): (String, i64) = conn
        .query_row(
            "SELECT status, (SELECT count(*) FROM results) FROM runs",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(status, "interrupted");
    assert!(n >= 2, "finished results were lost ({n})");
    let left = files_under(&scratch);
    assert!(left.is_empty(), "scratch files left behind: {left:?}");
}

/// Every file and directory under `dir`, recursively.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
        {
            let p = e.path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out
}
