//! The wait for a quiet machine before the first case: a CPU hog started
//! before `run` is named, and the run starts only after it ends; a hog
//! that outlasts the bound makes the run say so, record it and measure
//! anyway. The hog tests have the machine alone (`Sandbox::alone`): a hog
//! of one test is "busy" to another test's run, and another test's work
//! could keep the machine from becoming quiet after the hogs end.
//!
//! The hogs (one busy loop per CPU, so they fill the machine whatever
//! else runs) are siblings of the sysgauge run, not its children: other
//! processes to it. Other work on this machine (builds beside the tests)
//! may keep it from ever becoming quiet, so the limit is high (the hogs
//! alone are above it, and everything else must only stay below it), the
//! bound generous, and the checks are on the hog being named and on the
//! run starting after the hogs' end, never on exact timings.

use crate::common::{stderr_of, strict_record, Outcome, Sandbox};
use std::process::Command;
use std::time::Duration;
use sysgauge_core::record::RunRecord;
use sysgauge_host::quiet::{NOT_QUIET, TAG_BUSY, TAG_OUTCOME, TAG_SECONDS};
use sysgauge_testkit::ChildGuard;

/// Others' share of the CPUs, in %, below which these tests call the
/// machine quiet: the hogs fill it (about 100 %), other work must stay
/// below.
const LIMIT: &str = "80";

/// A busy loop per CPU, each a shell started as `sg-test-hog` (the name
/// /proc shows), killed on drop.
struct Hogs {
    _dir: tempfile::TempDir,
    hogs: Vec<ChildGuard>,
}

impl Hogs {
    fn start() -> Hogs {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let hog = dir.path().join("sg-test-hog");
        std::os::unix::fs::symlink("/bin/sh", &hog).unwrap_or_else(|e| panic!("symlink: {e}"));
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        let hogs = (0..n)
            .map(|_| ChildGuard::spawn(Command::new(&hog).args(["-c", "while :; do :; done"])))
            .collect();
        // Let them get going before the run starts looking.
        std::thread::sleep(Duration::from_millis(300));
        Hogs { _dir: dir, hogs }
    }

    fn pids(&self) -> Vec<u32> {
        self.hogs.iter().map(|h| h.pid()).collect()
    }
}

/// A tiny one-case `run` that waits at most `bound` seconds, started (not
/// waited for), its record to stdout.
fn waiting_run(sb: &Sandbox, bound: &str) -> std::process::Child {
    sb.std_cmd()
        .env_remove("SYSGAUGE_NO_WAIT")
        .args(["run", "--profile", "tiny", "--only", "hash.md5"])
        .args(["--repetitions", "1", "--no-store", "--json", "-"])
        .args(["--wait-quiet", bound, "--quiet-below", LIMIT])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"))
}

fn tag<'a>(run: &'a RunRecord, key: &str) -> &'a str {
    run.tags
        .get(key)
        .map(String::as_str)
        .unwrap_or_else(|| panic!("no tag {key}: {:?}", run.tags))
}

/// stderr names one of the hogs by name and pid.
fn names_a_hog(text: &str, pids: &[u32]) -> bool {
    pids.iter()
        .any(|p| text.contains(&format!("sg-test-hog (pid {p})")))
}

#[test]
fn the_run_waits_for_a_hog_to_end_and_names_it() {
    let sb = Sandbox::alone();
    let hogs = Hogs::start();
    let pids = hogs.pids();
    let run = waiting_run(&sb, "60");
    std::thread::sleep(Duration::from_secs(2));
    drop(hogs);
    let ended = chrono::Utc::now();
    let out = run.wait_with_output().unwrap();
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    let record = strict_record(&out.stdout);
    assert!(
        err.contains("waiting up to 60 s for a quiet machine (other processes below 80 %"),
        "{err}"
    );
    assert!(
        names_a_hog(&err, &pids),
        "the hog {pids:?} is not named:\n{err}"
    );
    assert!(
        record.started_at >= ended,
        "the run started at {} while the hog ran until {ended}:\n{err}",
        record.started_at
    );
    let waited: f64 = tag(&record, TAG_SECONDS).parse().unwrap();
    // Over a short wait the hogs' two seconds of every CPU outrank
    // anything else in the record; over a long one, other work may.
    if waited < 10.0 {
        assert!(
            names_a_hog(tag(&record, TAG_BUSY), &pids),
            "{:?}",
            record.tags
        );
    }
    match tag(&record, TAG_OUTCOME) {
        "quiet" => {
            assert!(err.contains("the machine was quiet after"), "{err}");
            assert!(!record.findings.iter().any(|f| f.code == NOT_QUIET));
        }
        // Other work kept the machine above the limit for the whole bound
        // after the hogs ended: the run said so, and still did not start
        // before they ended.
        "gave-up" => {
            assert!(waited >= 59.0, "{waited}");
            assert!(err.contains("measuring anyway"), "{err}");
            eprintln!("the machine stayed busy after the hogs ended:\n{err}");
        }
        other => panic!("outcome {other}:\n{err}"),
    }
    assert_eq!(record.results.len(), 1, "{err}");
}

#[test]
fn the_bound_ends_the_wait_and_the_run_says_so() {
    let sb = Sandbox::alone();
    let hogs = Hogs::start();
    let pids = hogs.pids();
    let out = waiting_run(&sb, "2").wait_with_output().unwrap();
    drop(hogs);
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    let record = strict_record(&out.stdout);
    assert_eq!(tag(&record, TAG_OUTCOME), "gave-up", "{err}");
    assert!(
        err.contains("the machine was still busy after") && err.contains("measuring anyway"),
        "{err}"
    );
    assert!(names_a_hog(&err, &pids), "{err}");
    let f = record
        .findings
        .iter()
        .find(|f| f.code == NOT_QUIET)
        .unwrap_or_else(|| panic!("no {NOT_QUIET} finding: {:?}", record.findings));
    assert!(f.message.contains("within 2 s"), "{}", f.message);
    assert!(names_a_hog(&f.message, &pids), "{}", f.message);
    // The hogs fill the machine as the run starts: busy, judged now.
    assert!(
        record.findings.iter().any(|f| f.code == "busy-machine"),
        "{:?}",
        record.findings
    );
    assert_eq!(record.results.len(), 1, "the run measured anyway: {err}");
}

#[test]
fn no_wait_and_the_environment_skip_the_wait() {
    let sb = Sandbox::new();
    // The sandbox sets SYSGAUGE_NO_WAIT=1.
    let (run, out) = sb.tiny_unstored_run("hash.md5");
    assert!(!stderr_of(&out).contains("quiet machine"));
    assert!(!run.tags.contains_key(TAG_OUTCOME), "{:?}", run.tags);
    let out = sb
        .tiny_run()
        .env_remove("SYSGAUGE_NO_WAIT")
        .args([
            "--only",
            "hash.md5",
            "--no-store",
            "--no-wait",
            "--json",
            "-",
        ])
        .succeeds();
    assert!(!stderr_of(&out).contains("quiet machine"));
    assert!(!strict_record(&out.stdout).tags.contains_key(TAG_OUTCOME));
    // SYSGAUGE_NO_WAIT=0 is no.
    let out = sb
        .tiny_run()
        .env("SYSGAUGE_NO_WAIT", "0")
        .args(["--only", "hash.md5", "--no-store", "--json", "-"])
        .args(["--wait-quiet", "1", "--quiet-below", "100"])
        .succeeds();
    assert!(
        stderr_of(&out).contains("quiet machine"),
        "{}",
        stderr_of(&out)
    );
    assert!(strict_record(&out.stdout).tags.contains_key(TAG_OUTCOME));
    for bad in ["0", "-1", "101", "nan"] {
        let bad = format!("--quiet-below={bad}");
        sb.tiny_run()
            .args(["--only", "hash.md5", "--no-store", &bad])
            .usage_error("--quiet-below");
    }
}
