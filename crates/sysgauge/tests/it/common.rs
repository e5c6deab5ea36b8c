//! Helpers shared by the integration tests: a temporary home with its own
//! database and scratch directory, and a command builder for the real binary.

#![allow(dead_code)]

use assert_cmd::Command;
use std::cell::Cell;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;
use sysgauge_core::RunRecord;

/// A test's temporary home, and its turn on the machine (see [`Turn`]).
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    // After `dir`: the sandbox is cleaned up before the turn ends.
    _turn: Turn,
}

/// Who has the machine. Tests of every topic run side by side in this one
/// binary, each sandbox sharing the machine; a test that measures it
/// (timing, CPU shares of other processes, its own hogs) has it alone,
/// with no other test's sandbox beside it.
///
/// A read-write lock in effect, but not `std::sync::RwLock`: tests hold
/// several sandboxes at once, and a second read of std's lock may wait
/// for a writer that waits for the first (a deadlock). Here a thread that
/// holds a turn never waits for another; a thread that holds none waits
/// while a test has the machine alone or waits for it, so those get it.
struct Machine {
    shared: usize,
    alone: bool,
    waiting_alone: usize,
}

static MACHINE: Mutex<Machine> = Mutex::new(Machine {
    shared: 0,
    alone: false,
    waiting_alone: 0,
});
static MACHINE_CHANGED: Condvar = Condvar::new();

thread_local! {
    /// Turns (sandboxes) this thread holds; libtest runs each test on a
    /// thread of its own.
    static TURNS_HERE: Cell<usize> = const { Cell::new(0) };
}

/// The machine's state. A test that panicked never holds this mutex (it
/// is held only below, where nothing panics), so poisoning says nothing.
fn machine() -> MutexGuard<'static, Machine> {
    MACHINE.lock().unwrap_or_else(|e| e.into_inner())
}

fn wait_for_machine(m: MutexGuard<'static, Machine>) -> MutexGuard<'static, Machine> {
    MACHINE_CHANGED.wait(m).unwrap_or_else(|e| e.into_inner())
}

/// A sandbox's share of the machine, or the whole of it; given back on
/// drop, also when the test panics. Not `Send` (a `MutexGuard` marker):
/// it counts as its own thread's turn, so it ends on that thread.
struct Turn {
    alone: bool,
    _here: PhantomData<MutexGuard<'static, ()>>,
}

impl Turn {
    fn take(alone: bool) -> Turn {
        let held = TURNS_HERE.with(Cell::get);
        assert!(
            !(alone && held > 0),
            "Sandbox::alone() must be the test's first sandbox: it waits for every other one to go"
        );
        let mut m = machine();
        if alone {
            m.waiting_alone += 1;
            while m.alone || m.shared > 0 {
                m = wait_for_machine(m);
            }
            m.waiting_alone -= 1;
            m.alone = true;
        } else {
            // Another sandbox of this test already holds a turn (a share,
            // or the machine alone): waiting would wait for itself.
            while held == 0 && (m.alone || m.waiting_alone > 0) {
                m = wait_for_machine(m);
            }
            m.shared += 1;
        }
        TURNS_HERE.with(|t| t.set(held + 1));
        Turn {
            alone,
            _here: PhantomData,
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut m = machine();
        if self.alone {
            m.alone = false;
        } else {
            m.shared -= 1;
        }
        drop(m);
        TURNS_HERE.with(|t| t.set(t.get().saturating_sub(1)));
        MACHINE_CHANGED.notify_all();
    }
}

/// The turn of a test that attaches loop devices (the raw-device tests of
/// `disk`, the block-device `--db` test of `reliability`): one at a time,
/// as `losetup --find` in one test can hold a device open just as another
/// detaches it, and a new `/dev/loopN` of one is a leftover to another. A
/// lock of its own rather than [`Sandbox::alone`]: only these tests get
/// in each other's way, and none of them measures the machine.
pub fn loop_devices() -> MutexGuard<'static, ()> {
    static LOOP_DEVICES: Mutex<()> = Mutex::new(());
    LOOP_DEVICES.lock().unwrap_or_else(|e| e.into_inner())
}

/// A tmpfs mounted for a test, unmounted when dropped (also when the test
/// fails).
pub struct Tmpfs(PathBuf);

impl Tmpfs {
    /// A tmpfs with mount `options` (`size=8m`, `ro,size=1m`) at `dir`,
    /// made if need be; `None` where it cannot be mounted (not root),
    /// after the skip-or-fail rule.
    pub fn mount(dir: &Path, options: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).ok()?;
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        sysgauge_testkit::require(
            "mounting a tmpfs (needs root)",
            mounted,
            "run the tests as root",
        )
        .then(|| Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    /// A sandbox sharing the machine with the other tests' sandboxes.
    pub fn new() -> Sandbox {
        Sandbox::with(Turn::take(false))
    }

    /// A sandbox with the machine to itself: it waits until no other
    /// test holds a sandbox, and none starts one until it is dropped. For
    /// tests that measure the machine (timing, CPU shares of other
    /// processes, CPU seconds of this process's children) or fill it
    /// (hogs on every CPU). Take it first: a test that already holds a
    /// sandbox panics here rather than wait for itself; sandboxes it
    /// makes after this one share its turn.
    pub fn alone() -> Sandbox {
        Sandbox::with(Turn::take(true))
    }

    fn with(turn: Turn) -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}")),
            _turn: turn,
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("results.db")
    }

    /// A new directory `name` in the sandbox.
    pub fn subdir(&self, name: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::create_dir(&p).unwrap_or_else(|e| panic!("mkdir {}: {e}", p.display()));
        p
    }

    pub fn scratch(&self) -> PathBuf {
        let p = self.dir.path().join("scratch");
        std::fs::create_dir_all(&p).unwrap_or_else(|e| panic!("mkdir: {e}"));
        p
    }

    /// The binary with HOME and XDG_DATA_HOME pointing into the sandbox, so
    /// no test ever touches the user's real database, and with
    /// SYSGAUGE_NO_WAIT=1: tests run side by side and never wait for a
    /// quiet machine (the wait's own tests remove it).
    pub fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("sysgauge").unwrap_or_else(|e| panic!("binary: {e}"));
        c.env("HOME", self.dir.path())
            .env("XDG_DATA_HOME", self.dir.path().join("xdg"))
            .env_remove("SYSGAUGE_DB")
            .env("SYSGAUGE_NO_WAIT", "1")
            .current_dir(self.dir.path())
            .timeout(std::time::Duration::from_secs(300));
        c
    }

    /// The binary as a plain `std::process::Command` (for tests that
    /// signal or watch the running process), with the same sandboxed
    /// environment as [`Sandbox::cmd`].
    pub fn std_cmd(&self) -> std::process::Command {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("sysgauge"));
        c.env("HOME", self.dir.path())
            .env("XDG_DATA_HOME", self.dir.path().join("xdg"))
            .env_remove("SYSGAUGE_DB")
            .env("SYSGAUGE_NO_WAIT", "1")
            .current_dir(self.dir.path());
        c
    }

    /// A standard-profile `disk` run on a 64 MiB file in `target`, stopped
    /// by `interrupt` once its second case is under way.
    pub fn stopped_disk_run(
        &self,
        interrupt: sysgauge_testkit::Interrupt,
        target: &Path,
    ) -> sysgauge_testkit::Interrupted {
        interrupt.run(
            self.std_cmd()
                .args(["disk", "--profile", "standard", "--size", "64MiB", "--db"])
                .arg(self.db())
                .arg("--path")
                .arg(target),
            // Let the second case get under way, then stop it.
            |_, _| std::thread::sleep(std::time::Duration::from_millis(300)),
        )
    }

    /// `sysgauge COMMAND --db DB` on the sandbox database: every command
    /// that reads or writes results.
    pub fn on_db(&self, command: &str) -> Command {
        self.on(command, self.db())
    }

    /// `sysgauge COMMAND --db DB` on another database (a path or a URL).
    pub fn on(&self, command: &str, db: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = self.cmd();
        c.arg(command).arg("--db").arg(db);
        c
    }

    /// Run `number` read back from the sandbox database (`results export
    /// N --format json`), deserialised strictly.
    pub fn stored_run(&self, number: u32) -> RunRecord {
        let out = self
            .on_db("results")
            .args(["export", &number.to_string(), "--format", "json"])
            .succeeds();
        strict_record(&out.stdout)
    }

    /// The record of a tiny `run --only ONLY` printed to stdout (`--json -`)
    /// and stored nowhere (`--no-store`), with the whole output.
    pub fn tiny_unstored_run(&self, only: &str) -> (RunRecord, std::process::Output) {
        let out = self
            .tiny_run()
            .args(["--only", only, "--json", "-", "--no-store"])
            .succeeds();
        (strict_record(&out.stdout), out)
    }

    /// A measuring command (`run`, `mem`, `cpu`...) with the tiny profile
    /// and three repetitions, on the sandbox database and scratch directory.
    pub fn tiny(&self, command: &str) -> Command {
        self.tiny_on(command, self.db())
    }

    /// [`Sandbox::tiny`] storing into another database (a path or a URL).
    pub fn tiny_on(&self, command: &str, db: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = self.on(command, db);
        c.args(["--profile", "tiny", "--repetitions", "3"])
            .arg("--scratch-dir")
            .arg(self.scratch());
        c
    }

    /// `run` with the tiny profile on the sandbox database.
    pub fn tiny_run(&self) -> Command {
        self.tiny("run")
    }

    /// `results list --json` of the sandbox database, parsed.
    pub fn listed_runs(&self) -> serde_json::Value {
        self.listed_runs_on(self.db())
    }

    /// `results list --json` of another database (a path or a URL), which
    /// must succeed, parsed.
    pub fn listed_runs_on(&self, db: impl AsRef<std::ffi::OsStr>) -> serde_json::Value {
        let out = self.on("results", db).args(["list", "--json"]).succeeds();
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(&out.stdout)))
    }

    /// A tiny `run --only ONLY`, stored, and its record as `--json FILE`
    /// wrote it.
    pub fn tiny_run_record(&self, only: &str) -> RunRecord {
        let json = self.path().join("run.json");
        self.tiny_run()
            .args(["--only", only])
            .arg("--json")
            .arg(&json)
            .succeeds();
        read_record(&json)
    }
}

/// A run record from JSON bytes; every struct in it denies unknown fields.
pub fn strict_record(bytes: &[u8]) -> RunRecord {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(bytes)))
}

/// A run record from a JSON file written with `--json FILE`.
pub fn read_record(path: &Path) -> RunRecord {
    strict_record(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// The record `--json FILE` wrote for a `command` run that completed.
pub fn completed_record(path: &Path, command: &str) -> RunRecord {
    let run = read_record(path);
    assert_eq!(run.command, command);
    assert_eq!(run.status, sysgauge_core::RunStatus::Complete);
    run
}

pub fn stdout_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

pub fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// Waits up to `timeout` for `child` to print a line containing `needle`;
/// fails, showing what it printed, when it does not.
pub fn await_line(child: &mut sysgauge_testkit::ChildGuard, needle: &str, timeout: Duration) {
    assert!(
        child.wait_for_line(needle, timeout),
        "no {needle:?} within {timeout:?}:\n{}",
        child.output()
    );
}

/// Ctrl-C (SIGINT) to `child`: it must exit 130 within `timeout`.
pub fn ctrl_c_exits_130(child: &mut sysgauge_testkit::ChildGuard, timeout: Duration) {
    child.interrupt();
    let status = child.wait_exit(timeout);
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(130),
        "{}",
        child.output()
    );
}

/// Running the binary and checking how it ended, in one step, so each test
/// states only what it expects and a failure always shows the binary's stderr.
pub trait Outcome {
    /// Runs to the end and asserts exit status 0.
    fn succeeds(&mut self) -> std::process::Output;
    /// Runs to the end and asserts the given exit code.
    fn exits_with(&mut self, code: i32) -> std::process::Output;
    /// Runs to the end and asserts a usage error: exit code 2, `expect` in
    /// stderr, and no panic. Failures name the command line.
    fn usage_error(&mut self, expect: &str) -> std::process::Output;
}

fn succeeded(out: std::io::Result<std::process::Output>) -> std::process::Output {
    let out = out.unwrap_or_else(|e| panic!("spawn: {e}"));
    assert!(out.status.success(), "{}", stderr_of(&out));
    out
}

fn exited_with(out: std::io::Result<std::process::Output>, code: i32) -> std::process::Output {
    let out = out.unwrap_or_else(|e| panic!("spawn: {e}"));
    assert_eq!(out.status.code(), Some(code), "{}", stderr_of(&out));
    out
}

fn was_usage_error(
    out: std::io::Result<std::process::Output>,
    what: &str,
    expect: &str,
) -> std::process::Output {
    let out = out.unwrap_or_else(|e| panic!("spawn: {e}"));
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(
        err.contains(expect),
        "{what}: expected {expect:?} in: {err}"
    );
    assert!(!err.contains("panicked"), "{what}: {err}");
    out
}

/// The binary under test (assert_cmd) and the system tools some tests set up
/// with (std) end the same way.
macro_rules! impl_outcome {
    ($($command:ty),*) => {$(
        impl Outcome for $command {
            fn succeeds(&mut self) -> std::process::Output {
                succeeded(self.output())
            }

            fn exits_with(&mut self, code: i32) -> std::process::Output {
                exited_with(self.output(), code)
            }

            fn usage_error(&mut self, expect: &str) -> std::process::Output {
                let what = format!("{self:?}");
                was_usage_error(self.output(), &what, expect)
            }
        }
    )*};
}

impl_outcome!(Command, std::process::Command);

/// The one run's status in the database and how many results it kept.
pub fn run_status_and_results(conn: &rusqlite::Connection) -> (String, i64) {
    conn.query_row(
        "SELECT status, (SELECT count(*) FROM results) FROM runs",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap_or_else(|e| panic!("reading the run back: {e}"))
}

/// CPU seconds (user and system) of this process's waited-for children.
pub fn children_cpu() -> f64 {
    // SAFETY: getrusage fills the struct it is given and nothing else.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) },
        0
    );
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// Busy CPU seconds of the whole machine so far (every CPU, from
/// /proc/stat): the difference of two readings is what everything on it
/// used meanwhile.
pub fn machine_busy() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_else(|e| panic!("/proc/stat: {e}"));
    let t = sysgauge_host::telemetry::parse_cpu_times(&stat)
        .unwrap_or_else(|| panic!("no cpu line in /proc/stat"));
    (t.user + t.nice + t.system + t.irq + t.softirq) as f64 / sysgauge_host::procs::clock_ticks()
}

/// The binary under test, for command lines that start it through another
/// program (`ip netns exec`, a shell).
pub fn sysgauge_bin() -> String {
    assert_cmd::cargo::cargo_bin("sysgauge")
        .to_string_lossy()
        .into_owned()
}

/// `ip netns exec NS PROGRAM ARGS` (ip execs the program: same pid), with
/// HOME outside the user's and no wait for a quiet machine.
pub fn in_ns(ns: &str, program: &str, args: &[&str]) -> std::process::Command {
    let mut c = std::process::Command::new("ip");
    c.args(["netns", "exec", ns, program]).args(args);
    c.env("HOME", std::env::temp_dir())
        .env("SYSGAUGE_NO_WAIT", "1")
        .stdin(std::process::Stdio::null());
    c
}

/// Runs `cmd` to its end with its output captured; past `limit` it is
/// killed and the test fails, naming it.
pub fn run_bounded(
    mut cmd: std::process::Command,
    limit: std::time::Duration,
) -> std::process::Output {
    use std::process::Stdio;
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap_or_else(|e| panic!("waiting for {cmd:?}: {e}")),
        Err(_) => {
            // SAFETY: kill has no memory-safety preconditions; the pid is our
            // own child, which has not been reaped (wait has not returned).
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
            panic!("{cmd:?} did not finish within {limit:?}");
        }
    }
}

/// Headless Chromium, to load a page as a reader's browser would: a report
/// file, or a page of a `sysgauge serve` (in a network namespace when the
/// site listens in one).
pub struct Browser {
    program: PathBuf,
    profile: PathBuf,
    home: PathBuf,
    netns: Option<String>,
}

impl Browser {
    /// Chromium, or None when it is not installed (the caller returns;
    /// under `SYSGAUGE_REQUIRE_ALL=1` the test fails instead).
    pub fn find(sb: &Sandbox) -> Option<Browser> {
        let found = ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .find_map(|p| sysgauge_core::bench::find_program(p));
        let program = sysgauge_testkit::require_some(
            "chromium is not installed (the browser part of the report and site tests)",
            found,
            "apt-get install chromium",
        )?;
        Some(Browser {
            program,
            profile: sb.path().join("chromium-profile"),
            home: sb.path().to_path_buf(),
            netns: None,
        })
    }

    /// The same browser inside network namespace `ns`.
    pub fn in_netns(mut self, ns: &str) -> Browser {
        self.netns = Some(ns.to_string());
        self
    }

    /// Load `target` (a URL) with `extra` options, the console logged to
    /// stderr. A site's certificate made for a test is not checked.
    fn load(&self, target: &str, extra: &[&str]) -> std::process::Output {
        let mut c = match &self.netns {
            Some(ns) => {
                let mut c = std::process::Command::new("ip");
                c.args(["netns", "exec", ns]).arg(&self.program);
                c
            }
            None => std::process::Command::new(&self.program),
        };
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--ignore-certificate-errors",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", self.profile.display()))
        .args(extra)
        .arg(target)
        .env("HOME", &self.home);
        run_bounded(c, std::time::Duration::from_secs(120))
    }

    /// The DOM of `page` (a file) after it has loaded, and what it wrote to
    /// the console. A report has no script, so every console line is a
    /// defect: an SVG attribute the browser could not parse, a resource it
    /// tried to fetch.
    pub fn dom_and_console(&self, page: &Path) -> (String, Vec<String>) {
        self.url_dom_and_console(&format!("file://{}", page.display()))
    }

    /// [`Browser::dom_and_console`] of a URL.
    pub fn url_dom_and_console(&self, url: &str) -> (String, Vec<String>) {
        let out = self.load(url, &["--dump-dom"]);
        assert!(out.status.success(), "chromium failed: {}", stderr_of(&out));
        let console = stderr_of(&out)
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(str::to_string)
            .collect();
        (stdout_of(&out), console)
    }

    /// The DOM of `page` (a file) after it has loaded; it must write
    /// nothing to the console.
    pub fn silent_dom(&self, page: &Path) -> String {
        self.url_silent_dom(&format!("file://{}", page.display()))
    }

    /// [`Browser::silent_dom`] of a URL.
    pub fn url_silent_dom(&self, url: &str) -> String {
        let (dom, console) = self.url_dom_and_console(url);
        assert_eq!(console, Vec::<String>::new(), "console messages");
        dom
    }

    /// A screenshot of `page` (a file): it really paints (not an empty or
    /// tiny image).
    pub fn screenshot(&self, page: &Path, file: &Path) {
        self.url_screenshot(&format!("file://{}", page.display()), file)
    }

    /// [`Browser::screenshot`] of a URL.
    pub fn url_screenshot(&self, url: &str, file: &Path) {
        let out = self.load(
            url,
            &[
                &format!("--screenshot={}", file.display()),
                "--window-size=1280,2400",
                "--hide-scrollbars",
            ],
        );
        assert!(
            out.status.success(),
            "chromium screenshot failed: {}",
            stderr_of(&out)
        );
        let png = std::fs::read(file).unwrap_or_else(|e| panic!("no screenshot: {e}"));
        assert_eq!(&png[1..4], b"PNG");
        assert!(
            png.len() > 20_000,
            "screenshot is suspiciously small ({} bytes)",
            png.len()
        );
    }

    /// The console check can fail: a page with an SVG attribute the
    /// browser rejects is caught.
    pub fn assert_console_is_read(&self, dir: &Path) {
        let probe = dir.join("probe.html");
        std::fs::write(
            &probe,
            "<!DOCTYPE html>\n<html><body><svg width=\"20\" height=\"20\"><rect width=\"-5\" height=\"5\"/></svg></body></html>\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let (_, console) = self.dom_and_console(&probe);
        assert!(
            console
                .iter()
                .any(|l| l.contains("A negative value is not valid")),
            "the browser's console is not read: {console:?}"
        );
    }
}
