//! Store tests on real SQLite files.

use super::*;
use chrono::Utc;
use rusqlite::{params, Connection};
use std::collections::BTreeMap;
use sysgauge_core::record::{BuildInfo, Finding, Metric, Params, Profile, Status};
use sysgauge_core::record::{Severity, SCHEMA_VERSION};
use sysgauge_core::{Better, HostInfo, Unit};
use sysgauge_testkit::leaves_untouched;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"))
}

fn metric(samples: Vec<f64>) -> Metric {
    Metric::new("throughput", Unit::MBps, Better::Higher, samples)
        .unwrap_or_else(|| panic!("metric"))
}

pub(crate) fn sample_run(uuid: &str) -> RunRecord {
    let host = HostInfo {
        hostname: Some("box1".into()),
        cpu: sysgauge_core::host::CpuInfo {
            bogomips: Some(5200.0),
            ..Default::default()
        },
        ..Default::default()
    };
    RunRecord {
        schema_version: SCHEMA_VERSION,
        run_id: uuid.to_string(),
        started_at: Utc::now(),
        finished_at: Some(Utc::now()),
        status: RunStatus::Complete,
        command: "run".into(),
        tool_version: "0.1.0".into(),
        build: BuildInfo {
            profile: "release".into(),
            target: "x86_64-linux".into(),
            target_features: vec!["sse2".into()],
        },
        host,
        profile: Profile::Quick,
        label: Some("lab".into()),
        tags: BTreeMap::from([("rack".to_string(), "a1".to_string())]),
        findings: vec![Finding::new("lsm-active", Severity::Info, "AppArmor is on")],
        results: vec![
            ResultRecord {
                details: Params::new().with("iterations_per_rep", 1200u64),
                duration_seconds: 0.5,
                findings: vec![Finding::new("noisy", Severity::Warning, "x").with_remedy("y")],
                ..ResultRecord::new(
                    "hash.sha256",
                    Params::new()
                        .with("block_size", 8192u64)
                        .with("threads", 1u64),
                    Status::Ok,
                    vec![metric(vec![100.0, 110.0, 105.0])],
                )
            },
            ResultRecord::new(
                "hash.b2sum",
                Params::new(),
                Status::Skipped {
                    reason: "missing".into(),
                    hint: Some("install".into()),
                },
                vec![],
            ),
        ],
    }
}

/// RFC 3339 text loses nothing we care about, but sub-second digits may be
/// normalised: compare records after a JSON round trip of the timestamps.
pub(crate) fn normalise(mut r: RunRecord) -> RunRecord {
    let fix = |t: DateTime<Utc>| {
        DateTime::parse_from_rfc3339(&t.to_rfc3339())
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or(t)
    };
    r.started_at = fix(r.started_at);
    r.finished_at = r.finished_at.map(fix);
    for x in &mut r.results {
        x.started_at = fix(x.started_at);
    }
    r
}

/// The row id of a run the store did not have before.
pub(crate) fn id_of(i: Inserted) -> i64 {
    match i {
        Inserted::New(id) => id,
        other => panic!("{other:?}"),
    }
}

/// A run being measured: its header stored as `Running` with the first of
/// its results; the record (status `Running`, no results) and its results
/// returned with the row id.
pub(crate) fn begun_run(s: &mut Store, uuid: &str) -> (RunRecord, Vec<ResultRecord>, i64) {
    let mut run = sample_run(uuid);
    let results = std::mem::take(&mut run.results);
    run.status = RunStatus::Running;
    run.finished_at = None;
    let row = s.begin_run(&run, "local").unwrap();
    s.add_result(row, 0, &results[0]).unwrap();
    (run, results, row)
}

/// Opening `path` for writing fails and leaves the file as it was; the error.
fn open_refused(path: &Path) -> StoreError {
    leaves_untouched(path, || match Store::open(path) {
        Err(e) => e,
        Ok(_) => panic!("{} was opened for writing", path.display()),
    })
}

#[test]
fn round_trip_through_file() {
    let dir = tmp();
    let path = dir.path().join("r.db");
    let run = sample_run("11111111-2222-4333-8444-555555555555");
    let id = id_of(
        Store::open(&path)
            .unwrap()
            .insert_run(&run, "local")
            .unwrap(),
    );
    let s = Store::open(&path).unwrap();
    let back = s.load_run(id).unwrap();
    assert_eq!(back, normalise(run));
    assert_eq!(s.integrity_check().unwrap_or_default(), "ok");
    let list = s.list_runs().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].results, 2);
    assert_eq!(list[0].host, "box1");
    assert_eq!(s.hosts().unwrap_or_default(), vec!["box1".to_string()]);
    assert_eq!(s.latest_run_for_host("box1").unwrap_or_default(), Some(id));
}

#[test]
fn incremental_results_and_finish() {
    let mut s = Store::open_in_memory().unwrap();
    let (mut run, _, row) = begun_run(&mut s, "aaaaaaaa-0000-4000-8000-000000000001");
    let mid = s.load_run(row).unwrap();
    assert_eq!(mid.status, RunStatus::Running);
    assert_eq!(mid.results.len(), 1);
    run.status = RunStatus::Interrupted;
    run.finished_at = Some(Utc::now());
    s.finish_run(row, &run).unwrap();
    let done = s.load_run(row).unwrap();
    assert_eq!(done.status, RunStatus::Interrupted);
    assert!(done.finished_at.is_some());
}

#[test]
fn reimport_is_a_no_op() {
    let mut s = Store::open_in_memory().unwrap();
    let run = sample_run("bbbbbbbb-0000-4000-8000-000000000001");
    let first = s.insert_run(&run, "import").unwrap();
    let second = s.insert_run(&run, "import").unwrap();
    match (first, second) {
        (Inserted::New(a), Inserted::AlreadyPresent(b)) => assert_eq!(a, b),
        other => panic!("{other:?}"),
    }
    assert_eq!(s.list_runs().map(|l| l.len()).unwrap_or(0), 1);
}

#[test]
fn batch_import_is_all_or_nothing() {
    let mut s = Store::open_in_memory().unwrap();
    let good = sample_run("cccccccc-0000-4000-8000-000000000001");
    let mut bad = sample_run("cccccccc-0000-4000-8000-000000000002");
    // A metric without samples violates the schema's CHECK constraint.
    bad.results[0].metrics[0].samples.clear();
    bad.results[0].metrics[0].summary.n = 0;
    assert!(s.insert_runs(&[good.clone(), bad], "import").is_err());
    assert!(s.list_runs().unwrap_or_default().is_empty());
    let ok = s.insert_runs(&[good], "import").unwrap();
    assert!(matches!(ok[..], [Inserted::New(_)]));
}

#[test]
fn resolve_by_id_and_uuid_prefix() {
    let mut s = Store::open_in_memory().unwrap();
    let a = sample_run("deadbeef-0000-4000-8000-000000000001");
    let b = sample_run("deadbeef-1111-4000-8000-000000000002");
    let ida = match s.insert_run(&a, "local") {
        Ok(Inserted::New(id)) => id,
        other => panic!("{other:?}"),
    };
    assert_eq!(s.resolve_run(&ida.to_string()).ok(), Some(ida));
    assert_eq!(s.resolve_run("deadbeef-0").ok(), Some(ida));
    assert!(matches!(s.resolve_run("999"), Err(StoreError::NotFound(_))));
    assert!(matches!(s.resolve_run("zz"), Err(StoreError::NotFound(_))));
    let _ = s.insert_run(&b, "local");
    assert!(matches!(
        s.resolve_run("deadbeef"),
        Err(StoreError::Ambiguous { .. })
    ));
    // A prefix of digits alone: a row id where a row has it, else the
    // prefix (it was taken for a row id only, and not found).
    let c = sample_run("38201945-2222-4000-8000-000000000003");
    let idc = match s.insert_run(&c, "local") {
        Ok(Inserted::New(id)) => id,
        other => panic!("{other:?}"),
    };
    assert_eq!(s.resolve_run("38201945").ok(), Some(idc));
    assert_eq!(s.resolve_run("3820").ok(), Some(idc));
    assert_eq!(s.resolve_run(&idc.to_string()).ok(), Some(idc));
    assert_eq!(s.resolve_run("0001").ok(), Some(ida));
}

#[test]
fn delete_cascades() {
    let dir = tmp();
    let path = dir.path().join("d.db");
    let mut s = Store::open(&path).unwrap();
    let id = id_of(
        s.insert_run(&sample_run("eeeeeeee-0000-4000-8000-000000000001"), "local")
            .unwrap(),
    );
    assert!(s.delete_run(id).unwrap_or(false));
    assert!(!s.delete_run(id).unwrap_or(true));
    let orphans: i64 = s
        .sqlite()
        .conn
        .query_row(
            "SELECT (SELECT count(*) FROM results) + (SELECT count(*) FROM metrics)",
            [],
            |r| r.get(0),
        )
        .unwrap_or(-1);
    assert_eq!(orphans, 0);
}

#[test]
fn newer_schema_refused() {
    let dir = tmp();
    let path = dir.path().join("n.db");
    drop(Store::open(&path).unwrap());
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch("PRAGMA journal_mode=DELETE; PRAGMA user_version = 99")
            .unwrap();
    }
    let e = open_refused(&path);
    assert!(matches!(e, StoreError::NewerSchema { .. }), "{e}");
    assert!(e.to_string().contains("newer sysgauge"), "{e}");
}

#[test]
fn foreign_files_refused_untouched() {
    let dir = tmp();
    let other = dir.path().join("other.db");
    {
        let c = Connection::open(&other).unwrap();
        c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            .unwrap();
    }
    let e = open_refused(&other);
    assert!(matches!(e, StoreError::Foreign { .. }), "{e}");

    let text = dir.path().join("notes.txt");
    std::fs::write(
        &text,
        "this is not sqlite at all, just some words\n".repeat(100),
    )
    .unwrap();
    let e = open_refused(&text);
    assert!(matches!(e, StoreError::Foreign { .. }), "{e}");
}

#[test]
fn bad_paths_refused() {
    let dir = tmp();
    match Store::open(dir.path()) {
        Err(StoreError::Refused { reason, .. }) => assert!(reason.contains("directory")),
        other => panic!("{:?}", other.err()),
    }
    match Store::open(&dir.path().join("missing/sub/x.db")) {
        Err(StoreError::Open { reason, .. }) => assert!(reason.contains("does not exist")),
        other => panic!("{:?}", other.err()),
    }
}

/// Names in `dir` (to show that a refused or read-only open left nothing).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn special_files_refused_untouched() {
    let dir = tmp();
    let fifo = dir.path().join("fifo");
    sysgauge_testkit::mkfifo(&fifo);
    let link = dir.path().join("link-to-fifo");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    let dangling = dir.path().join("dangling");
    std::os::unix::fs::symlink(dir.path().join("nowhere.db"), &dangling).unwrap();
    let before = names(dir.path());
    for (p, word) in [
        (fifo.as_path(), "FIFO"),
        (link.as_path(), "symbolic link"),
        (dangling.as_path(), "missing file"),
        (dir.path(), "directory"),
    ] {
        for ro in [false, true] {
            let r = if ro {
                Store::open_read_only(p)
            } else {
                Store::open(p)
            };
            match r {
                Err(e @ StoreError::Refused { .. }) => {
                    let text = e.to_string();
                    assert!(text.contains(word), "{text}");
                    assert!(text.contains(&p.display().to_string()), "{text}");
                }
                Err(e) => panic!("{}: unexpected error {e}", p.display()),
                Ok(_) => panic!("{} was opened", p.display()),
            }
        }
    }
    assert_eq!(names(dir.path()), before);
    // /dev/null: a character device; SQLite would leave /dev/null-journal.
    match Store::open(Path::new("/dev/null")) {
        Err(StoreError::Refused { reason, .. }) => assert!(reason.contains("character device")),
        other => panic!("{:?}", other.err()),
    }
    assert!(!Path::new("/dev/null-journal").exists());
    assert!(!Path::new("/dev/null-wal").exists());
}

#[test]
fn read_only_open_never_creates() {
    let dir = tmp();
    let path = dir.path().join("none.db");
    assert!(matches!(
        Store::open_read_only(&path),
        Err(StoreError::Missing { .. })
    ));
    assert!(matches!(
        Store::open_read_only(&dir.path().join("no/such/dir.db")),
        Err(StoreError::Missing { .. })
    ));
    assert!(names(dir.path()).is_empty());
    // An existing database reads fine, and reading writes nothing to it.
    let run = sample_run("11111111-2222-4333-8444-000000000009");
    Store::open(&path)
        .unwrap()
        .insert_run(&run, "local")
        .unwrap();
    leaves_untouched(&path, || {
        let mut s = Store::open_read_only(&path).unwrap();
        assert_eq!(s.list_runs().unwrap().len(), 1);
        // Writing through it is refused.
        assert!(s.delete_run(1).is_err());
    });
    // And no -wal or -shm is left beside the database.
    assert_eq!(names(dir.path()), vec!["none.db".to_string()]);
    // An empty file has no runs yet (writers take it as a new database).
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    assert!(matches!(
        Store::open_read_only(&empty),
        Err(StoreError::Empty { .. })
    ));
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
}

/// Readers and writers agree on a 0-byte file (`mktemp`): a new database
/// for a writer, no runs yet for a reader.
#[test]
fn empty_file_is_a_new_database() {
    let dir = tmp();
    let path = dir.path().join("mktemp.db");
    std::fs::write(&path, b"").unwrap();
    let err = Store::open_read_only(&path).err().map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("no runs stored yet") && !e.contains("not a sysgauge")),
        "{err:?}"
    );
    let run = sample_run("11111111-2222-4333-8444-000000000031");
    Store::open(&path)
        .unwrap()
        .insert_run(&run, "local")
        .unwrap();
    assert_eq!(
        Store::open_read_only(&path)
            .unwrap()
            .list_runs()
            .unwrap()
            .len(),
        1
    );
}

/// A database with `n` stored runs at `path`, its WAL checkpointed into
/// the file.
fn database_with_runs(path: &Path, n: usize) {
    let mut s = Store::open(path).unwrap();
    for i in 0..n {
        let run = sample_run(&format!("11111111-2222-4333-8444-{i:012}"));
        s.insert_run(&run, "local").unwrap();
    }
}

/// A page overwritten with garbage: no writer adds a run on top of it, the
/// error names the damage and the way to copy what is left, and the file
/// is left as it was.
#[test]
fn damaged_database_refused_for_writing() {
    let dir = tmp();
    let path = dir.path().join("damaged.db");
    database_with_runs(&path, 40);
    let mut bytes = std::fs::read(&path).unwrap();
    let page = 4096;
    let pages = bytes.len() / page;
    assert!(pages >= 4, "only {pages} pages");
    let last = (pages - 1) * page;
    bytes[last..last + page].fill(0xA5);
    std::fs::write(&path, &bytes).unwrap();
    let e = open_refused(&path);
    assert!(matches!(e, StoreError::Damaged { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("is damaged"), "{text}");
    assert!(
        text.contains(&format!("sqlite3 {} .recover", path.display())),
        "{text}"
    );
}

/// Our tables with a schema version of 0 or -1: named as such, never
/// migrated again ("table runs already exists"), by readers and writers.
#[test]
fn missing_schema_version_refused() {
    for version in [0, -1] {
        let dir = tmp();
        let path = dir.path().join("v.db");
        database_with_runs(&path, 1);
        Connection::open(&path)
            .unwrap()
            .execute_batch(&format!("PRAGMA user_version = {version}"))
            .unwrap();
        leaves_untouched(&path, || {
            for err in [Store::open(&path).err(), Store::open_read_only(&path).err()] {
                match err {
                    Some(e @ StoreError::BadSchemaVersion { found, .. }) => {
                        assert_eq!(found, version);
                        let text = e.to_string();
                        assert!(
                            text.contains(&format!("schema version {version}"))
                                && text.contains("not a database this sysgauge can use"),
                            "{text}"
                        );
                    }
                    other => panic!("version {version}: {other:?}"),
                }
            }
        });
    }
}

/// A tmpfs of `size` mounted on a fresh directory, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tmp();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        sysgauge_testkit::require("mounting a tmpfs (needs root)", ok, "run the tests as root")
            .then_some(Tmpfs { dir })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// A full disk does not stop reading: the -shm file a WAL reader needs
/// cannot be made there, so the file is read as it was committed.
#[test]
fn full_disk_still_reads() {
    let Some(fs) = Tmpfs::mount("1m") else {
        return;
    };
    let path = fs.dir.path().join("results.db");
    database_with_runs(&path, 3);
    // Fill what is left.
    let mut filler = std::fs::File::create(fs.dir.path().join("filler")).unwrap();
    let block = vec![1u8; 4096];
    while std::io::Write::write_all(&mut filler, &block).is_ok() {}
    drop(filler);
    let s = Store::open_read_only(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.list_runs().unwrap().len(), 3);
    drop(s);
    assert_eq!(names(fs.dir.path()), ["filler", "results.db"]);
}

/// Many connections creating one new database at the same moment: each
/// migration re-reads the version under the write lock, so none fails
/// with "table runs already exists" and all end at the current version.
#[test]
fn concurrent_creation_migrates_once() {
    for round in 0..5 {
        let dir = tmp();
        let path = dir.path().join(format!("race-{round}.db"));
        let n = 8;
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(n));
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let path = path.clone();
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    let mut s = Store::open(&path)?;
                    let run = sample_run(&format!("cccccccc-0000-4000-8000-{i:012}"));
                    s.insert_run(&run, "local")
                })
            })
            .collect();
        for h in handles {
            let r = h.join().unwrap();
            assert!(matches!(r, Ok(Inserted::New(_))), "{:?}", r.err());
        }
        let mut s = Store::open(&path).unwrap();
        assert_eq!(s.list_runs().unwrap().len(), n);
        assert_eq!(s.integrity_check().unwrap(), "ok");
        let version: i64 = s
            .sqlite()
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, migrations::MIGRATIONS.len() as i64);
        let mode: String = s
            .sqlite()
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }
}

/// A writer that finds the write lock taken waits for it (BEGIN
/// IMMEDIATE + busy timeout) instead of failing with "database is locked".
#[test]
fn writer_waits_for_the_write_lock() {
    let dir = tmp();
    let path = dir.path().join("w.db");
    drop(Store::open(&path).unwrap());
    let mut holder = Store::open(&path).unwrap();
    let tx = holder.sqlite().write_tx("holding the lock").unwrap();
    let p = path.clone();
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let writer = std::thread::spawn(move || {
        let _ = started_tx.send(());
        let run = sample_run("dddddddd-0000-4000-8000-000000000001");
        Store::open(&p).and_then(|mut s| s.insert_run(&run, "local"))
    });
    // The other writer is now blocked on the lock held by `tx`; it must
    // still be waiting when the lock is released.
    started_rx.recv().ok();
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        !writer.is_finished(),
        "the writer did not wait for the lock"
    );
    tx.commit().unwrap();
    let r = writer.join().unwrap();
    assert!(matches!(r, Ok(Inserted::New(_))), "{:?}", r.err());
}

/// A pid that certainly does not exist any more: a child we reaped.
fn dead_pid() -> i64 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = i64::from(child.id());
    child.wait().unwrap();
    pid
}

#[test]
fn stale_running_runs_become_interrupted() {
    let dir = tmp();
    let path = dir.path().join("s.db");
    let mut s = Store::open(&path).unwrap();
    let mut run = sample_run("eeeeeeee-0000-4000-8000-000000000001");
    run.status = RunStatus::Running;
    run.results.clear();
    let ours = s.begin_run(&run, "local").unwrap();
    run.run_id = "eeeeeeee-0000-4000-8000-000000000002".into();
    let dead = s.begin_run(&run, "local").unwrap();
    run.run_id = "eeeeeeee-0000-4000-8000-000000000003".into();
    let old_boot = s.begin_run(&run, "local").unwrap();
    s.sqlite()
        .conn
        .execute(
            "UPDATE runs SET pid = ?1 WHERE id = ?2",
            params![dead_pid(), dead],
        )
        .unwrap();
    s.sqlite()
        .conn
        .execute(
            "UPDATE runs SET boot_id = 'another-boot' WHERE id = ?1",
            params![old_boot],
        )
        .unwrap();
    drop(s);
    // Reading marks nothing.
    let r = Store::open_read_only(&path).unwrap();
    assert!(r.stale_runs().is_empty());
    drop(r);
    let s = Store::open(&path).unwrap();
    let mut stale = s.stale_runs().to_vec();
    stale.sort_unstable();
    assert_eq!(stale, vec![dead, old_boot]);
    let status = |id| s.load_run(id).unwrap().status;
    assert_eq!(status(ours), RunStatus::Running);
    assert_eq!(status(dead), RunStatus::Interrupted);
    assert_eq!(status(old_boot), RunStatus::Interrupted);
}

#[test]
fn latest_is_the_latest_complete_run() {
    let mut s = Store::open_in_memory().unwrap();
    let mut run = sample_run("ffffffff-0000-4000-8000-000000000001");
    run.started_at = Utc::now() - chrono::Duration::hours(1);
    let complete = id_of(s.insert_run(&run, "local").unwrap());
    for (i, st) in [
        RunStatus::Running,
        RunStatus::Interrupted,
        RunStatus::Failed,
    ]
    .into_iter()
    .enumerate()
    {
        let mut later = sample_run(&format!("ffffffff-0000-4000-8000-00000000001{i}"));
        later.status = st;
        s.insert_run(&later, "local").unwrap();
    }
    assert_eq!(s.latest_run_for_host("box1").unwrap(), Some(complete));
    let (_, st) = s.latest_any_run_for_host("box1").unwrap().unwrap();
    assert_ne!(st, RunStatus::Complete);
}

/// A URL's password in every shape `redact_url` knows.
#[test]
fn display_name_drops_passwords() {
    let shown = |u: &str| display_name(Path::new(u));
    assert_eq!(
        shown("postgres://bob:s3cret@db.example:5433/results"),
        "postgres://bob@db.example:5433/results"
    );
    assert_eq!(
        shown("postgresql://bob@/results?host=/run/postgresql&password=x"),
        "postgresql://bob@/results?host=/run/postgresql"
    );
    assert_eq!(shown("postgres://h/db?password=x"), "postgres://h/db");
    assert_eq!(shown("postgres://h/db"), "postgres://h/db");
    assert_eq!(shown("/var/lib/x.db"), "/var/lib/x.db");
}

/// Every error the store can make, built with a URL carrying a password
/// (as a careless constructor would), and the errors of opening such URLs
/// for real: none shows the password.
#[test]
fn no_store_error_shows_a_password() {
    const SECRET: &str = "sgpass";
    let url = "postgres://sg:sgpass@127.0.0.1:1/results?password=sgpass";
    let path = || PathBuf::from(url);
    let sqlite_error = || rusqlite::Error::InvalidQuery;
    let mut errors = vec![
        StoreError::Open {
            path: path(),
            reason: "x".into(),
        },
        StoreError::Refused {
            path: path(),
            reason: "x".into(),
        },
        StoreError::Missing { path: path() },
        StoreError::NewerSchema {
            path: path(),
            found: 9,
            supported: 1,
        },
        StoreError::Foreign { path: path() },
        StoreError::Sqlite {
            path: path(),
            context: "x".into(),
            cause: sqlite_error(),
        },
        StoreError::Postgres {
            path: path(),
            context: "x".into(),
            reason: "x".into(),
        },
        StoreError::Corrupt {
            path: path(),
            what: "x".into(),
        },
        StoreError::Empty { path: path() },
        StoreError::BadSchemaVersion {
            path: path(),
            found: 0,
        },
        StoreError::Damaged {
            path: path(),
            what: "x".into(),
        },
        StoreError::NotWritable {
            path: path(),
            owner: "x".into(),
            uid: 1,
        },
    ];
    // Nothing listens on port 1: the connection is refused at once.
    errors.extend(Store::open(Path::new(url)).err());
    errors.extend(Store::open_read_only(Path::new(url)).err());
    // Not a URL the driver parses (the port): the parse error.
    let bad = "postgres://sg:sgpass@host:port/results";
    errors.extend(Store::open(Path::new(bad)).err());
    errors.extend(Store::check_path(Path::new(bad)).err());
    assert_eq!(errors.len(), 16);
    for e in &errors {
        let text = e.to_string();
        assert!(!text.contains(SECRET), "{text}");
        assert!(text.contains("postgres://sg@"), "{text}");
    }
}

/// The files a database is made of, and SQLite's header told from other
/// content (what the command line keeps output files off).
#[test]
fn database_files_and_the_sqlite_header() {
    let dir = tmp();
    let db = dir.path().join("r.db");
    let names: Vec<String> = database_files(&db)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let base = db.display().to_string();
    assert_eq!(
        names,
        [
            base.clone(),
            format!("{base}-wal"),
            format!("{base}-shm"),
            format!("{base}-journal")
        ]
    );
    assert!(database_files(Path::new("postgres://sg@db.example/results")).is_empty());
    assert!(!is_sqlite_database(&db), "missing");
    drop(Store::open(&db).unwrap());
    assert!(is_sqlite_database(&db));
    let json = dir.path().join("r.json");
    std::fs::write(&json, "{\"schema_version\": 1}").unwrap();
    assert!(!is_sqlite_database(&json));
    assert!(!is_sqlite_database(dir.path()), "a directory");
}
