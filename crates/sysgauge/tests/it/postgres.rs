//! Every command that reads or writes results, on a real PostgreSQL server
//! started by the test (`--db postgres://…` and `SYSGAUGE_DB`), and
//! `results sync` between SQLite and PostgreSQL, also while the server
//! restarts. Skipped without PostgreSQL; failing under
//! `SYSGAUGE_REQUIRE_ALL=1` (CI installs Debian's postgresql).

use crate::common::{stderr_of, stdout_of, strict_record, Outcome, Sandbox};
use sysgauge_testkit::{require_postgres, PgServer};

/// A server, a database `db` on it (its URL) and a sandbox for `test`, or
/// None when PostgreSQL is missing (see [`require_postgres`]).
fn postgres_sandbox(test: &str, db: &str) -> Option<(PgServer, String, Sandbox)> {
    let pg = require_postgres(test)?;
    let url = pg.create_database(db);
    Some((pg, url, Sandbox::new()))
}

/// The run numbered `n` in `db`, as `results export` prints it.
fn exported(sb: &Sandbox, db: &str, n: u32) -> sysgauge_core::RunRecord {
    let out = sb
        .cmd()
        .args([
            "results",
            "export",
            &n.to_string(),
            "--format",
            "json",
            "--db",
            db,
        ])
        .succeeds();
    strict_record(&out.stdout)
}

#[test]
fn every_results_command_over_postgres() {
    let Some((pg, url, sb)) = postgres_sandbox("every_results_command_over_postgres", "r") else {
        return;
    };
    for _ in 0..2 {
        sb.tiny_on("run", &url)
            .args(["--only", "hash.sha1"])
            .succeeds();
    }
    // The URL never became a file.
    assert!(!sb.path().join("postgres:").exists());
    let list = sb.listed_runs_on(&url);
    assert_eq!(list.as_array().map(Vec::len), Some(2), "{list}");
    // SYSGAUGE_DB stands for --db.
    let out = sb
        .cmd()
        .env("SYSGAUGE_DB", &url)
        .args(["results", "show", "1"])
        .succeeds();
    assert!(stdout_of(&out).contains("hash.sha1"), "{}", stdout_of(&out));
    let out = sb
        .cmd()
        .args(["compare", "1", "2", "--db", &url])
        .succeeds();
    assert!(stdout_of(&out).contains("sha1"), "{}", stdout_of(&out));
    let html = sb.path().join("report.html");
    sb.cmd()
        .arg("report")
        .arg(&html)
        .args(["1", "2", "--db", &url])
        .succeeds();
    assert!(std::fs::read_to_string(&html).unwrap().contains("sha1"));

    // A fresh database reads as empty and gets no tables from reading.
    let empty = pg.create_database("empty");
    let out = sb
        .cmd()
        .args(["results", "list", "--db", &empty])
        .succeeds();
    // It exists (the server answered): said so, with what makes the
    // tables, not taken for a database that is not there.
    let says = "has no sysgauge tables yet; a command that stores runs creates them";
    let err = stderr_of(&out);
    assert!(
        err.contains("no runs stored yet") && err.contains(says) && !err.contains("no database"),
        "{err}"
    );
    let out = sb
        .cmd()
        .args(["results", "show", "1", "--db", &empty])
        .exits_with(2);
    assert!(stderr_of(&out).contains(says), "{}", stderr_of(&out));
    for args in [&["a", "b"][..], &[]] {
        let out = sb
            .cmd()
            .arg("compare")
            .args(args)
            .args(["--db", &empty])
            .output()
            .unwrap();
        assert!(!out.status.success());
        assert!(stderr_of(&out).contains(says), "{}", stderr_of(&out));
    }
    assert_eq!(
        pg.psql(
            "empty",
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        ),
        "0"
    );

    // sync PostgreSQL → SQLite → another PostgreSQL database → SQLite: the
    // runs arrive equal, and a second sync copies nothing.
    let a = sb.path().join("a.db");
    let b = sb.path().join("b.db");
    let url2 = pg.create_database("r2");
    let (a_s, b_s) = (
        a.to_string_lossy().to_string(),
        b.to_string_lossy().to_string(),
    );
    for (from, to) in [(&url, &a_s), (&a_s, &url2), (&url2, &b_s)] {
        let out = sb
            .cmd()
            .args(["results", "sync", "--from", from, "--to", to])
            .succeeds();
        assert!(
            stderr_of(&out).contains("copied 2 run(s)"),
            "{}",
            stderr_of(&out)
        );
    }
    for n in [1, 2] {
        let original = exported(&sb, &url, n);
        assert_eq!(exported(&sb, &b_s, n), original);
        assert_eq!(exported(&sb, &url2, n), original);
    }
    let out = sb
        .cmd()
        .env("SYSGAUGE_DB", &url)
        .args(["results", "sync", "--to", &a_s])
        .succeeds();
    assert!(
        stderr_of(&out).contains("copied 0 run(s)") && stderr_of(&out).contains("2 already there"),
        "{}",
        stderr_of(&out)
    );

    // delete writes through the URL.
    sb.cmd()
        .args(["results", "delete", "2", "--db", &url])
        .succeeds();
    let list = sb.listed_runs_on(&url);
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
}

/// The server restarts (fast shutdown) while `results sync` ingests 300
/// runs: the sync reconnects (or, if it gave up, a second sync completes
/// it), and every run is there exactly once.
#[test]
fn sync_into_postgres_survives_a_restart() {
    let Some((pg, url, sb)) = postgres_sandbox("sync_into_postgres_survives_a_restart", "s") else {
        return;
    };
    let (template, _) = sb.tiny_unstored_run("hash.sha1");
    let src = sb.path().join("many.db");
    {
        let mut store = sysgauge_store::Store::open(&src).unwrap();
        let runs: Vec<_> = (0..300)
            .map(|i| {
                let mut r = template.clone();
                r.run_id = format!("0000cafe-0000-4000-8000-{i:012}");
                r.host.hostname = Some(format!("host{i:03}"));
                r
            })
            .collect();
        store.insert_runs(&runs, "import").unwrap();
    }
    // A sync from nowhere copies nothing and creates the schema (so the
    // progress below can be counted from the start).
    let out = sb
        .cmd()
        .args(["results", "sync", "--to", &url, "--from"])
        .arg(sb.path().join("none.db"))
        .succeeds();
    assert!(
        stderr_of(&out).contains("copied 0 run(s)"),
        "{}",
        stderr_of(&out)
    );
    assert!(!sb.path().join("none.db").exists());
    let child = sb
        .std_cmd()
        .args(["results", "sync", "--to", &url, "--from"])
        .arg(&src)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let count = || {
        pg.psql("s", "SELECT count(*) FROM runs")
            .parse::<usize>()
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while count() < 30 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let before = count();
    assert!(
        (1..300).contains(&before),
        "restart not during the sync ({before} runs)"
    );
    pg.restart("fast");
    let out = child.wait_with_output().unwrap();
    let first = String::from_utf8_lossy(&out.stderr).to_string();
    // The wait for the server is said, not silent.
    assert!(
        first.contains("was lost; reconnecting (for up to "),
        "{first}"
    );
    if out.status.success() {
        assert!(first.contains("sysgauge: reconnected to "), "{first}");
    }
    let again = sb
        .cmd()
        .args(["results", "sync", "--to", &url, "--from"])
        .arg(&src)
        .succeeds();
    assert_eq!(count(), 300, "first sync: {first}");
    assert_eq!(
        pg.psql("s", "SELECT count(DISTINCT run_uuid) FROM runs"),
        "300"
    );
    let per_run = template.results.len();
    assert_eq!(
        pg.psql("s", "SELECT count(*) FROM results"),
        (300 * per_run).to_string()
    );
    if out.status.success() {
        assert!(
            stderr_of(&again).contains("copied 0 run(s)"),
            "{}",
            stderr_of(&again)
        );
    }
}
