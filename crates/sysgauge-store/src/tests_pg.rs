//! The store's guarantees on both backends: each scenario runs on a SQLite
//! file and on a real PostgreSQL server started for the test (skipped
//! without PostgreSQL, failing under `SYSGAUGE_REQUIRE_ALL=1`).

use super::*;
use crate::tests::{begun_run, id_of, normalise, sample_run};
use std::time::Duration;
use sysgauge_testkit::{require_postgres, PgServer};

/// Opens (for writing) one database of the backend under test.
type Opener<'a> = &'a dyn Fn() -> Store;

fn round_trip(open: Opener<'_>) {
    let run = sample_run("11111111-2222-4333-8444-555555555555");
    let id = id_of(open().insert_run(&run, "local").unwrap());
    let s = open();
    assert_eq!(s.load_run(id).unwrap(), normalise(run.clone()));
    let list = s.list_runs().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!((list[0].results, list[0].failed), (2, 0));
    assert_eq!(list[0].host, "box1");
    assert_eq!(list[0].source, "local");
    assert_eq!(s.hosts().unwrap(), vec!["box1".to_string()]);
    assert_eq!(s.latest_run_for_host("box1").unwrap(), Some(id));
    assert_eq!(s.resolve_run("11111111-2").unwrap(), id);
    assert_eq!(s.resolve_run(&id.to_string()).unwrap(), id);
    assert_eq!(s.resolve_run("1111").unwrap(), id);
    assert!(matches!(s.resolve_run("999"), Err(StoreError::NotFound(_))));
}

fn idempotent_insert(open: Opener<'_>) {
    let mut s = open();
    let run = sample_run("bbbbbbbb-0000-4000-8000-000000000001");
    let a = id_of(s.insert_run(&run, "import").unwrap());
    assert_eq!(
        s.insert_run(&run, "import").unwrap(),
        Inserted::AlreadyPresent(a)
    );
    let mut other = sample_run("bbbbbbbb-0000-4000-8000-000000000002");
    other.results.clear();
    let both = s.insert_runs(&[run, other], "import").unwrap();
    assert!(matches!(
        both[..],
        [Inserted::AlreadyPresent(x), Inserted::New(_)] if x == a
    ));
    assert_eq!(s.list_runs().unwrap().len(), 2);
    // A batch with a bad run stores none of it.
    let good = sample_run("bbbbbbbb-0000-4000-8000-000000000003");
    let mut bad = sample_run("bbbbbbbb-0000-4000-8000-000000000004");
    bad.results[0].metrics[0].samples.clear();
    bad.results[0].metrics[0].summary.n = 0;
    assert!(s.insert_runs(&[good, bad], "import").is_err());
    assert_eq!(s.list_runs().unwrap().len(), 2);
}

fn incremental_then_delete(open: Opener<'_>) {
    let mut s = open();
    let (mut run, results, row) = begun_run(&mut s, "aaaaaaaa-0000-4000-8000-000000000001");
    let mid = s.load_run(row).unwrap();
    assert_eq!((mid.status, mid.results.len()), (RunStatus::Running, 1));
    s.add_result(row, 1, &results[1]).unwrap();
    run.status = RunStatus::Complete;
    run.finished_at = Some(Utc::now());
    s.finish_run(row, &run).unwrap();
    run.results = results;
    assert_eq!(s.load_run(row).unwrap(), normalise(run));
    assert!(s.delete_run(row).unwrap());
    assert!(!s.delete_run(row).unwrap());
    assert!(s.list_runs().unwrap().is_empty());
}

/// A run whose database failed mid-run (its first result stored, marked
/// failed) is completed by inserting its record: the missing result added
/// at its place, the record's status, findings and tags, and a tag saying
/// what completed it; again, nothing changes. A stored run that is not a
/// prefix of the record, or one still being measured, is left alone.
fn completed_from_record(open: Opener<'_>) {
    let mut s = open();
    let (mut run, results, row) = begun_run(&mut s, "dddddddd-0000-4000-8000-000000000001");
    let mut failed = run.clone();
    failed.status = RunStatus::Failed;
    failed.finished_at = Some(Utc::now());
    s.finish_run(row, &failed).unwrap();
    run.results = results;
    run.status = RunStatus::Complete;
    run.finished_at = Some(Utc::now());
    assert_eq!(
        s.insert_run(&run, "import").unwrap(),
        Inserted::Completed { row, added: 1 }
    );
    let done = s.load_run(row).unwrap();
    assert_eq!(
        done.tags.get(COMPLETED_FROM).map(String::as_str),
        Some("import")
    );
    let mut want = normalise(run.clone());
    want.tags.insert(COMPLETED_FROM.into(), "import".into());
    assert_eq!(done, want);
    assert_eq!(
        s.insert_run(&run, "import").unwrap(),
        Inserted::AlreadyPresent(row)
    );
    assert_eq!(s.load_run(row).unwrap(), want);
    // Only the header lagged (the database failed as the run ended).
    let mut lagging = sample_run("dddddddd-0000-4000-8000-000000000002");
    lagging.status = RunStatus::Failed;
    let lag_row = id_of(s.insert_run(&lagging, "local").unwrap());
    lagging.status = RunStatus::Complete;
    assert_eq!(
        s.insert_run(&lagging, "import").unwrap(),
        Inserted::Completed {
            row: lag_row,
            added: 0
        }
    );
    assert_eq!(s.load_run(lag_row).unwrap().status, RunStatus::Complete);
    // Other data under the same id: left alone.
    let mut other = sample_run("dddddddd-0000-4000-8000-000000000003");
    other.status = RunStatus::Failed;
    let first = other.results.remove(0);
    let other_row = id_of(s.insert_run(&other, "local").unwrap());
    other.results.insert(0, first);
    other.status = RunStatus::Complete;
    assert_eq!(
        s.insert_run(&other, "import").unwrap(),
        Inserted::AlreadyPresent(other_row)
    );
    assert_eq!(s.load_run(other_row).unwrap().results.len(), 1);
    // A run still being measured: left to its writer.
    let mut live = sample_run("dddddddd-0000-4000-8000-000000000004");
    let live_results = std::mem::take(&mut live.results);
    live.status = RunStatus::Running;
    let live_row = s.begin_run(&live, "local").unwrap();
    live.results = live_results;
    live.status = RunStatus::Complete;
    assert_eq!(
        s.insert_run(&live, "import").unwrap(),
        Inserted::AlreadyPresent(live_row)
    );
    assert_eq!(s.load_run(live_row).unwrap().status, RunStatus::Running);
}

/// Eight openers creating one new database at once all succeed.
fn concurrent_creation(open: &(dyn Fn() -> Store + Sync)) {
    let barrier = std::sync::Barrier::new(8);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    let run = sample_run(&format!("cccccccc-0000-4000-8000-{i:012}"));
                    open().insert_run(&run, "local")
                })
            })
            .collect();
        for h in handles {
            let r = h.join().unwrap();
            assert!(matches!(r, Ok(Inserted::New(_))), "{:?}", r.err());
        }
    });
    assert_eq!(open().list_runs().unwrap().len(), 8);
}

/// One latest run per machine, even when machines share a host name.
fn machines(open: Opener<'_>) {
    let mut s = open();
    let t0 = Utc::now();
    let mut add = |uuid: &str,
                   host: &str,
                   machine_id: Option<&str>,
                   alias: Option<&str>,
                   age: i64,
                   status: RunStatus| {
        let mut r = sample_run(uuid);
        r.host.hostname = Some(host.to_string());
        r.host.identity.machine_id = machine_id.map(str::to_string);
        if let Some(a) = alias {
            r.tags.insert("alias".into(), a.into());
        }
        r.started_at = t0 - chrono::Duration::minutes(age);
        r.status = status;
        match s.insert_run(&r, "test").unwrap_or_else(|e| panic!("{e}")) {
            Inserted::New(id) => id,
            other => panic!("{uuid} already there: {other:?}"),
        }
    };
    // Two machines named `twin`, each measured twice; a clone of one of
    // them (same machine-id) told apart by its alias; a host whose newest
    // run is partial.
    let _twin_a_old = add("a1", "twin", Some("aaaa"), None, 50, RunStatus::Complete);
    let twin_a = add("a2", "twin", Some("aaaa"), None, 40, RunStatus::Complete);
    let twin_b = add("b1", "twin", Some("bbbb"), None, 30, RunStatus::Complete);
    let _twin_b_old = add("b0", "twin", Some("bbbb"), None, 35, RunStatus::Complete);
    let clone = add(
        "c1",
        "twin",
        Some("aaaa"),
        Some("clone"),
        20,
        RunStatus::Complete,
    );
    let other = add("o1", "other", None, None, 10, RunStatus::Complete);
    let _partial = add("o2", "other", None, None, 5, RunStatus::Interrupted);
    assert_eq!(
        s.latest_run_per_machine("alias")
            .unwrap_or_else(|e| panic!("{e}")),
        vec![other, clone, twin_b, twin_a]
    );
    // Many runs at once: each whole, in the order asked.
    let ids = [twin_b, other, twin_a];
    let one_by_one: Vec<RunRecord> = ids.iter().map(|&i| s.load_run(i).unwrap()).collect();
    assert_eq!(s.load_runs(&ids).unwrap(), one_by_one);
    assert!(one_by_one.iter().all(|r| !r.results.is_empty()));
    assert!(matches!(
        s.load_runs(&[twin_a, 9999]),
        Err(StoreError::NotFound(_))
    ));
}

/// Every scenario on both backends.
fn scenarios(open: &(dyn Fn(&str) -> Store + Sync)) {
    round_trip(&|| open("a"));
    idempotent_insert(&|| open("b"));
    incremental_then_delete(&|| open("c"));
    concurrent_creation(&|| open("d"));
    machines(&|| open("e"));
    completed_from_record(&|| open("f"));
}

#[test]
fn scenarios_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().to_path_buf();
    scenarios(&|name| Store::open(&base.join(format!("{name}.db"))).unwrap());
}

fn server(test: &str, dbs: &[&str]) -> Option<PgServer> {
    let pg = require_postgres(test)?;
    for db in dbs {
        pg.create_database(db);
    }
    Some(pg)
}

fn open_url(url: &str) -> Result<Store> {
    Store::open(Path::new(url))
}

#[test]
fn scenarios_on_postgres() {
    let Some(pg) = server("scenarios_on_postgres", &["a", "b", "c", "d", "e", "f"]) else {
        return;
    };
    scenarios(&|name| open_url(&pg.url(name)).unwrap());
}

#[test]
fn postgres_schema_rules() {
    let Some(pg) = server("postgres_schema_rules", &["fresh", "other", "newer"]) else {
        return;
    };
    let tables = |db: &str| {
        pg.psql(
            db,
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
        )
    };
    // The read-only door finds no database and creates nothing.
    let fresh = pg.url("fresh");
    assert!(matches!(
        Store::open_read_only(Path::new(&fresh)),
        Err(StoreError::Missing { .. })
    ));
    assert_eq!(tables("fresh"), "0");
    // Once created it reads, and cannot write.
    let id = id_of(
        open_url(&fresh)
            .unwrap()
            .insert_run(&sample_run("11111111-2222-4333-8444-000000000009"), "local")
            .unwrap(),
    );
    assert_eq!(
        pg.psql("fresh", "SELECT version FROM sysgauge_meta"),
        migrations::POSTGRES.len().to_string()
    );
    let mut r = Store::open_read_only(Path::new(&fresh)).unwrap();
    assert_eq!(r.list_runs().unwrap().len(), 1);
    assert!(r.delete_run(id).is_err());
    assert_eq!(open_url(&fresh).unwrap().list_runs().unwrap().len(), 1);
    // Someone else's `runs` table: refused, untouched.
    pg.psql(
        "other",
        "CREATE TABLE runs (x int); INSERT INTO runs VALUES (7)",
    );
    for ro in [false, true] {
        let url = pg.url("other");
        let r = if ro {
            Store::open_read_only(Path::new(&url))
        } else {
            open_url(&url)
        };
        assert!(
            matches!(r, Err(StoreError::Foreign { .. })),
            "{:?}",
            r.err()
        );
    }
    assert_eq!(tables("other"), "1");
    // A newer schema: refused, untouched.
    drop(open_url(&pg.url("newer")).unwrap());
    pg.psql("newer", "UPDATE sysgauge_meta SET version = 99");
    match open_url(&pg.url("newer")) {
        Err(e @ StoreError::NewerSchema { .. }) => {
            assert!(e.to_string().contains("newer sysgauge"))
        }
        other => panic!("{:?}", other.err()),
    }
    assert_eq!(pg.psql("newer", "SELECT version FROM sysgauge_meta"), "99");
}

#[test]
fn postgres_errors_name_the_url_without_password() {
    // Nothing listens on port 1.
    let url = "postgres://bob:s3cret@127.0.0.1:1/results";
    let e = open_url(url)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("postgres://bob@127.0.0.1:1/results"), "{e}");
    assert!(!e.contains("s3cret"), "{e}");
    assert!(
        e.contains("check that the PostgreSQL server is running"),
        "{e}"
    );
}

/// A writer whose connection is gone (killed) leaves its run `running`;
/// the next writer marks it interrupted, and leaves a live writer's run.
#[test]
fn postgres_dead_writers_runs_become_interrupted() {
    let Some(pg) = server("postgres_dead_writers", &["s"]) else {
        return;
    };
    let url = pg.url("s");
    let mut run = sample_run("eeeeeeee-0000-4000-8000-000000000001");
    run.status = RunStatus::Running;
    run.results.clear();
    let mut live = open_url(&url).unwrap();
    let ours = live.begin_run(&run, "local").unwrap();
    run.run_id = "eeeeeeee-0000-4000-8000-000000000002".into();
    let dead = {
        let mut gone = open_url(&url).unwrap();
        gone.begin_run(&run, "local").unwrap()
    };
    // Reading marks nothing.
    assert!(Store::open_read_only(Path::new(&url))
        .unwrap()
        .stale_runs()
        .is_empty());
    let s = open_url(&url).unwrap();
    assert_eq!(s.stale_runs(), &[dead]);
    assert_eq!(s.load_run(ours).unwrap().status, RunStatus::Running);
    assert_eq!(s.load_run(dead).unwrap().status, RunStatus::Interrupted);
    drop(live);
}

/// The server restarted (fast, then as after a crash) while runs are
/// ingested one transaction each: afterwards every run is there exactly
/// once, whole.
#[test]
fn postgres_restart_during_ingest_loses_and_duplicates_nothing() {
    let Some(pg) = server("postgres_restart_during_ingest", &["i"]) else {
        return;
    };
    let url = pg.url("i");
    let runs: Vec<RunRecord> = (0..300)
        .map(|i| sample_run(&format!("12345678-0000-4000-8000-{i:012}")))
        .collect();
    let progress = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let ingest = scope.spawn(|| -> Result<Vec<Inserted>> {
            let mut s = open_url(&url)?;
            let mut out = Vec::new();
            for r in &runs {
                out.push(s.insert_run(r, "import")?);
                progress.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            Ok(out)
        });
        for (mode, after) in [("fast", 50), ("immediate", 150)] {
            while progress.load(std::sync::atomic::Ordering::SeqCst) < after
                && !ingest.is_finished()
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            assert!(!ingest.is_finished(), "the ingest ended before the restart");
            pg.restart(mode);
        }
        // The ingest rode out both restarts by reconnecting; if it had
        // given up, running it again must complete it.
        if let Err(e) = ingest.join().unwrap() {
            eprintln!("ingest stopped ({e}); ingesting again");
            let mut s = open_url(&url).unwrap();
            for r in &runs {
                s.insert_run(r, "import").unwrap();
            }
        }
    });
    let s = open_url(&url).unwrap();
    assert_eq!(s.list_runs().unwrap().len(), runs.len());
    assert_eq!(
        pg.psql("i", "SELECT count(*) FROM results"),
        (runs.len() * 2).to_string()
    );
    assert_eq!(
        pg.psql("i", "SELECT count(*) FROM metrics"),
        runs.len().to_string()
    );
    // Re-ingesting is a no-op.
    let mut s = s;
    for r in runs.iter().take(20) {
        assert!(matches!(
            s.insert_run(r, "import").unwrap(),
            Inserted::AlreadyPresent(_)
        ));
    }
    assert_eq!(s.list_runs().unwrap().len(), runs.len());
}

/// A call that waits longer than the stall on a live server (here for the
/// migration lock another session holds) is waited for: the probe's new
/// connection is answered, so the server is slow, not frozen.
#[test]
fn postgres_slow_but_live_server_is_waited_for() {
    let Some(pg) = server("postgres_slow_but_live", &["slow"]) else {
        return;
    };
    let url = pg.url("slow");
    drop(open_url(&url).unwrap());
    // Past the time a call on a frozen server is given up.
    let hold = crate::FROZEN_AFTER + Duration::from_secs(3);
    let (locked, is_locked) = std::sync::mpsc::channel();
    let holder = {
        let url = url.clone();
        std::thread::spawn(move || {
            let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            c.execute("SELECT pg_advisory_lock($1)", &[&i64::from(APPLICATION_ID)])
                .unwrap();
            locked.send(()).unwrap();
            std::thread::sleep(hold);
        })
    };
    is_locked.recv().unwrap();
    let started = std::time::Instant::now();
    let opened = open_url(&url);
    let waited = started.elapsed();
    holder.join().unwrap();
    assert!(opened.is_ok(), "{:?}", opened.err().map(|e| e.to_string()));
    assert!(waited >= hold - Duration::from_millis(500), "{waited:?}");
}
