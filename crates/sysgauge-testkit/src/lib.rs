//! Helpers shared by sysgauge's tests, and only by its tests.
//!
//! The test suites of several crates used to carry their own copies of the
//! same helpers; they live here once instead: the rule for a test whose
//! system component is missing (skip with a note, or fail under
//! `SYSGAUGE_REQUIRE_ALL=1` as CI sets), the harness that stops the real
//! `sysgauge` binary with a signal after its first cases are done, child
//! processes killed on drop (a server, the reference `2ping`), what a test
//! asks of the machine (programs, root, free ports, OpenSSH and the private
//! directory its private sshd starts from, processes by command line), the
//! proof that a refused action left a file as it was, two
//! network namespaces joined by a veth link, and a bridge LAN of host
//! namespaces (`netns::Hub`) for fleet tests, a real PostgreSQL server in a
//! temporary directory (`PgServer`), and a certificate made by openssl for
//! an HTTPS site. This crate is a dev-dependency only (`publish = false`);
//! nothing that ships depends on it.

#![forbid(unsafe_code)]

mod certificate;
mod child;
pub mod netns;
mod postgres;
mod system;

pub use certificate::self_signed_certificate;
pub use child::{reference_2ping_listener, ChildGuard};
pub use postgres::{postgres_bin_dir, require_postgres, PgServer};
pub use system::{
    free_udp_port, is_root, mkfifo, on_path, output_of_success, private_tempdir,
    processes_mentioning, require_openssh, run_checked, Process,
};

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The environment variable the cross-target test runner
/// (scripts/qemu-runner.sh) sets to the emulator's name.
pub const EMULATOR: &str = "SYSGAUGE_EMULATOR";

/// True, with a note on stderr, when the test runs under a user-mode
/// emulator (qemu-user) that cannot give what it checks: `limit` says
/// what the emulator does differently from the kernel. Only for facts of
/// the emulator, never for a missing component (see [`require_all`]).
pub fn emulator_cannot(limit: &str) -> bool {
    match std::env::var(EMULATOR) {
        Ok(name) if !name.is_empty() => {
            eprintln!("skipped under {name}: {limit}");
            true
        }
        _ => false,
    }
}

/// The environment variable that turns a skipped test into a failure.
pub const REQUIRE_ALL: &str = "SYSGAUGE_REQUIRE_ALL";

/// True when `SYSGAUGE_REQUIRE_ALL=1`: every test must really run.
pub fn require_all() -> bool {
    std::env::var(REQUIRE_ALL).as_deref() == Ok("1")
}

/// The rule for a test that needs a system component (`what`).
///
/// Returns true when it is `available`. Otherwise, under
/// `SYSGAUGE_REQUIRE_ALL=1`, the test fails (panics) naming `hint` (how to
/// get the component); without it, a `SKIPPED` line goes to the real stderr
/// (libtest captures `eprintln!` of passing tests, and a skip must be
/// visible in the CI log) and false is returned, so the test returns early.
#[track_caller]
pub fn require(what: &str, available: bool, hint: &str) -> bool {
    if available {
        return true;
    }
    if require_all() {
        panic!("{what} ({REQUIRE_ALL}=1: {hint})");
    }
    let _ = writeln!(std::io::stderr(), "SKIPPED {what}");
    false
}

/// [`require`] for a component found as a value (a program's path, a
/// directory): returns it, or None when it is missing and the test is
/// skipped.
#[track_caller]
pub fn require_some<T>(what: &str, found: Option<T>, hint: &str) -> Option<T> {
    require(what, found.is_some(), hint);
    found
}

/// Runs `act` and asserts that it left `file` (a regular file, or none: a
/// FIFO would block the reads) byte for byte as it was: how a test proves
/// that a refused command or open wrote nothing. Returns what `act`
/// returned.
#[track_caller]
pub fn leaves_untouched<T>(file: &Path, act: impl FnOnce() -> T) -> T {
    let before = std::fs::read(file).ok();
    let out = act();
    assert!(
        std::fs::read(file).ok() == before,
        "{} was modified",
        file.display()
    );
    out
}

/// Two tests of one scenario, on 127.0.0.1 and on ::1, each of which runs
/// only when `needs(its name)` (a function applying [`require`]) says the
/// components it needs are there:
/// `loopback_tests!(needs => scenario: name_ipv4, name_ipv6);`
#[macro_export]
macro_rules! loopback_tests {
    ($needs:path => $scenario:path: $v4:ident, $v6:ident) => {
        #[test]
        fn $v4() {
            if $needs(stringify!($v4)) {
                $scenario("127.0.0.1");
            }
        }

        #[test]
        fn $v6() {
            if $needs(stringify!($v6)) {
                $scenario("::1");
            }
        }
    };
}

/// What an interrupted run left: see [`Interrupt::run`].
#[derive(Debug)]
pub struct Interrupted {
    /// Whether the awaited progress line was seen before the timeout.
    pub started: bool,
    /// How the process ended.
    pub status: ExitStatus,
    /// Everything the process wrote to stderr.
    pub log: String,
    /// Time from SIGINT to exit.
    pub stopped_after: Duration,
}

impl Interrupted {
    /// Asserts that the awaited progress line came before the signal and
    /// that the process then exited with `code` (130 after SIGINT, 143
    /// after SIGTERM, 129 after SIGHUP).
    #[track_caller]
    pub fn assert_started_then_exited(&self, code: i32) {
        assert!(
            self.started,
            "the awaited progress line did not come in time:\n{}",
            self.log
        );
        assert_eq!(self.status.code(), Some(code), "{}", self.log);
    }
}

/// How a test stops the real `sysgauge` binary part-way: which signal, once
/// which progress line has appeared, and how long each wait may take.
#[derive(Debug, Clone)]
pub struct Interrupt {
    signal: i32,
    marker: String,
    wait: Duration,
    stop_within: Duration,
}

impl Interrupt {
    /// SIGINT once a stderr line starts with `marker` (e.g. `"[1/"`: the
    /// first case is done), waiting up to 120 s for that line and 60 s for
    /// the exit after the signal.
    pub fn after(marker: &str) -> Interrupt {
        Interrupt {
            signal: rustix::process::Signal::INT.as_raw(),
            marker: marker.to_string(),
            wait: Duration::from_secs(120),
            stop_within: Duration::from_secs(60),
        }
    }

    /// Another signal than SIGINT (SIGTERM, SIGHUP, SIGKILL).
    pub fn with_signal(mut self, signal: i32) -> Interrupt {
        self.signal = signal;
        self
    }

    /// How long to wait for the marker line.
    pub fn waiting_up_to(mut self, wait: Duration) -> Interrupt {
        self.wait = wait;
        self
    }

    /// How long the process may take to exit after the signal.
    pub fn exiting_within(mut self, stop_within: Duration) -> Interrupt {
        self.stop_within = stop_within;
        self
    }

    /// Runs `cmd` (the real `sysgauge` binary with its arguments), waits for
    /// the marker line, calls `before_signal` with the running child and
    /// whether the marker was seen, sends the signal, and waits for the exit
    /// (killing the process and panicking if it does not stop in time).
    ///
    /// stdout is discarded and stderr is collected; the caller asserts on
    /// the result (typically `started`, the exit code and what was kept).
    pub fn run(&self, cmd: &mut Command, before_signal: impl FnOnce(&Child, bool)) -> Interrupted {
        signal_after(
            cmd,
            self.signal,
            &self.marker,
            self.wait,
            self.stop_within,
            before_signal,
        )
    }
}

fn signal_after(
    cmd: &mut Command,
    signal: i32,
    marker: &str,
    wait: Duration,
    stop_within: Duration,
    before_signal: impl FnOnce(&Child, bool),
) -> Interrupted {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
    let (tx, rx) = mpsc::channel();
    let marker = marker.to_string();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.starts_with(&marker) {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let started = rx.recv_timeout(wait).is_ok();
    before_signal(&child, started);
    // The child has not been reaped yet, so its pid cannot have been reused.
    let pid = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .unwrap_or_else(|| panic!("pid {} out of range", child.id()));
    let sig = rustix::process::Signal::from_named_raw(signal)
        .unwrap_or_else(|| panic!("{signal} is not a signal"));
    let _ = rustix::process::kill_process(pid, sig);
    let interrupted_at = Instant::now();
    let status = loop {
        if let Some(s) = child
            .try_wait()
            .unwrap_or_else(|e| panic!("waiting for sysgauge: {e}"))
        {
            break s;
        }
        if interrupted_at.elapsed() > stop_within {
            let _ = child.kill();
            let _ = child.wait();
            panic!("sysgauge did not stop within {stop_within:?} of signal {signal}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stopped_after = interrupted_at.elapsed();
    let log = reader.join().unwrap_or_default();
    Interrupted {
        started,
        status,
        log,
        stopped_after,
    }
}
