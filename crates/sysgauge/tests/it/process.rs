//! `sysgauge spawn`, `sysgauge startup` and `sysgauge procs`, driven end to
//! end through the real binary on temporary databases.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{completed_record, stderr_of, stdout_of, Outcome, Sandbox};
use sysgauge_bench::startup::report::StartupExport;
use sysgauge_core::{RunRecord, Status};
use sysgauge_host::procs::ProcsReport;
use sysgauge_testkit::Interrupt;

fn require(program: &str, package: &str) -> bool {
    sysgauge_testkit::require(
        &format!("'{program}' is not installed"),
        sysgauge_core::bench::find_program(program).is_some(),
        &format!("apt-get install {package}"),
    )
}

#[test]
fn spawn_tiny_stores_a_run_and_prints_tables() {
    let sb = Sandbox::new();
    let json = sb.path().join("spawn.json");
    let out = sb
        .tiny("spawn")
        .args(["--method", "posix-spawn,fork-exec,fork-exit"])
        .args(["--parent-size", "0,8MiB", "--target", "true"])
        .arg("--json")
        .arg(&json)
        .succeeds();
    let run = completed_record(&json, "spawn");
    assert_eq!(run.results.len(), 6, "3 methods × 2 sizes");
    for r in &run.results {
        assert_eq!(r.status, Status::Ok, "{}: {:?}", r.bench_id, r.status);
        let names: Vec<&str> = r.metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            ["spawn_time", "spawn_rate", "parent_cpu", "children_cpu"]
        );
        assert_eq!(r.params.get_u64("spawners"), Some(1));
        if r.bench_id == "spawn.fork-exit" {
            assert!(r.params.get("target").is_none());
        } else {
            assert_eq!(r.params.get_str("target"), Some("true"));
        }
    }
    let stdout = stdout_of(&out);
    assert!(stdout.contains("Cost of one spawn"), "{stdout}");
    assert!(stdout.contains("Parent-size sweep"), "{stdout}");
    assert!(stdout.contains("8 MiB"), "{stdout}");
    // No scratch directory is left behind.
    let left: Vec<_> = std::fs::read_dir(sb.scratch())
        .map(|d| d.filter_map(Result::ok).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn run_includes_the_spawn_slice() {
    let sb = Sandbox::new();
    let (run, _) = sb.tiny_unstored_run("spawn");
    let ids: Vec<&str> = run.results.iter().map(|r| r.bench_id.as_str()).collect();
    assert_eq!(ids, ["spawn.fork-exec", "spawn.posix-spawn"]);
    assert!(run.results.iter().all(|r| r.is_ok()), "{:?}", run.results);
}

#[test]
fn spawn_rejects_bad_options() {
    let sb = Sandbox::new();
    for (args, msg) in [
        (
            vec!["--method", "teleport"],
            "unknown family or benchmark 'teleport'",
        ),
        (vec!["--target", "bash"], "unknown target 'bash'"),
        (vec!["--parent-size", "1000K"], "not a whole number of MiB"),
        (vec!["--parent-size=-1"], "negative"),
        (vec!["--spawners", "0"], "invalid value '0' for '--spawners"),
    ] {
        sb.cmd()
            .args(["spawn", "--no-store"])
            .args(&args)
            .usage_error(msg);
    }
}

#[test]
fn startup_compares_with_baseline_and_exports() {
    let sb = Sandbox::new();
    let export = sb.path().join("startup.json");
    let out = sb
        .cmd()
        .args(["startup", "true", "--vs", "sh -c 'true; true'"])
        .args(["--runs", "5", "--min-time", "50ms", "--profile", "tiny"])
        .arg("--db")
        .arg(sb.db())
        .arg("--export-json")
        .arg(&export)
        .succeeds();
    let text = std::fs::read_to_string(&export).unwrap();
    let e: StartupExport = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(e.results.len(), 2);
    assert_eq!(e.results[0].command, "true");
    assert!(e.results[0].relative.is_none());
    assert!(e.results[0].runs >= 5);
    assert_eq!(e.results[0].times.len(), e.results[0].runs);
    assert!(e.results[0].median > 0.0 && e.results[0].median < 1.0);
    assert!(e.results[0].libraries.unwrap_or(0) >= 2);
    let rel = e.results[1]
        .relative
        .as_ref()
        .unwrap_or_else(|| panic!("no comparison"));
    assert_eq!(rel.baseline, "true");
    assert!(rel.ratio_low <= rel.ratio && rel.ratio <= rel.ratio_high);
    let stdout = stdout_of(&out);
    assert!(stdout.contains("baseline"), "{stdout}");
    assert!(stdout.contains("against \"true\""), "{stdout}");

    // The run is stored with the usual records.
    let stored = sb.stored_run(1);
    assert_eq!(stored.command, "startup");
    assert_eq!(stored.run_id, e.run_id);
    assert_eq!(stored.results[1].bench_id, "startup.command");
    assert_eq!(
        stored.results[1].params.get_str("command"),
        Some("sh -c 'true; true'")
    );
}

#[test]
fn startup_perl_module_adds_libraries() {
    if !require("perl", "perl") {
        return;
    }
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["startup", "perl -e ''", "--vs", "perl -MPOSIX -e ''"])
        .args([
            "--runs",
            "3",
            "--min-time",
            "0",
            "--profile",
            "tiny",
            "--no-store",
        ])
        .args(["--export-json", "-"])
        .succeeds();
    let e: StartupExport = serde_json::from_slice(&out.stdout).unwrap();
    let rel = e.results[1]
        .relative
        .as_ref()
        .unwrap_or_else(|| panic!("no comparison"));
    assert_eq!(
        e.results[1].libraries_method.as_deref(),
        Some("maps-at-exit")
    );
    // POSIX.so and Fcntl.so are loaded at run time: only counting what is
    // mapped at exit sees them.
    assert!(rel.libraries_delta.unwrap_or(0) >= 2, "{rel:?}");
    assert!(
        rel.added_libraries.iter().any(|l| l.ends_with("/POSIX.so")),
        "{rel:?}"
    );
    // The human report went to stderr because stdout carries the export.
    assert!(stderr_of(&out).contains("POSIX.so"), "{}", stderr_of(&out));
}

#[test]
fn startup_failing_command_stops_unless_ignored() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args([
            "startup",
            "true",
            "--vs",
            "false",
            "--runs",
            "2",
            "--min-time",
            "0",
        ])
        .arg("--db")
        .arg(sb.db())
        .exits_with(1);
    let err = stderr_of(&out);
    assert!(err.contains("\"false\" exited with status 1"), "{err}");
    assert!(err.contains("--ignore-failure"), "{err}");
    assert!(!sb.db().exists(), "nothing is stored");

    let ok = sb
        .cmd()
        .args([
            "startup",
            "false",
            "--ignore-failure",
            "--runs",
            "2",
            "--min-time",
            "0",
        ])
        .args(["--no-store", "--no-libraries", "--json", "-"])
        .succeeds();
    let run: RunRecord = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(run.results[0].details.get_u64("failed_runs"), Some(2));
}

#[test]
fn startup_rejects_bad_command_lines() {
    let sb = Sandbox::new();
    for (args, msg) in [
        (vec!["perl -e 'x"], "unbalanced quotes"),
        (vec!["sysgauge-no-such-cmd --x"], "not found on PATH"),
        (vec!["true", "--vs", "true"], "repeats a command"),
        (
            vec!["true", "--min-time", "soon"],
            "not a number of seconds",
        ),
        (vec!["true", "--runs", "0"], "--runs must be"),
        (
            vec!["true", "--repetitions", "3"],
            "--repetitions 3 does not apply to startup",
        ),
        (
            vec!["true", "--json", "-", "--export-json", "-"],
            "cannot both write to standard output",
        ),
    ] {
        sb.cmd()
            .arg("startup")
            .args(&args)
            .arg("--no-store")
            .usage_error(msg);
    }
}

#[test]
fn procs_json_and_text() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["procs", "--json", "-n", "0", "--sort", "pid"])
        .succeeds();
    let r: ProcsReport = serde_json::from_slice(&out.stdout).unwrap();
    assert!(r.total >= 2);
    assert_eq!(r.processes.len(), r.total);
    assert!(r.processes.windows(2).all(|w| w[0].pid < w[1].pid));
    assert!(r.processes.iter().any(|p| p.pid == 1));

    let out = sb
        .cmd()
        .args(["procs", "--interval", "0.2", "-n", "3"])
        .succeeds();
    let text = stdout_of(&out);
    assert!(text.contains(" in D ("), "{text}");
    assert!(text.contains("system %") && text.contains("RSS"), "{text}");
    // top's header: load, running/blocked, and a CPU line for all CPUs and
    // for each, whose shares add up to 100 %.
    assert!(text.contains("load average: "), "{text}");
    assert!(text.contains(" running, "), "{text}");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu_rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("all ") || l.starts_with("cpu"))
        .collect();
    assert!(cpu_rows.len() > cpus, "{text}");
    for row in &cpu_rows {
        let sum: f64 = row
            .split_whitespace()
            .skip(1)
            .map(|v| v.parse::<f64>().unwrap_or(f64::NAN))
            .sum();
        assert!((sum - 100.0).abs() < 1.0, "{row}\n{text}");
    }
    let after = text
        .lines()
        .skip_while(|l| !l.starts_with("CPU % over"))
        .count();
    assert_eq!(after, 1 + 2 + 3, "{text}");

    let out = sb
        .cmd()
        .args(["procs", "--json", "--interval", "0.2", "-n", "1"])
        .succeeds();
    let r: ProcsReport = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r.cpu.first().map(|c| c.cpu.as_str()), Some("all"));
    assert!(r.load.is_some() && r.running.unwrap_or(0) >= 1);
    assert!(r.processes[0].rss_bytes.is_some());

    sb.cmd().args(["procs", "--interval=-1"]).exits_with(2);
}

#[test]
fn procs_handles_odd_names_from_a_saved_proc() {
    let sb = Sandbox::new();
    let root = sb.path().join("proc");
    let entry = |pid: u32, comm: &str, state: char, stime: u64| {
        let d = root.join(pid.to_string());
        std::fs::create_dir_all(&d).unwrap();
        let line = format!(
            "{pid} ({comm}) {state} 1 {pid} {pid} 0 -1 4194560 100 0 0 0 5 {stime} 0 0 20 0 2 0 5000 1000 100 1 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
        );
        std::fs::write(d.join("stat"), line).unwrap();
    };
    entry(100, "my prog (x)", 'D', 900);
    entry(101, "new\nline", 'S', 50);
    entry(102, ")", 'R', 10);
    std::fs::create_dir_all(root.join("103")).unwrap();
    let out = sb
        .cmd()
        .args(["procs", "--proc-root"])
        .arg(&root)
        .succeeds();
    let text = stdout_of(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("3 processes, 6 threads (1 D, 1 R, 1 S); 1 in D"),
        "{text}"
    );
    assert!(lines[0].contains("1 vanished"), "{text}");
    assert!(lines[4].ends_with("my prog (x)"), "{text}");
    assert!(lines[5].ends_with("new\\nline"), "{text}");
    assert!(lines[6].ends_with(')'), "{text}");
}

/// Ctrl-C in the middle of spawning (with a ballast held): exit 130 within
/// seconds, the scratch directory (with the helper) removed, no child left.
#[test]
fn spawn_sigint_cleans_up() {
    let sb = Sandbox::new();
    let scratch = sb.scratch();
    let run = Interrupt::after("[1/").run(
        sb.std_cmd()
            .args(["spawn", "--profile", "standard", "--no-store"])
            .args([
                "--method",
                "fork-exec,posix-spawn",
                "--parent-size",
                "0,64MiB",
            ])
            .arg("--scratch-dir")
            .arg(&scratch),
        |_, _| {},
    );
    run.assert_started_then_exited(130);
    let left: Vec<_> = std::fs::read_dir(&scratch)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// True once no process is left in process group `pg` (a killed group's
/// orphans are reaped by init, which may take a moment).
fn group_gone(pg: i32) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        // SAFETY: signal 0 only checks whether the group exists.
        if unsafe { libc::kill(-pg, 0) } != 0 {
            return true;
        }
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A signal while `startup` runs a command, in the check before measuring
/// (`first_run_sleeps`) or in the first timed run: sysgauge exits 130, 143
/// or 129 within seconds (the command would sleep 30 s), the run is stored
/// `interrupted`, and the command's process group (the shell and the
/// `sleep` it started in the background) is gone. Before, a signal during
/// the check killed sysgauge by its default action, stored nothing and left
/// the command running.
fn startup_signalled(signal: i32, code: i32, first_run_sleeps: bool) {
    let sb = Sandbox::new();
    let pids = sb.path().join("pids");
    // Each run appends its pid (its group's id); the run that sleeps
    // starts a second sleep in the background, which only a group kill
    // ends.
    let sleeper = if first_run_sleeps { 0 } else { 1 };
    let command = format!(
        "n=$(cat {p} 2>/dev/null | wc -l); echo $$ >> {p}; \
         if [ $n -eq {sleeper} ]; then sleep 30 & sleep 30; fi",
        p = pids.display()
    );
    let run = Interrupt::after("never printed")
        .with_signal(signal)
        .waiting_up_to(std::time::Duration::from_millis(1))
        .exiting_within(std::time::Duration::from_secs(20))
        .run(
            sb.std_cmd()
                .args(["startup", &command, "--shell", "--runs", "3"])
                .args(["--min-time", "0", "--warmup", "0", "--no-libraries"])
                .arg("--db")
                .arg(sb.db()),
            |_, _| {
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
                while std::fs::read_to_string(&pids)
                    .unwrap_or_default()
                    .lines()
                    .count()
                    <= sleeper
                {
                    assert!(
                        std::time::Instant::now() < deadline,
                        "the command never ran"
                    );
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                // Let it reach the sleeps.
                std::thread::sleep(std::time::Duration::from_millis(300));
            },
        );
    let what = format!("signal {signal}, first run sleeps: {first_run_sleeps}");
    assert_eq!(run.status.code(), Some(code), "{what}: {}", run.log);
    assert!(
        run.stopped_after < std::time::Duration::from_secs(10),
        "{what}: took {:?}",
        run.stopped_after
    );
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    assert_eq!(
        crate::common::run_status_and_results(&conn),
        ("interrupted".to_string(), 0),
        "{what}: {}",
        run.log
    );
    let text = std::fs::read_to_string(&pids).unwrap();
    let pg: i32 = text.lines().nth(sleeper).unwrap().trim().parse().unwrap();
    assert!(
        group_gone(pg),
        "{what}: the command's group {pg} is still running"
    );
}

#[test]
fn startup_signal_during_the_check_run_stores_interrupted_and_kills_the_command() {
    for (signal, code) in [
        (libc::SIGINT, 130),
        (libc::SIGTERM, 143),
        (libc::SIGHUP, 129),
    ] {
        startup_signalled(signal, code, true);
    }
}

#[test]
fn startup_signal_during_a_timed_run_kills_the_command_at_once() {
    startup_signalled(libc::SIGTERM, 143, false);
}
