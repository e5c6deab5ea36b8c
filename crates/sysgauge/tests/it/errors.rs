//! Errors that say what happened and what to do, through the real binary:
//! databases that are empty, another user's, damaged or of an unknown
//! schema version, and command lines out of range.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{stderr_of, stdout_of, Outcome, Sandbox, Tmpfs};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use sysgauge_testkit::{is_root, on_path};

fn mbw_fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sysgauge-bench/tests/fixtures/mbw/1.2.2-n3-16MiB.txt")
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A 0-byte `--db` (what `mktemp` makes): no runs yet for a reader, a new
/// database for a writer.
#[test]
fn empty_database_file_has_no_runs_yet() {
    let sb = Sandbox::new();
    std::fs::write(sb.db(), b"").unwrap();
    let out = sb.on_db("results").arg("list").succeeds();
    let err = stderr_of(&out);
    assert!(err.contains("no runs stored yet"), "{err}");
    assert!(!err.contains("not a sysgauge"), "{err}");
    sb.on_db("import").arg(mbw_fixture()).succeeds();
    let out = sb.on_db("results").arg("list").succeeds();
    assert!(stdout_of(&out).contains("mbw"), "{}", stdout_of(&out));
}

/// A database on a full file system: the error names SQLite's cause once,
/// not once per layer of the error (the store's message, rusqlite's,
/// SQLite's own `Error code N: …`).
#[test]
fn a_database_error_on_a_full_disk_names_its_cause_once() {
    let sb = Sandbox::new();
    let full = sb.path().join("full");
    let Some(_full) = Tmpfs::mount(&full, "size=64k") else {
        return;
    };
    // Room for the database file but not for its write-ahead log and
    // shared-memory index.
    std::fs::write(full.join("filler"), vec![0u8; 40_000]).unwrap();
    let out = sb
        .on("import", full.join("x.sqlite"))
        .arg(mbw_fixture())
        .exits_with(2);
    let err = stderr_of(&out);
    let said = err.matches("disk I/O error").count() + err.matches("disk is full").count();
    assert_eq!(said, 1, "{err}");
    let lines: Vec<&str> = err
        .lines()
        .map(|l| {
            l.trim_start_matches("sysgauge: error: ")
                .trim_start_matches("  caused by: ")
        })
        .collect();
    for (i, a) in lines.iter().enumerate() {
        for b in &lines[i + 1..] {
            assert!(!a.contains(b), "{b:?} repeats a cause: {err}");
        }
    }
}

/// A database of root's (0644, in a 0755 directory) read by another user:
/// reading works, writing says whose the file is.
#[test]
fn database_of_another_user_reads_and_refuses_writes_clearly() {
    let sb = Sandbox::new();
    if !sysgauge_testkit::require(
        "setpriv (util-linux) as root",
        is_root() && on_path("setpriv"),
        "install util-linux and run the tests as root",
    ) {
        return;
    }
    chmod(sb.path(), 0o755);
    let shared = sb.subdir("shared");
    chmod(&shared, 0o755);
    // The binary where `nobody` may run it.
    let bin = shared.join("sysgauge");
    std::fs::copy(assert_cmd::cargo::cargo_bin("sysgauge"), &bin).unwrap();
    chmod(&bin, 0o755);
    let fixture = shared.join("mbw.txt");
    std::fs::copy(mbw_fixture(), &fixture).unwrap();
    chmod(&fixture, 0o644);
    let db = shared.join("results.db");
    sb.cmd()
        .arg("import")
        .arg("--db")
        .arg(&db)
        .arg(&fixture)
        .succeeds();
    chmod(&db, 0o644);
    let as_nobody = |args: &[&str]| {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .arg(&bin)
            .args(args)
            .arg("--db")
            .arg(&db)
            .env("HOME", &shared)
            .env("SYSGAUGE_NO_WAIT", "1")
            .env_remove("SYSGAUGE_DB")
            .current_dir(&shared);
        c
    };
    let out = as_nobody(&["results", "list"]).succeeds();
    assert!(stdout_of(&out).contains("mbw"), "{}", stdout_of(&out));
    let mut import = as_nobody(&["import"]);
    import.arg(&fixture);
    let out = import.output().unwrap();
    let err = stderr_of(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("belongs to user root and is not writable by you (uid 65534)"),
        "{err}"
    );
    // Nothing was left beside the database by either.
    let mut names: Vec<String> = std::fs::read_dir(&shared)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["mbw.txt", "results.db", "sysgauge"]);
}

/// A program named with --program that is not there: an error naming it
/// before anything runs, not a sweep of skipped cases ending with 0.
#[test]
fn sweep_of_a_missing_program_is_refused_before_it_runs() {
    let sb = Sandbox::new();
    for programs in [
        "sysgauge-no-such-program",
        "sha256sum,sysgauge-no-such-program",
    ] {
        let out = sb
            .tiny("sweep")
            .args(["--program", programs])
            .usage_error("--program sysgauge-no-such-program: 'sysgauge-no-such-program' is not an executable on PATH");
        assert!(stderr_of(&out).contains("PATH"), "{}", stderr_of(&out));
        assert!(!sb.db().exists(), "a refused sweep made a database");
    }
}

/// `listen` ends as every command does on a signal: 128 + its number
/// (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP), as the README says.
#[test]
fn listen_exits_with_the_signal_code() {
    use std::time::Duration;
    let sb = Sandbox::new();
    for (signal, code) in [
        (libc::SIGINT, 130),
        (libc::SIGTERM, 143),
        (libc::SIGHUP, 129),
    ] {
        let port = sysgauge_testkit::free_udp_port("127.0.0.1");
        let mut cmd = sb.std_cmd();
        cmd.args([
            "listen",
            "-q",
            "-I",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "-w",
            "120",
        ]);
        let mut l = sysgauge_testkit::ChildGuard::spawn_ready(
            &mut cmd,
            "2PING listener",
            Duration::from_secs(30),
        );
        let pid = i32::try_from(l.pid()).unwrap();
        // SAFETY: kill with a pid we spawned and have not reaped.
        unsafe { libc::kill(pid, signal) };
        let status = l.wait_exit(Duration::from_secs(20));
        let out = l.output();
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(code),
            "signal {signal}: {out}"
        );
        assert!(out.contains("datagrams received"), "signal {signal}: {out}");
    }
}

/// A CSV header of a million columns is a CSV with too many columns, not
/// a Bonnie++ line whose size field reads 'benchmark'.
#[test]
fn million_column_csv_header_says_how_many_columns() {
    let sb = Sandbox::new();
    let mut header = String::from("host,benchmark,metric,value,unit");
    for i in 5..1_000_000 {
        header.push_str(&format!(",extra{i}"));
    }
    let file = sb.path().join("wide.csv");
    std::fs::write(&file, format!("{header}\nbox1,b,m,1,s\n")).unwrap();
    let out = sb
        .on_db("import")
        .arg(&file)
        .usage_error("wide.csv:1: the header has 1000000 columns; a sysgauge CSV has at most 15");
    assert!(
        !stderr_of(&out).contains("not a size"),
        "{}",
        stderr_of(&out)
    );
    assert!(!sb.db().exists(), "a refused import made a database");
}

/// An interval too small to be one names the smallest there is.
#[test]
fn ping_interval_below_the_minimum_names_it() {
    let sb = Sandbox::new();
    sb.cmd()
        .args(["ping", "-i", "1e-12", "-c", "1", "127.0.0.1"])
        .usage_error(
            "--interval 0.000000000001 is below the smallest interval allowed, 0.000001 s",
        );
}

/// A count past what a run can store is refused as typed, with the range;
/// it was stored as 9223372036854775807.
#[test]
fn sweep_iterations_out_of_range_shows_the_value_and_range() {
    let sb = Sandbox::new();
    sb.tiny("sweep")
        .args([
            "--program",
            "sha256sum",
            "--copies",
            "1",
            "--iterations",
            "18446744073709551615",
        ])
        .usage_error(
            "--iterations 18446744073709551615 is out of range: give 1 to 9223372036854775807",
        );
    assert!(!sb.db().exists(), "a refused sweep made a database");
}
