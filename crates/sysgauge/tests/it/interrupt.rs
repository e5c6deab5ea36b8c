//! Ctrl-C during a run: the process exits 130, the database is intact and
//! holds the finished results with the run marked interrupted, and no
//! scratch file is left behind. The run is the sweep family, whose input
//! files live in the scratch directory while it runs, so "no scratch file
//! left" is checked against files that really existed.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{self, Sandbox};
use sysgauge_testkit::Interrupt;

#[test]
fn sigint_leaves_intact_database_and_no_scratch() {
    let sb = Sandbox::new();
    let scratch = sb.scratch();
    let db = sb.db();
    let mut had_files = Vec::new();
    // Wait (bounded) until two cases have finished, then interrupt.
    let run = Interrupt::after("[2/").run(
        sb.std_cmd()
            .args(["run", "--only", "sweep", "--profile", "quick", "--db"])
            .arg(&db)
            .arg("--scratch-dir")
            .arg(&scratch),
        |_, _| {
            had_files = files_under(&scratch)
                .into_iter()
                .filter(|p| p.is_file())
                .collect();
        },
    );
    run.assert_started_then_exited(130);
    let log = run.log;
    assert!(
        !had_files.is_empty(),
        "the scratch directory held no file when the run was interrupted:\n{log}"
    );
    assert!(log.contains("interrupted"), "{log}");

    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let (status, n) = common::run_status_and_results(&conn);
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
