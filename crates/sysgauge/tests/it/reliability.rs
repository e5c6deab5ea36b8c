//! Faults and bad input around the results database and the process's
//! life: `--db` pointing at things that are not a database file, read-only
//! commands on a missing database, SIGTERM/SIGHUP/SIGKILL mid-run, and many
//! processes writing one database at once. Everything is real: the binary,
//! SQLite files, FIFOs, a loop device, signals. docs/reliability.md maps
//! each test here to the behaviour it proves.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{loop_devices, stderr_of, stdout_of, Outcome, Sandbox, Tmpfs};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use sysgauge_testkit::{mkfifo, Interrupt};

/// Names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// `results list`, `import` and a measuring run against `db`: each must
/// exit 2 with a message naming the path.
fn assert_refused(sb: &Sandbox, db: &Path, json: &Path) {
    let shown = db.display().to_string();
    let attempts: Vec<Vec<String>> = vec![
        vec![
            "results".into(),
            "--db".into(),
            shown.clone(),
            "list".into(),
        ],
        vec![
            "import".into(),
            "--db".into(),
            shown.clone(),
            json.display().to_string(),
        ],
        vec!["compare".into(), "--db".into(), shown.clone()],
        vec![
            "run".into(),
            "--profile".into(),
            "tiny".into(),
            "--only".into(),
            "hash.md5".into(),
            "--db".into(),
            shown.clone(),
        ],
    ];
    for args in attempts {
        let out = sb
            .cmd()
            .args(&args)
            .timeout(Duration::from_secs(60))
            .usage_error(&shown);
        let err = stderr_of(&out);
        assert!(err.contains("refusing"), "{args:?}: {err}");
    }
}

/// A small run record to import (measured once, not stored).
fn record_json(sb: &Sandbox, name: &str) -> PathBuf {
    let path = sb.path().join(name);
    sb.cmd()
        .args(["run", "--profile", "tiny", "--repetitions", "1"])
        .args(["--only", "hash.md5", "--no-store", "--json"])
        .arg(&path)
        .succeeds();
    path
}

/// `record` with another run id (so that each import is a new run).
fn with_run_id(record: &Path, dir: &Path, i: usize) -> PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(record).unwrap()).unwrap();
    v["run_id"] = serde_json::Value::String(format!("0000abcd-0000-4000-8000-{i:012}"));
    let p = dir.join(format!("import-{i}.json"));
    std::fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
    p
}

#[test]
fn db_that_is_not_a_regular_file_is_refused_untouched() {
    let sb = Sandbox::new();
    let json = record_json(&sb, "one.json");
    let dir = sb.subdir("special");
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let link = dir.join("link-to-fifo");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    let subdir = dir.join("subdir");
    std::fs::create_dir(&subdir).unwrap();
    let before = names(&dir);
    for db in [&fifo, &link, &subdir] {
        assert_refused(&sb, db, &json);
    }
    assert_eq!(
        names(&dir),
        before,
        "something was created beside the paths"
    );
    assert!(names(&subdir).is_empty());
    // /dev/null: SQLite would have left /dev/null-journal or -wal.
    let journal_before = Path::new("/dev/null-journal").exists();
    assert_refused(&sb, Path::new("/dev/null"), &json);
    for leftover in ["/dev/null-journal", "/dev/null-wal", "/dev/null-shm"] {
        if leftover != "/dev/null-journal" || !journal_before {
            assert!(!Path::new(leftover).exists(), "{leftover} was created");
        }
    }
}

#[test]
fn db_on_a_block_device_is_refused_and_the_file_system_survives() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let tools = ["losetup", "mkfs.ext4", "blkid"]
        .iter()
        .all(|p| sysgauge_core::bench::find_program(p).is_some());
    if !sysgauge_testkit::require(
        "loop-device --db test: needs root, losetup, mkfs.ext4, blkid and /dev/loop-control",
        root && tools && Path::new("/dev/loop-control").exists(),
        "run as root with util-linux and e2fsprogs installed",
    ) {
        return;
    }
    let _turn = loop_devices();
    let sb = Sandbox::new();
    let json = record_json(&sb, "one.json");
    let img = sb.path().join("fs.img");
    std::fs::write(&img, vec![0u8; 8 << 20]).unwrap();
    Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&img)
        .succeeds();
    let out = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&img)
        .succeeds();
    let dev = Loop(PathBuf::from(stdout_of(&out).trim()));
    let blkid = |dev: &Path| {
        let out = Command::new("blkid")
            .args(["-p", "-o", "value", "-s", "TYPE"])
            .arg(dev)
            .output()
            .unwrap();
        stdout_of(&out).trim().to_string()
    };
    assert_eq!(blkid(&dev.0), "ext4");
    let dev_dir = names(Path::new("/dev"));
    assert_refused(&sb, &dev.0, &json);
    assert_eq!(blkid(&dev.0), "ext4", "the file system was damaged");
    let name = dev.0.file_name().unwrap().to_string_lossy().into_owned();
    let new: Vec<String> = names(Path::new("/dev"))
        .into_iter()
        .filter(|n| n.starts_with(&name) && !dev_dir.contains(n))
        .collect();
    assert!(new.is_empty(), "left in /dev: {new:?}");
}

/// A loop device, detached on drop (even when the test fails).
struct Loop(PathBuf);

impl Drop for Loop {
    fn drop(&mut self) {
        for _ in 0..50 {
            let _ = Command::new("losetup").arg("-d").arg(&self.0).status();
            let name = self.0.file_name().unwrap_or_default().to_string_lossy();
            if !Path::new(&format!("/sys/block/{name}/loop/backing_file")).exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[test]
fn read_only_commands_never_create_a_database() {
    let sb = Sandbox::new();
    let missing = sb.path().join("nothing-here.db");
    let before = names(sb.path());
    // Named with --db: an error (a typo must not look like an empty history).
    for args in [
        vec!["results", "list"],
        vec!["results", "show", "1"],
        vec!["results", "export", "1"],
        vec!["compare"],
        vec!["baseline", "make", "1", "--machine", "x"],
    ] {
        let mut c = sb.cmd();
        if args[0] == "results" {
            c.arg("results").arg("--db").arg(&missing).args(&args[1..]);
        } else {
            c.args(&args).arg("--db").arg(&missing);
        }
        c.usage_error("no results database");
    }
    // The default database missing: "no runs stored yet", exit 0.
    let out = sb.cmd().args(["results", "list"]).succeeds();
    assert!(stderr_of(&out).contains("no runs stored yet"));
    let out = sb.cmd().args(["results", "list", "--json"]).succeeds();
    assert_eq!(stdout_of(&out).trim(), "[]");
    assert_eq!(
        names(sb.path()),
        before,
        "a read-only command created files"
    );
}

/// The pid-named scratch directories of `pid` under `dir`.
fn scratch_of(dir: &Path, pid: u32) -> Vec<String> {
    let prefix = format!("sysgauge-{pid}-");
    names(dir)
        .into_iter()
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

fn run_status(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let mut stmt = conn.prepare("SELECT status FROM runs ORDER BY id").unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<Vec<String>, _>>()
        .unwrap()
}

/// `run --only sweep` (its input files live in the scratch directory while
/// it runs) stopped by `signal` after its first case; returns the exit code
/// and the log, having checked that nothing is left in the scratch parent.
fn signal_sweep_run(signal: libc::c_int) -> (Option<i32>, String, Vec<String>) {
    let sb = Sandbox::new();
    let tmp = sb.subdir("tmp");
    let mut pid = 0;
    let run = Interrupt::after("[1/").with_signal(signal).run(
        sb.std_cmd()
            .args(["run", "--only", "sweep", "--profile", "quick", "--db"])
            .arg(sb.db())
            .env("TMPDIR", &tmp),
        |child, _| pid = child.id(),
    );
    assert!(run.started, "no case finished in time:\n{}", run.log);
    let left = scratch_of(&tmp, pid);
    assert!(
        left.is_empty(),
        "scratch left behind: {left:?}\n{}",
        run.log
    );
    let shm = scratch_of(Path::new("/dev/shm"), pid);
    assert!(shm.is_empty(), "left in /dev/shm: {shm:?}");
    (run.status.code(), run.log, run_status(&sb.db()))
}

#[test]
fn sigterm_mid_run_stops_like_ctrl_c_with_143() {
    let (code, log, status) = signal_sweep_run(libc::SIGTERM);
    assert_eq!(code, Some(143), "{log}");
    assert!(log.contains("SIGTERM"), "{log}");
    assert_eq!(status, vec!["interrupted".to_string()], "{log}");
}

#[test]
fn sighup_mid_run_stops_like_ctrl_c_with_129() {
    let (code, log, status) = signal_sweep_run(libc::SIGHUP);
    assert_eq!(code, Some(129), "{log}");
    assert_eq!(status, vec!["interrupted".to_string()], "{log}");
}

#[test]
fn sigterm_mid_disk_run_leaves_nothing_behind() {
    let sb = Sandbox::new();
    let target = sb.scratch();
    let run = sb.stopped_disk_run(Interrupt::after("[1/").with_signal(libc::SIGTERM), &target);
    run.assert_started_then_exited(143);
    assert!(names(&target).is_empty(), "left: {:?}", names(&target));
    assert_eq!(run_status(&sb.db()), vec!["interrupted".to_string()]);
}

#[test]
fn after_sigkill_the_next_writer_cleans_up() {
    let sb = Sandbox::new();
    let json = record_json(&sb, "one.json");
    let tmp = sb.subdir("tmp");
    let mut pid = 0;
    let mut had = Vec::new();
    let run = Interrupt::after("[1/")
        .with_signal(libc::SIGKILL)
        .exiting_within(Duration::from_secs(30))
        .run(
            sb.std_cmd()
                .args(["run", "--only", "sweep", "--profile", "quick", "--db"])
                .arg(sb.db())
                .env("TMPDIR", &tmp),
            |child, _| {
                pid = child.id();
                had = scratch_of(&tmp, pid);
            },
        );
    assert!(run.started, "no case finished in time:\n{}", run.log);
    assert!(!had.is_empty(), "the run had no scratch directory to leave");
    assert_eq!(scratch_of(&tmp, pid), had, "SIGKILL cannot clean up");
    assert_eq!(run_status(&sb.db()), vec!["running".to_string()]);
    // What the tmpfs benchmark would have left in /dev/shm, for the same
    // dead pid.
    let shm = Path::new("/dev/shm").join(format!("sysgauge-{pid}-99"));
    let have_shm = Path::new("/dev/shm").is_dir() && std::fs::create_dir(&shm).is_ok();
    // Reading changes nothing.
    let out = sb.on_db("results").arg("list").output().unwrap();
    assert!(stdout_of(&out).contains("running"), "{}", stdout_of(&out));
    assert_eq!(scratch_of(&tmp, pid), had);
    // The next writer (an import) marks the run and removes its directory.
    let out = sb
        .cmd()
        .env("TMPDIR", &tmp)
        .arg("import")
        .arg("--db")
        .arg(sb.db())
        .arg(&json)
        .succeeds();
    assert!(stderr_of(&out).contains("marked interrupted"));
    assert!(scratch_of(&tmp, pid).is_empty(), "{:?}", names(&tmp));
    if have_shm {
        let left = shm.exists();
        let _ = std::fs::remove_dir(&shm);
        assert!(!left, "{} was not removed", shm.display());
    }
    assert_eq!(
        run_status(&sb.db()),
        vec!["interrupted".to_string(), "complete".to_string()]
    );
}

/// 10 imports and 10 measuring runs at once into one database.
fn twenty_writers(sb: &Sandbox, db: &Path, first_id: usize, record: &Path) {
    let mut children = Vec::new();
    for i in 0..10 {
        let f = with_run_id(record, sb.path(), first_id + i);
        let child = sb
            .std_cmd()
            .arg("import")
            .arg("--db")
            .arg(db)
            .arg(&f)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        children.push(("import", child));
        let child = sb
            .std_cmd()
            .args(["run", "--profile", "tiny", "--repetitions", "1"])
            .args(["--only", "hash.md5", "--db"])
            .arg(db)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        children.push(("run", child));
    }
    for (what, child) in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn twenty_concurrent_writers_new_and_existing_database() {
    let sb = Sandbox::new();
    let record = record_json(&sb, "one.json");
    let db = sb.path().join("shared.db");
    // A new database: all 20 race to create it.
    twenty_writers(&sb, &db, 0, &record);
    let status = run_status(&db);
    assert_eq!(status.len(), 20, "{status:?}");
    assert!(status.iter().all(|s| s == "complete"), "{status:?}");
    // The same again on the existing database.
    twenty_writers(&sb, &db, 100, &record);
    let status = run_status(&db);
    assert_eq!(status.len(), 40, "{status:?}");
    assert!(status.iter().all(|s| s == "complete"), "{status:?}");
}

#[test]
fn a_failing_store_marks_the_run_failed_and_still_writes_json() {
    let sb = Sandbox::new();
    let record = record_json(&sb, "one.json");
    sb.on_db("import").arg(&record).succeeds();
    // A real SQLite failure on every stored result (as a full disk would
    // give), raised by the database itself.
    rusqlite::Connection::open(sb.db())
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON results
             BEGIN SELECT RAISE(ABORT, 'simulated write failure'); END;",
        )
        .unwrap();
    let json = sb.path().join("kept.json");
    let out = sb
        .cmd()
        .args(["run", "--profile", "tiny", "--repetitions", "1"])
        .args(["--only", "hash.md5", "--db"])
        .arg(sb.db())
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("could not be stored"), "{err}");
    assert!(err.contains(&json.display().to_string()), "{err}");
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // The measuring went well: the record says so.
    assert_eq!(kept["status"], "complete");
    let measured = kept["results"].as_array().unwrap().len();
    assert!(measured > 0);
    assert_eq!(run_status(&sb.db()), vec!["complete", "failed"]);
    // The database works again: importing the record completes the stored
    // run (same run, every result, its status), and again changes nothing.
    rusqlite::Connection::open(sb.db())
        .unwrap()
        .execute_batch("DROP TRIGGER refuse;")
        .unwrap();
    let out = sb.on_db("import").arg(&json).succeeds();
    let err = stderr_of(&out);
    assert!(
        err.contains(&format!(
            "added the {measured} result(s) its database had missed"
        )),
        "{err}"
    );
    assert!(err.contains("1 completed, 0 already present"), "{err}");
    assert_eq!(run_status(&sb.db()), vec!["complete", "complete"]);
    let listed = sb.listed_runs();
    let runs = listed.as_array().unwrap();
    assert_eq!(runs.len(), 2, "{listed}");
    assert!(
        runs.iter()
            .any(|r| r["results"] == measured as u64 && r["run_id"] == kept["run_id"]),
        "{listed}"
    );
    let shown = sb
        .on_db("results")
        .args(["show", kept["run_id"].as_str().unwrap()])
        .succeeds();
    assert!(
        stdout_of(&shown).contains("complete (completed from its record by import)"),
        "{}",
        stdout_of(&shown)
    );
    let err = stderr_of(&sb.on_db("import").arg(&json).succeeds());
    assert!(err.contains("0 new run(s), 1 already present"), "{err}");
}

#[test]
fn a_host_stands_for_its_latest_complete_run() {
    let sb = Sandbox::new();
    for _ in 0..2 {
        sb.tiny_run().args(["--only", "hash.md5"]).succeeds();
    }
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    let (host, first): (String, String) = conn
        .query_row(
            "SELECT host_name, run_uuid FROM runs WHERE id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    // The newest run was cut short: the host means run 1 now.
    conn.execute("UPDATE runs SET status = 'interrupted' WHERE id = 2", [])
        .unwrap();
    let compare = |args: &[&str]| sb.on_db("compare").args(args).output().unwrap();
    let out = compare(&[host.as_str(), "2", "--format", "json"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["machines"][0]["run_id"], first.as_str(), "{c}");
    // No complete run at all: an error naming the run to use.
    conn.execute("UPDATE runs SET status = 'running' WHERE id = 1", [])
        .unwrap();
    let out = compare(&[host.as_str(), "2"]);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no complete run"), "{err}");
    assert!(err.contains("run 2"), "{err}");
}

/// A closed terminal: sysgauge's stdout and stderr are a pseudo-terminal
/// whose other side is closed (writes now fail with EIO), then SIGHUP
/// arrives, as when an ssh session drops. The run must still be stored
/// `interrupted` and the exit be 129, not a panic on the dead terminal.
#[test]
fn hangup_of_a_real_terminal_is_survived() {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let sb = Sandbox::new();
    let tmp = sb.subdir("tmp");
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes two descriptors into the given ints; the
    // name, termios and winsize pointers may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // openpty's descriptors are inherited across exec: the child must not
    // hold the master open, or closing ours would not hang up.
    // SAFETY: fcntl on descriptors we own.
    unsafe {
        libc::fcntl(master, libc::F_SETFD, libc::FD_CLOEXEC);
        libc::fcntl(slave, libc::F_SETFD, libc::FD_CLOEXEC);
    }
    // SAFETY: both descriptors were just opened and are owned by nobody else.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("sysgauge"))
        .args(["run", "--only", "sweep", "--profile", "quick", "--db"])
        .arg(sb.db())
        .env("HOME", sb.path())
        .env("XDG_DATA_HOME", sb.path().join("xdg"))
        .env("SYSGAUGE_NO_WAIT", "1")
        .env("TMPDIR", &tmp)
        .stdin(std::process::Stdio::null())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave.try_clone().unwrap())
        .spawn()
        .unwrap();
    drop(slave);
    // Drain the terminal until told to hang up, then close it.
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::File::from(master);
            // SAFETY: fcntl on a descriptor we own.
            unsafe {
                let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
                libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK);
            }
            let mut buf = [0u8; 4096];
            while !stop.load(Ordering::SeqCst) {
                match std::io::Read::read(&mut f, &mut buf) {
                    Ok(n) if n > 0 => {}
                    _ => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        })
    };
    // Wait (bounded) for a stored result: the run is under way.
    let t0 = std::time::Instant::now();
    loop {
        let n: i64 = rusqlite::Connection::open(sb.db())
            .and_then(|c| c.query_row("SELECT count(*) FROM results", [], |r| r.get(0)))
            .unwrap_or(0);
        if n > 0 {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no result stored in time"
        );
        assert!(child.try_wait().unwrap().is_none(), "sysgauge ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, Ordering::SeqCst);
    reader.join().unwrap();
    // SAFETY: kill with a valid pid and signal number.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGHUP) };
    let t0 = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("sysgauge did not stop within 60 s of SIGHUP");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(129), "{status:?}");
    assert_eq!(run_status(&sb.db()), vec!["interrupted".to_string()]);
    let left = scratch_of(&tmp, child.id());
    assert!(left.is_empty(), "scratch left behind: {left:?}");
}

#[test]
fn import_names_what_a_special_file_is() {
    let sb = Sandbox::new();
    let fifo = sb.path().join("run.json");
    mkfifo(&fifo);
    for (arg, want) in [
        (fifo.clone(), "not a regular file (a FIFO (named pipe))"),
        (
            PathBuf::from("/dev/zero"),
            "/dev/zero: not a regular file (a character device)",
        ),
        (sb.path().to_path_buf(), "not a regular file (a directory)"),
    ] {
        let out = sb.on_db("import").arg(&arg).output().unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err}");
    }
    assert!(!sb.db().exists(), "nothing was created");
}

#[test]
fn a_database_password_is_never_printed() {
    let sb = Sandbox::new();
    // Port 1 refuses at once: every command fails on its database.
    let url = "postgres://sg:sgpass@127.0.0.1:1/results";
    for args in [
        vec!["results", "list"],
        vec!["run", "--profile", "tiny", "--only", "hash.md5"],
        vec!["import", "/dev/null"],
    ] {
        let out = sb.cmd().args(&args).args(["--db", url]).output().unwrap();
        let text = format!("{}{}", stdout_of(&out), stderr_of(&out));
        assert_ne!(out.status.code(), Some(0), "{args:?}: {text}");
        assert!(!text.contains("sgpass"), "{args:?}: {text}");
    }
    let out = sb
        .cmd()
        .env("SYSGAUGE_DB", url)
        .args(["results", "list", "--help"])
        .succeeds();
    assert!(!stdout_of(&out).contains("sgpass"), "{}", stdout_of(&out));
}

/// No output file of any command replaces a results database: not the one
/// in use by its own path, another path to it, a symlink or a hard link, nor
/// its -wal/-shm file (there while a writer has it open; refused by name
/// even when not), nor any other SQLite database. Each is refused with
/// exit 2 before anything runs, and the stored run is still there.
#[test]
fn output_files_never_replace_a_results_database() {
    let sb = Sandbox::new();
    sb.tiny_run().args(["--only", "hash.md5"]).succeeds();
    let db = sb.db();
    let dir = sb.path();
    std::os::unix::fs::symlink(&db, dir.join("link.png")).unwrap();
    std::os::unix::fs::symlink(&db, dir.join("link.svg")).unwrap();
    std::os::unix::fs::symlink(&db, dir.join("link.html")).unwrap();
    std::fs::hard_link(&db, dir.join("hard.json")).unwrap();
    std::fs::create_dir(dir.join("sub")).unwrap();
    let other = dir.join("other.sqlite");
    std::fs::copy(&db, &other).unwrap();
    let before = std::fs::read(&db).unwrap();
    let p = |name: &str| dir.join(name).display().to_string();
    let attempts: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["run".into(), "--json".into(), p("results.db")],
            "the results database",
        ),
        (
            vec!["run".into(), "--json".into(), "sub/../results.db".into()],
            "the results database",
        ),
        (
            vec!["run".into(), "--json".into(), p("hard.json")],
            "the results database",
        ),
        (
            vec!["run".into(), "--json".into(), p("results.db-wal")],
            "a file of the results database",
        ),
        (
            vec!["run".into(), "--json".into(), p("results.db-shm")],
            "a file of the results database",
        ),
        (
            vec!["run".into(), "--json".into(), p("other.sqlite")],
            "is an SQLite database",
        ),
        (
            vec!["mem".into(), "--chart".into(), p("link.png")],
            "the results database",
        ),
        (
            vec!["sweep".into(), "--csv".into(), p("results.db")],
            "the results database",
        ),
        (
            vec!["sweep".into(), "--chart".into(), p("link.svg")],
            "the results database",
        ),
        (
            vec![
                "startup".into(),
                "true".into(),
                "--export-json".into(),
                p("hard.json"),
            ],
            "the results database",
        ),
    ];
    for (args, why) in attempts {
        // startup takes no --repetitions (a run is a sample): no tiny flags.
        let mut c = if args[0] == "startup" {
            sb.on_db("startup")
        } else {
            sb.tiny(&args[0])
        };
        c.args(&args[1..]);
        if args[0] == "run" {
            // Short, should the refusal ever fail.
            c.args(["--only", "hash.md5"]);
        }
        refused_before_anything_ran(&mut c, &args, why);
    }
    let reading: Vec<Vec<String>> = vec![
        vec![
            "results".into(),
            "export".into(),
            "1".into(),
            "-o".into(),
            p("results.db"),
        ],
        vec!["report".into(), p("link.html")],
        vec!["chart".into(), "--png".into(), p("link.png")],
        vec!["compare".into(), "-o".into(), p("hard.json")],
        vec![
            "baseline".into(),
            "make".into(),
            "1".into(),
            "--machine".into(),
            "x".into(),
            "-o".into(),
            p("results.db"),
        ],
    ];
    for args in reading {
        let mut c = sb.cmd();
        c.args(&args).arg("--db").arg(&db);
        refused_before_anything_ran(&mut c, &args, "the results database");
    }
    // `man --dir` writes pages by their own names: a database named like one
    // (through SYSGAUGE_DB, as man takes no --db) is refused, and no page is
    // written.
    let man = dir.join("man");
    std::fs::create_dir(&man).unwrap();
    std::fs::copy(&db, man.join("sysgauge-run.1")).unwrap();
    let mut c = sb.cmd();
    c.args(["man", "--dir"])
        .arg(&man)
        .env("SYSGAUGE_DB", man.join("sysgauge-run.1"));
    c.usage_error("sysgauge-run.1 is the results database");
    assert_eq!(names(&man), vec!["sysgauge-run.1"]);
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the database file changed"
    );
    assert_eq!(run_status(&db), vec!["complete"]);
    assert_eq!(std::fs::read(&other).unwrap(), before);
}

/// `cmd` (shown as `args`) exits 2 saying `why` and that the file would be
/// destroyed, having run nothing: no run stored, no scratch directory.
fn refused_before_anything_ran(cmd: &mut assert_cmd::Command, args: &[String], why: &str) {
    let out = cmd.usage_error("writing it would destroy");
    let err = stderr_of(&out);
    assert!(err.contains(why), "{args:?}: {err}");
    assert!(!err.contains("[1/"), "{args:?} ran: {err}");
}

/// A closed or full stderr (`2>&1 | head`, `2>/dev/full`) loses the
/// progress lines, not the run: it is stored complete and the exit code is
/// the run's own (0), never a panic (was: 101, the run left `running`).
#[test]
fn a_closed_or_full_stderr_is_survived() {
    let sb = Sandbox::new();
    let closed_pipe = || {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        std::process::Stdio::from(writer)
    };
    let full = || {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        std::process::Stdio::from(f)
    };
    for (command, only, stderr) in [
        ("run", "hash.md5", full()),
        ("run", "hash.md5", closed_pipe()),
        ("crypto", "md5", closed_pipe()),
    ] {
        let out = sb
            .std_cmd()
            .args([
                command,
                "--profile",
                "tiny",
                "--repetitions",
                "1",
                "--only",
                only,
            ])
            .arg("--db")
            .arg(sb.db())
            .stderr(stderr)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{command}: {out:?}");
        assert!(
            stdout_of(&out).contains("Stored as run"),
            "{}",
            stdout_of(&out)
        );
    }
    assert_eq!(run_status(&sb.db()), vec!["complete"; 3]);
    // A message that ends a command (an error) is lost the same way, with
    // its exit code.
    let out = sb
        .std_cmd()
        .args(["results", "show", "99", "--db"])
        .arg(sb.db())
        .stderr(full())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// A database that cannot be made: on a read-only file system the error
/// says so; on a full one nothing is left behind (a 0-byte file would be
/// called damaged by the next command).
#[test]
fn a_database_that_cannot_be_made_says_why_and_leaves_nothing() {
    let sb = Sandbox::new();
    let ro = sb.path().join("ro");
    let full = sb.path().join("full");
    let Some(_ro) = Tmpfs::mount(&ro, "ro,size=1m") else {
        return;
    };
    let Some(_full) = Tmpfs::mount(&full, "size=64k") else {
        return;
    };
    let out = sb
        .tiny_on("run", ro.join("x.sqlite"))
        .args(["--only", "hash.md5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("is on a read-only file system"),
        "{}",
        stderr_of(&out)
    );
    // Fill the small tmpfs, then ask for a database on it.
    let _ = std::fs::write(full.join("filler"), vec![0u8; 64 << 10]);
    let db = full.join("x.sqlite");
    let out = sb
        .tiny_on("run", &db)
        .args(["--only", "hash.md5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let left: Vec<String> = std::fs::read_dir(&full)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    assert_eq!(left, ["filler"], "{}", stderr_of(&out));
}
