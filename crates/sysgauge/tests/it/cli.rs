//! The real binary, driven end to end on temporary databases.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{stderr_of, stdout_of, Outcome, Sandbox};
use sysgauge_core::{RunRecord, RunStatus, Status, SCHEMA_VERSION};

#[test]
fn run_json_is_strict_and_stored() {
    let sb = Sandbox::new();
    let json = sb.path().join("run.json");
    let out = sb
        .tiny_run()
        .args([
            "--only",
            "hash.sha256,hash.md5",
            "--label",
            "ci",
            "--tag",
            "rack=a1",
        ])
        .arg("--json")
        .arg(&json)
        .succeeds();
    let text = std::fs::read_to_string(&json).unwrap();
    // RunRecord and everything in it deny unknown fields.
    let run: RunRecord = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(run.schema_version, SCHEMA_VERSION);
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(run.command, "run");
    assert_eq!(run.label.as_deref(), Some("ci"));
    assert_eq!(run.tags.get("rack").map(String::as_str), Some("a1"));
    let ids: Vec<&str> = run.results.iter().map(|r| r.bench_id.as_str()).collect();
    assert_eq!(ids, vec!["hash.md5", "hash.sha256"]);
    for r in &run.results {
        assert_eq!(r.status, Status::Ok);
        let m = r.primary().unwrap_or_else(|| panic!("metric"));
        assert_eq!(m.samples.len(), 3);
        assert!(m.value() > 0.0);
        assert_eq!(r.params.get_u64("block_size"), Some(8192));
    }
    let summary = stdout_of(&out);
    assert!(
        summary.contains("hash.sha256") && summary.contains("MB/s"),
        "{summary}"
    );

    // The same run is in the database, identical to the JSON.
    let stored = sb.stored_run(1);
    assert_eq!(stored.run_id, run.run_id);
    assert_eq!(stored.results.len(), 2);
    assert_eq!(
        stored.results[1].metrics[0].samples,
        run.results[1].metrics[0].samples
    );
}

#[test]
fn json_to_stdout_keeps_stdout_clean() {
    let sb = Sandbox::new();
    let (run, out) = sb.tiny_unstored_run("hash.blake3");
    assert_eq!(run.results.len(), 1);
    assert!(stderr_of(&out).contains("hash.blake3"));
    assert!(!sb.db().exists());
}

#[test]
fn default_database_location_follows_xdg() {
    let sb = Sandbox::new();
    sb.cmd()
        .args([
            "run",
            "--profile",
            "tiny",
            "--repetitions",
            "1",
            "--only",
            "hash.md5",
        ])
        .succeeds();
    assert!(sb.path().join("xdg/sysgauge/sysgauge.db").is_file());
    let list = sb
        .cmd()
        .args(["results", "list", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(v.as_array().map(|a| a.len()), Some(1));
    assert_eq!(v[0]["status"], "complete");
}

#[test]
fn results_show_export_delete() {
    let sb = Sandbox::new();
    sb.tiny_run().args(["--only", "hash.sha1"]).succeeds();
    let db = sb.db();
    let results = |args: &[&str]| {
        sb.cmd()
            .arg("results")
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap()
    };
    let show = results(&["show", "1"]);
    assert!(show.status.success());
    assert!(stdout_of(&show).contains("hash.sha1"));
    let csv = results(&["export", "1", "--format", "csv"]);
    let csv = stdout_of(&csv);
    assert!(
        csv.starts_with("run_id,host,benchmark,params,status,metric"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 2);
    let md_path = sb.path().join("out.md");
    let md = results(&[
        "export",
        "1",
        "--format",
        "md",
        "-o",
        md_path.to_str().unwrap_or(""),
    ]);
    assert!(md.status.success());
    assert!(std::fs::read_to_string(&md_path)
        .unwrap_or_default()
        .contains("| benchmark |"));
    let del = results(&["delete", "1"]);
    assert!(del.status.success());
    assert!(stderr_of(&del).contains("deleted run 1"));
    let again = results(&["show", "1"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr_of(&again).contains("no run '1'"));
}

#[test]
fn list_and_host() {
    let sb = Sandbox::new();
    let out = sb.cmd().args(["list", "--json"]).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = v
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["id"].as_str()).collect())
        .unwrap_or_default();
    assert!(ids.contains(&"hash.sha256") && ids.contains(&"hash.blake3"));
    let text = sb.cmd().arg("list").output().unwrap();
    assert!(stdout_of(&text).contains("hash.sha512"));
    let host = sb.cmd().args(["host", "--json"]).succeeds();
    let h: sysgauge_core::HostInfo = serde_json::from_slice(&host.stdout).unwrap();
    assert!(h.cpu.threads.unwrap_or(0) >= 1);
    let table = sb.cmd().arg("host").output().unwrap();
    assert!(table.status.success());
    assert!(!stdout_of(&table).is_empty());
}

/// Each bad input: exit 2, one clear line, no panic, nothing written.
#[test]
fn bad_input_is_refused_cleanly() {
    let sb = Sandbox::new();
    let file_not_dir = sb.path().join("plainfile");
    std::fs::write(&file_not_dir, b"x").unwrap();
    type Case<'a> = (Vec<String>, Vec<(&'a str, String)>, &'a str);
    let cases: Vec<Case> = vec![
        (
            vec!["run".into(), "--only".into(), "nosuchfamily".into()],
            vec![],
            "unknown family or benchmark 'nosuchfamily'",
        ),
        (
            vec!["run".into(), "--skip".into(), "hash.nosuch".into()],
            vec![],
            "unknown family or benchmark 'hash.nosuch'",
        ),
        (
            vec![
                "run".into(),
                "--only".into(),
                "startup".into(),
                "--no-store".into(),
            ],
            vec![],
            "nothing to run",
        ),
        (
            vec!["run".into(), "--repetitions".into(), "0".into()],
            vec![],
            "--repetitions must be at least 1",
        ),
        (
            vec![
                "run".into(),
                "--db".into(),
                sb.path().to_string_lossy().to_string(),
            ],
            vec![],
            "is a directory",
        ),
        (
            vec![
                "run".into(),
                "--db".into(),
                sb.path()
                    .join("no/such/dir/x.db")
                    .to_string_lossy()
                    .to_string(),
            ],
            vec![],
            "does not exist",
        ),
        (
            vec!["run".into(), "--tag".into(), "novalue".into()],
            vec![],
            "is not KEY=VALUE",
        ),
        (
            vec![
                "run".into(),
                "--scratch-dir".into(),
                "/nonexistent-sysgauge".into(),
            ],
            vec![],
            "is not an existing directory",
        ),
        (
            vec![
                "run".into(),
                "--json".into(),
                sb.path()
                    .join("missing/out.json")
                    .to_string_lossy()
                    .to_string(),
            ],
            vec![],
            "does not exist",
        ),
        // A data "directory" that is a file cannot be created, even as root.
        (
            vec!["run".into()],
            vec![("XDG_DATA_HOME", file_not_dir.to_string_lossy().to_string())],
            "cannot create the data directory",
        ),
        (
            vec!["list".into(), "--family".into(), "nope".into()],
            vec![],
            "unknown family 'nope'",
        ),
        (
            vec![
                "results".into(),
                "--db".into(),
                sb.db().to_string_lossy().to_string(),
                "show".into(),
                "42".into(),
            ],
            vec![],
            // Reading never creates the database it names.
            "no results database at",
        ),
    ];
    for (args, env, expect) in cases {
        let mut c = sb.cmd();
        c.args(&args);
        for (k, v) in &env {
            c.env(k, v);
        }
        let out = c.usage_error(expect);
        assert!(stdout_of(&out).is_empty(), "{args:?}");
    }
}

/// Every kind of error starts the same way, whoever raised it: clap
/// (an unknown flag or command, a missing argument, a value not of its
/// kind), our own checks of the command line, the results database, a
/// device refused.
#[test]
fn every_error_starts_with_one_prefix() {
    let sb = Sandbox::new();
    let db = sb.db().to_string_lossy().to_string();
    let cases: [&[&str]; 9] = [
        &["--bogus"],
        &["frobnicate"],
        &["disk", "--bogus"],
        &["report", "--db", &db],
        &["disk", "--size", "12qq"],
        &["run", "--only", "nosuchfamily"],
        &["run", "--repetitions", "0"],
        &["results", "--db", &db, "show", "42"],
        &["disk", "--device", "/dev/null"],
    ];
    for args in cases {
        let out = sb.cmd().args(args).exits_with(2);
        let err = stderr_of(&out);
        assert!(err.starts_with("sysgauge: error: "), "{args:?}: {err}");
        assert!(
            !err.lines().any(|l| l.starts_with("error:")),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn usage_errors_exit_2() {
    let sb = Sandbox::new();
    sb.cmd()
        .args(["run", "--profile", "enormous"])
        .exits_with(2);
    sb.cmd().arg("frobnicate").exits_with(2);
    sb.cmd().arg("--help").exits_with(0);
}

#[test]
fn newer_or_foreign_database_is_refused_untouched() {
    let sb = Sandbox::new();
    let db = sb.db();
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "PRAGMA application_id = 1397179458; CREATE TABLE runs(x); PRAGMA user_version = 999;",
        )
        .unwrap();
    }
    refused_untouched(&mut sb.tiny_run(), &db, "newer sysgauge");

    let other = sb.path().join("other.db");
    std::fs::write(&other, "not a database, just text\n".repeat(200)).unwrap();
    refused_untouched(
        sb.cmd().args(["results", "--db"]).arg(&other).arg("list"),
        &other,
        "is not a sysgauge results database",
    );
}

/// Runs `cmd`, which must refuse `file` as a usage error saying `why`, and
/// leave the file byte for byte as it was.
fn refused_untouched(cmd: &mut assert_cmd::Command, file: &std::path::Path, why: &str) {
    sysgauge_testkit::leaves_untouched(file, || cmd.usage_error(why));
}

#[test]
fn broken_pipe_exits_zero() {
    let sb = Sandbox::new();
    let bin = assert_cmd::cargo::cargo_bin("sysgauge");
    let script = format!(
        "'{}' list | head -c 1 >/dev/null; exit ${{PIPESTATUS[0]}}",
        bin.display()
    );
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .env("HOME", sb.path())
        .exits_with(0);
    assert!(!stderr_of(&out).contains("panicked"));
}

/// Shell completions and man pages come from the command-line definition;
/// `--version` names the target and the CPU features compiled in.
#[test]
fn completions_man_pages_and_version() {
    let sb = Sandbox::new();
    for (shell, marker) in [
        ("bash", "complete -F _sysgauge"),
        ("zsh", "#compdef sysgauge"),
        ("fish", "complete -c sysgauge"),
    ] {
        let out = sb.cmd().args(["completions", shell]).succeeds();
        let text = stdout_of(&out);
        assert!(
            text.contains(marker),
            "{shell}: {}",
            &text[..text.len().min(300)]
        );
        // Every subcommand is offered, the newest among them.
        for sub in ["fleet", "compare", "results", "man"] {
            assert!(text.contains(sub), "{shell} lacks {sub}");
        }
    }
    sb.cmd().args(["completions", "tcsh"]).usage_error("tcsh");

    let out = sb.cmd().arg("man").succeeds();
    let page = stdout_of(&out);
    assert!(
        page.contains(".TH sysgauge 1"),
        "{}",
        &page[..page.len().min(300)]
    );
    assert!(
        page.contains("sysgauge\\-fleet(1)"),
        "the subcommands are listed"
    );
    let dir = sb.subdir("man1");
    sb.cmd().arg("man").arg("--dir").arg(&dir).succeeds();
    let fleet = std::fs::read_to_string(dir.join("sysgauge-fleet.1")).unwrap();
    assert!(fleet.contains(".TH sysgauge-fleet 1"), "{fleet}");
    assert!(dir.join("sysgauge-run.1").is_file());
    // Nested commands have their own pages, with their own options.
    let fleet_run = std::fs::read_to_string(dir.join("sysgauge-fleet-run.1")).unwrap();
    assert!(
        fleet_run.contains(".TH sysgauge-fleet-run 1") && fleet_run.contains("inventory"),
        "{fleet_run}"
    );
    assert!(dir.join("sysgauge-results-export.1").is_file());
    // man(1) reads what was written, when it is installed.
    if sysgauge_testkit::on_path("man") {
        let out = std::process::Command::new("man")
            .arg("-l")
            .arg(dir.join("sysgauge-run.1"))
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr_of(&out));
        assert!(stdout_of(&out).contains("--profile"));
    }
    sb.cmd()
        .arg("man")
        .arg("--dir")
        .arg(dir.join("missing"))
        .usage_error("not a directory");

    let out = sb.cmd().arg("--version").succeeds();
    let v = stdout_of(&out);
    assert!(
        v.starts_with(&format!("sysgauge {}\n", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    assert!(
        v.contains(&format!("target: {}-linux", std::env::consts::ARCH)),
        "{v}"
    );
    assert!(v.contains("CPU features compiled in:"), "{v}");
}
