//! `sysgauge sweep` end to end with the real binary and the real coreutils
//! programs: points stored as a run and written as CSV, bad input refused
//! before anything runs, a missing program skipped with its package named,
//! and Ctrl-C in the middle of a sweep: the running child is killed and
//! reaped, the scratch files are removed, the finished points are kept.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{self, completed_record, read_record, stdout_of, Outcome, Sandbox};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use sysgauge_core::{RunRecord, Status};
use sysgauge_testkit::{processes_mentioning, Interrupt};

fn require(program: &str) -> bool {
    sysgauge_testkit::require(
        &format!("{program} is not installed"),
        sysgauge_core::bench::find_program(program).is_some(),
        "apt-get install coreutils",
    )
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if let Ok(rd) = std::fs::read_dir(&d) {
            for e in rd.filter_map(Result::ok) {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p.clone());
                }
                out.push(p);
            }
        }
    }
    out
}

/// `sweep --only` chooses among the programs by id, as every family
/// command does; a name the family does not have is a usage error naming
/// it.
#[test]
fn sweep_only_and_skip_choose_programs() {
    if !require("dd") || !require("md5sum") {
        return;
    }
    let sb = Sandbox::new();
    let sweep = || {
        let mut c = sb.cmd();
        c.args(["sweep", "--profile", "tiny", "--repetitions", "3"])
            .args([
                "--program",
                "dd,md5sum",
                "--copies",
                "1",
                "--iterations",
                "1",
            ])
            .args(["--no-store", "--scratch-dir"])
            .arg(sb.scratch());
        c
    };
    let out = sweep()
        .args(["--only", "sweep.dd", "--json", "-"])
        .succeeds();
    let run: RunRecord = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = run.results.iter().map(|r| r.bench_id.as_str()).collect();
    assert_eq!(ids, ["sweep.dd"]);
    sweep()
        .args(["--only", "nosuch"])
        .usage_error("--only: unknown family or benchmark 'nosuch'");
}

#[test]
fn tiny_sweep_stores_points_and_writes_csv() {
    if !require("sha256sum") || !require("dd") {
        return;
    }
    let sb = Sandbox::new();
    let csv = sb.path().join("points.csv");
    let json = sb.path().join("run.json");
    let chart = sb.path().join("sweep.png");
    let out = sb
        .cmd()
        .args(["sweep", "--profile", "tiny", "--repetitions", "3"])
        .arg("--chart")
        .arg(&chart)
        .args(["--program", "sha256sum,dd", "--db"])
        .arg(sb.db())
        .arg("--scratch-dir")
        .arg(sb.scratch())
        .arg("--csv")
        .arg(&csv)
        .arg("--json")
        .arg(&json)
        .succeeds();
    let run = completed_record(&json, "sweep");
    // dd first (the baseline), then sha256sum; K = 1, 4; N = 4, 8.
    let points: Vec<(String, u64, u64)> = run
        .results
        .iter()
        .map(|r| {
            assert_eq!(r.status, Status::Ok, "{r:?}");
            assert_eq!(r.params.get_str("data"), Some("words"));
            // No --dd-bs: dd's own block size, no bs param (workload 2).
            assert!(r.params.get("bs").is_none(), "{r:?}");
            if r.bench_id == "sweep.dd" {
                assert_eq!(r.workload_version, 2);
            }
            (
                r.bench_id.clone(),
                r.params.get_u64("copies").unwrap_or(0),
                r.params.get_u64("iterations").unwrap_or(0),
            )
        })
        .collect();
    let expect: Vec<(String, u64, u64)> = ["sweep.dd", "sweep.sha256sum"]
        .iter()
        .flat_map(|id| [(1, 4), (1, 8), (4, 4), (4, 8)].map(|(k, n)| (id.to_string(), k, n)))
        .collect();
    assert_eq!(points, expect);
    for r in &run.results {
        let names: Vec<&str> = r.metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names[0], "throughput");
        for m in ["wall_time", "user_time", "sys_time"] {
            assert!(names.contains(&m), "{names:?}");
        }
        assert_eq!(
            r.details.get_u64("runs"),
            Some(
                r.params.get_u64("iterations").unwrap_or(0)
                    / r.params.get_u64("copies").unwrap_or(1)
            )
        );
        assert!(r.details.get_str("corpus_sha256").is_some());
    }

    let text = std::fs::read_to_string(&csv).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let want = [
        "host",
        "program",
        "data",
        "output",
        "copies",
        "iterations",
        "runs",
        "bytes",
        "wall_s",
        "user_s",
        "sys_s",
        "mb_s_wall",
        "mb_s_user",
        "mb_s_sys",
    ];
    for (i, w) in want.iter().enumerate() {
        assert_eq!(&headers[i], *w);
    }
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 8);
    assert_eq!(&rows[0][1], "dd");
    assert_eq!(&rows[7][1], "sha256sum");
    assert_eq!(&rows[7][4], "4");
    assert_eq!(&rows[7][6], "2");
    assert!(rows[7][11].parse::<f64>().unwrap_or(0.0) > 0.0);

    let png = std::fs::read(&chart).unwrap();
    assert_eq!(&png[1..4], b"PNG");

    let stdout = stdout_of(&out);
    assert!(stdout.contains("hash-only MB/s (est.)"), "{stdout}");
    assert!(stdout.contains("sha256sum: N=4 at 1 copy"), "{stdout}");
    assert!(files_under(&sb.scratch()).is_empty());

    // Stored like any run.
    let show = sb.on_db("results").args(["show", "1"]).succeeds();
    assert!(stdout_of(&show).contains("sweep.sha256sum"));
}

#[test]
fn sweep_refuses_bad_input_before_running() {
    let sb = Sandbox::new();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--copies", "1,64", "--iterations", "100"],
            "--iterations 100 is not a multiple of --copies 64",
        ),
        (vec!["--copies", "1Q"], "unknown suffix"),
        (vec!["--copies", "0"], "must be at least 1"),
        (vec!["--iterations", "1.5"], "fractions are not allowed"),
        (vec!["--iterations", "2Y"], "too large"),
        (vec!["--max", "10", "--step", "20"], "larger than --max"),
        (vec!["--program", "sh -c 'oops"], "unbalanced quotes"),
        (vec!["--program", "sha256sum,,dd"], "empty entry"),
        (vec!["--dd-bs", "0"], "at least 1 byte"),
        (vec!["--dd-bs", "2GiB"], "larger than"),
        (vec!["--dd-bs", "4Q"], "--dd-bs"),
        (
            vec!["--dd-bs", "4KiB", "--program", "b2sum"],
            "dd is not among the programs",
        ),
        (
            vec!["--program", "{input} -x"],
            "only appear in the arguments",
        ),
        (vec!["--corpus", "/nonexistent/sysgauge-corpus"], "--corpus"),
        (vec!["--dir", "/nonexistent/sysgauge-dir"], "--dir"),
        (vec!["--chart", "sweep.gif"], "must end in .svg or .png"),
        (
            vec!["--copies", "1Ti", "--data", "random"],
            "use fewer --copies",
        ),
        // Within i64 but N × the 1,000,000-byte corpus is not (was: exit 1
        // at run time, a run stored).
        (
            vec!["--data", "random", "--copies", "1", "--iterations", "9223372036854775807"],
            "--iterations 9223372036854775807 is out of range: N × the 1000000-byte corpus must be counted in 64 bits; give 1 to 18446744073709",
        ),
    ];
    for (args, expect) in cases {
        sb.cmd()
            .arg("sweep")
            .args(&args)
            .arg("--db")
            .arg(sb.db())
            .usage_error(expect);
        assert!(!sb.db().exists(), "{args:?} touched the database");
    }
}

/// Of the programs sysgauge picks itself, a missing one is skipped naming
/// its package; one the user named with --program is an error before
/// anything runs.
#[test]
fn missing_program_is_skipped_naming_its_package() {
    if !require("dd") {
        return;
    }
    let sb = Sandbox::new();
    // A PATH on which only dd exists.
    let bin = sb.subdir("bin");
    let dd = sysgauge_core::bench::find_program("dd").unwrap_or_else(|| panic!("dd"));
    std::os::unix::fs::symlink(&dd, bin.join("dd")).unwrap();
    let json = sb.path().join("run.json");
    let sweep = |programs: &[&str]| {
        let mut c = sb.cmd();
        c.env("PATH", &bin)
            .args(["sweep", "--profile", "tiny", "--repetitions", "3"])
            .args(programs)
            .args(["--copies", "2", "--iterations", "2", "--no-store"])
            .arg("--scratch-dir")
            .arg(sb.scratch())
            .arg("--json")
            .arg(&json);
        c
    };
    sweep(&["--program", "b2sum,dd"]).usage_error(
        "--program b2sum: 'b2sum' is not installed; install it (Debian/Ubuntu: apt-get install coreutils)",
    );
    assert!(!json.exists(), "a refused sweep wrote its record");
    let out = sweep(&[]).succeeds();
    let run = read_record(&json);
    assert_eq!(run.results.len(), 6);
    assert_eq!(run.results[0].bench_id, "sweep.dd");
    assert_eq!(run.results[0].status, Status::Ok);
    match &run.results[1].status {
        Status::Skipped { reason, hint } => {
            assert!(reason.contains("'b2sum' is not installed"), "{reason}");
            assert!(hint
                .as_deref()
                .unwrap_or("")
                .contains("apt-get install coreutils"));
        }
        other => panic!("{other:?}"),
    }
    assert!(stdout_of(&out).contains("apt-get install coreutils"));
}

#[test]
fn sigint_mid_sweep_kills_the_child_and_its_children_removes_scratch_keeps_points() {
    if !require("sha256sum") || !require("tail") {
        return;
    }
    let sb = Sandbox::new();
    let scratch = sb.scratch();
    let db = sb.db();
    let csv = sb.path().join("points.csv");
    // Two sha256sum points finish; then a template, a shell running `tail
    // -f INPUT` (a child of its own: `; true` keeps the shell from exec'ing
    // it), never ends by itself: the sweep is interrupted while the child
    // and its child run. Both must go (was: the shell was killed, its tail
    // left running).
    let scratch_name = scratch.to_string_lossy().to_string();
    let mut tails = Vec::new();
    let mut before = Vec::new();
    let run = Interrupt::after("[2/")
        .exiting_within(Duration::from_secs(30))
        .run(
            sb.std_cmd()
                .args(["sweep", "--profile", "tiny", "--repetitions", "3"])
                .args(["--program", "sha256sum"])
                .args(["--program", "sh -c 'tail -f {input}; true'"])
                .args(["--copies", "1,4", "--iterations", "4", "--db"])
                .arg(&db)
                .arg("--scratch-dir")
                .arg(&scratch)
                .arg("--csv")
                .arg(&csv),
            |child, started| {
                // The custom point is running: its input file exists, and
                // the shell and its tail run.
                let deadline = Instant::now() + Duration::from_secs(30);
                while started && tails.len() < 2 && Instant::now() < deadline {
                    tails = processes_mentioning(&scratch_name)
                        .into_iter()
                        .map(|p| p.pid)
                        .filter(|&p| p != child.id() as i32)
                        .collect();
                    std::thread::sleep(Duration::from_millis(20));
                }
                before = files_under(&scratch);
            },
        );
    let (started, status, log) = (run.started, run.status, run.log);
    let stopped_after = run.stopped_after;
    assert!(started, "no point finished in time:\n{log}");
    assert_eq!(tails.len(), 2, "the shell and its tail never ran:\n{log}");
    assert!(
        before
            .iter()
            .any(|p| p.to_string_lossy().ends_with("input-1x.dat")),
        "no input file existed before the interrupt: {before:?}"
    );
    assert_eq!(status.code(), Some(130), "{log}");
    assert!(stopped_after < Duration::from_secs(10), "{stopped_after:?}");

    // The running child and its child were killed, not left behind (a
    // leftover is killed here before the test fails).
    let alive: Vec<i32> = tails
        .iter()
        .copied()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.contains(&scratch_name))
        })
        .collect();
    for &pid in &alive {
        // SAFETY: kill(2) with a pid and a signal has no memory effects.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert!(
        alive.is_empty(),
        "{alive:?} (the shell or its tail) outlived the sweep"
    );
    let left = files_under(&scratch);
    assert!(left.is_empty(), "scratch files left behind: {left:?}");

    // The finished points are kept: in the database and in the CSV.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (status, n) = common::run_status_and_results(&conn);
    assert_eq!(status, "interrupted");
    assert_eq!(n, 2, "{log}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(
        text.lines().skip(1).all(|l| l.contains(",sha256sum,")),
        "{text}"
    );
}

#[test]
fn ram_backed_dir_gets_a_finding_and_is_left_clean() {
    if !require("dd") {
        return;
    }
    let shm = Path::new("/dev/shm");
    let on_tmpfs = sysgauge_host::fs_info(shm).is_some_and(|f| f.ram_backed);
    let dir = on_tmpfs.then(|| tempfile::tempdir_in(shm).ok()).flatten();
    let Some(dir) = sysgauge_testkit::require_some(
        "this test needs a writable tmpfs at /dev/shm",
        dir,
        "mount a tmpfs at /dev/shm",
    ) else {
        return;
    };
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["sweep", "--profile", "tiny", "--repetitions", "3"])
        .args(["--program", "dd", "--copies", "1", "--iterations", "1"])
        .args(["--no-store", "--json", "-", "--dir"])
        .arg(dir.path())
        .succeeds();
    let run: RunRecord = serde_json::from_slice(&out.stdout).unwrap();
    let finding = run.results[0]
        .findings
        .iter()
        .find(|f| f.code == "ram-backed-dir")
        .unwrap_or_else(|| panic!("no ram-backed-dir finding: {:?}", run.results[0].findings));
    assert!(finding.message.contains("tmpfs"), "{}", finding.message);
    assert!(files_under(dir.path()).is_empty());
}

/// `--dd-bs` makes the dd cases carry `bs` (the old 32 KiB workload stays
/// reachable as its own case), and a custom command is a template: cat
/// reads the input where `{input}` stands.
#[test]
fn dd_block_size_and_custom_template() {
    if !require("dd") || !require("cat") {
        return;
    }
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["sweep", "--profile", "tiny", "--repetitions", "3"])
        .args(["--program", "dd", "--program", "cat -- {input}"])
        .args(["--dd-bs", "32KiB", "--copies", "1", "--iterations", "2"])
        .args(["--no-store", "--json", "-", "--scratch-dir"])
        .arg(sb.scratch())
        .succeeds();
    let run: RunRecord = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = run.results.iter().map(|r| r.bench_id.as_str()).collect();
    assert_eq!(ids, ["sweep.dd", "sweep.custom"]);
    for r in &run.results {
        assert_eq!(r.status, Status::Ok, "{r:?}");
    }
    assert_eq!(run.results[0].params.get_u64("bs"), Some(32768));
    assert_eq!(run.results[0].workload_version, 2);
    assert_eq!(
        run.results[1].params.get_str("command"),
        Some("cat -- '{input}'")
    );
    assert!(run.results[1].params.get("bs").is_none());
}
