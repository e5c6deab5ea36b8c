//! Running one external program the way the sweep times it: spawned
//! directly (no shell: a shell would add its own start-up to every run),
//! stdin from /dev/null, stdout and stderr to /dev/null or to a file, and
//! reaped with wait4(2) so that the child's own user and system CPU time
//! come back with its exit status.
//!
//! Cancellation. A child may run for seconds (one pass over a large input),
//! so waiting for it cannot block Ctrl-C. A watcher thread polls the cancel
//! token while the child runs and kills it with SIGKILL. The child leads a
//! process group of its own, and the whole group is killed: a template is
//! often a shell running a pipeline or a script (`sh -c 'sleep 6; cat
//! {input}'`), whose own children would otherwise outlive the sweep. (The
//! group is set by posix_spawn in the child, one system call among the
//! hundreds of an exec; the terminal's Ctrl-C then reaches sysgauge only,
//! which kills the group.) The waiting thread first waits with `WNOWAIT`
//! (the child stays a zombie, so its pid, which is also the group's id,
//! cannot be reused), then clears the pid under the lock the watcher kills
//! under, and only then reaps it: the watcher can never signal a pid or a
//! group that was reaped and perhaps handed to another process. The watcher wakes a few dozen
//! times a second, which costs nothing measurable; the waiting thread wakes
//! the moment the child exits, so the timing is not quantised by polling.

use rustix::process::{kill_process_group, waitpid, Pid, Signal, WaitOptions};
use std::ffi::OsString;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Mutex;
use std::time::Duration;
use sysgauge_core::{BenchError, CancelToken, IoContext};

/// How often the watcher looks at the cancel token while a child runs.
const WATCH_INTERVAL: Duration = Duration::from_millis(20);

/// A program and its arguments, run without a shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// Resolved path of the program.
    pub program: PathBuf,
    pub args: Vec<OsString>,
}

impl Invocation {
    /// A short name for messages (`sha256sum`).
    pub fn name(&self) -> String {
        self.program
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.program.display().to_string())
    }
}

/// Where a child's stdout or stderr goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// /dev/null.
    Null,
    /// A file, created or truncated before each run (like a shell's `>`).
    File(PathBuf),
}

impl Output {
    fn stdio(&self) -> Result<Stdio, BenchError> {
        match self {
            Output::Null => Ok(Stdio::null()),
            Output::File(p) => File::create(p)
                .map(Stdio::from)
                .io_context(|| format!("cannot create the output file {}", p.display())),
        }
    }
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitKind {
    Code(i32),
    Signal(i32),
}

/// What one run of a child cost and how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildOutcome {
    pub exit: ExitKind,
    /// The child's user CPU time (from its rusage).
    pub user: Duration,
    /// The child's system CPU time.
    pub sys: Duration,
}

impl ChildOutcome {
    pub fn success(&self) -> bool {
        self.exit == ExitKind::Code(0)
    }

    /// `Ok` when the child exited with status 0; `Cancelled` when it was
    /// killed because the user pressed Ctrl-C; else a failure naming it.
    pub fn check(&self, name: &str, cancel: &CancelToken) -> Result<(), BenchError> {
        if self.success() {
            return Ok(());
        }
        // After Ctrl-C the watcher kills the child (and its process
        // group): its death is then the user's doing, not a failure.
        cancel.check()?;
        Err(BenchError::failed(match self.exit {
            ExitKind::Code(c) => format!("{name} exited with status {c}"),
            ExitKind::Signal(s) => format!("{name} was killed by signal {s}"),
        }))
    }
}

/// Starts children and waits for them, killing the running one (with its
/// process group) on Ctrl-C.
/// Made by `with_launcher`, which owns the watcher thread.
pub struct Launcher<'a> {
    current: &'a Mutex<Option<libc::pid_t>>,
    cancel: &'a CancelToken,
}

/// Run `f` with a launcher whose watcher thread lives as long as `f`.
pub fn with_launcher<R>(cancel: &CancelToken, f: impl FnOnce(&Launcher<'_>) -> R) -> R {
    let current: Mutex<Option<libc::pid_t>> = Mutex::new(None);
    std::thread::scope(|s| {
        // Dropping the sender (also when `f` panics) ends the watcher, so
        // the scope can always join it.
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let watched = &current;
        s.spawn(move || {
            while let Err(RecvTimeoutError::Timeout) = stop_rx.recv_timeout(WATCH_INTERVAL) {
                if !cancel.is_cancelled() {
                    continue;
                }
                if let Ok(guard) = watched.lock() {
                    // `pid` is our unreaped child (the waiter clears it
                    // under this lock before reaping), so it and the group
                    // it leads name no other process.
                    if let Some(pid) = guard.and_then(Pid::from_raw) {
                        let _ = kill_process_group(pid, Signal::KILL);
                    }
                }
            }
        });
        let launcher = Launcher {
            current: &current,
            cancel,
        };
        let r = f(&launcher);
        drop(stop_tx);
        r
    })
}

impl Launcher<'_> {
    /// Start `inv`, wait for it, and return how it ended and its CPU times. Does not judge the exit status
    /// (see `ChildOutcome::check`).
    pub fn run(
        &self,
        inv: &Invocation,
        stdout: &Output,
        stderr: &Output,
    ) -> Result<ChildOutcome, BenchError> {
        self.cancel.check()?;
        let mut cmd = Command::new(&inv.program);
        cmd.args(&inv.args)
            .stdin(Stdio::null())
            .stdout(stdout.stdio()?)
            .stderr(stderr.stdio()?)
            // Its own process group, killed as one (see the module doc).
            .process_group(0);
        let child = cmd
            .spawn()
            .io_context(|| format!("cannot start {}", inv.program.display()))?;
        let pid = libc::pid_t::try_from(child.id())
            .map_err(|_| BenchError::failed("child pid out of range"))?;
        // std's `Child` has no Drop behaviour; from here the reaper owns the
        // child and kills and reaps it if anything below returns early.
        let mut reaper = Reaper {
            pid,
            current: self.current,
            reaped: false,
        };
        if let Ok(mut g) = self.current.lock() {
            *g = Some(pid);
        }
        wait_exited_nowait(pid).io_context(|| format!("waiting for {}", inv.name()))?;
        if let Ok(mut g) = self.current.lock() {
            *g = None;
        }
        reaper.reap()
    }
}

/// Block until `pid` has exited, leaving it unreaped (a zombie).
fn wait_exited_nowait(pid: libc::pid_t) -> std::io::Result<()> {
    let id = libc::id_t::try_from(pid).map_err(|_| std::io::Error::other("negative pid"))?;
    loop {
        // SAFETY: siginfo_t is plain data; zeroed is a valid value for it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable siginfo_t for the call.
        let r = unsafe { libc::waitid(libc::P_PID, id, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Owns a started child until it is reaped; kills it (with its process
/// group) and reaps it on drop.
struct Reaper<'a> {
    pid: libc::pid_t,
    current: &'a Mutex<Option<libc::pid_t>>,
    reaped: bool,
}

impl Reaper<'_> {
    /// wait4(2): the exit status and the child's rusage.
    fn reap(&mut self) -> Result<ChildOutcome, BenchError> {
        let mut status: libc::c_int = 0;
        // SAFETY: rusage is plain data; zeroed is a valid value for it.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: `status` and `usage` are valid for writes; `pid` is
            // our own child, not yet reaped.
            let r = unsafe { libc::wait4(self.pid, &mut status, 0, &mut usage) };
            if r == self.pid {
                break;
            }
            let e = std::io::Error::last_os_error();
            if r < 0 && e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(BenchError::io("wait4", e));
        }
        self.reaped = true;
        let exit = if libc::WIFEXITED(status) {
            ExitKind::Code(libc::WEXITSTATUS(status))
        } else if libc::WIFSIGNALED(status) {
            ExitKind::Signal(libc::WTERMSIG(status))
        } else {
            ExitKind::Code(-1)
        };
        Ok(ChildOutcome {
            exit,
            user: timeval(usage.ru_utime),
            sys: timeval(usage.ru_stime),
        })
    }
}

impl Drop for Reaper<'_> {
    fn drop(&mut self) {
        if self.reaped {
            return;
        }
        if let Ok(mut g) = self.current.lock() {
            *g = None;
        }
        // The child is ours and not yet reaped, so `pid` still names it
        // and the group it leads.
        let Some(pid) = Pid::from_raw(self.pid) else {
            return;
        };
        let _ = kill_process_group(pid, Signal::KILL);
        while let Err(rustix::io::Errno::INTR) = waitpid(Some(pid), WaitOptions::empty()) {}
    }
}

fn timeval(tv: libc::timeval) -> Duration {
    let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
    let micros = u32::try_from(tv.tv_usec).unwrap_or(0).min(999_999);
    Duration::new(secs, micros * 1000)
}

/// Read a small text file a child wrote (its captured output).
pub fn read_captured(path: &Path) -> Result<String, BenchError> {
    let bytes = std::fs::read(path).io_context(|| format!("cannot read {}", path.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn inv(program: &str, args: &[&str]) -> Invocation {
        Invocation {
            program: sysgauge_core::bench::find_program(program)
                .unwrap_or_else(|| panic!("{program} not on PATH")),
            args: args.iter().map(OsString::from).collect(),
        }
    }

    #[test]
    fn exit_status_and_cpu_time() {
        let cancel = CancelToken::new();
        with_launcher(&cancel, |l| {
            let ok = l
                .run(&inv("true", &[]), &Output::Null, &Output::Null)
                .unwrap();
            assert!(ok.success());
            assert!(ok.check("true", &cancel).is_ok());
            let bad = l
                .run(&inv("false", &[]), &Output::Null, &Output::Null)
                .unwrap();
            assert_eq!(bad.exit, ExitKind::Code(1));
            let msg = bad
                .check("false", &cancel)
                .map_err(|e| e.to_string())
                .err()
                .unwrap_or_default();
            assert!(msg.contains("false exited with status 1"), "{msg}");
            // A child that burns CPU reports user time from its rusage.
            let busy = l
                .run(
                    &inv(
                        "sh",
                        &["-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"],
                    ),
                    &Output::Null,
                    &Output::Null,
                )
                .unwrap();
            assert!(busy.success());
            assert!(busy.user + busy.sys > Duration::ZERO, "{busy:?}");
        });
    }

    #[test]
    fn output_to_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.txt");
        let cancel = CancelToken::new();
        with_launcher(&cancel, |l| {
            for _ in 0..2 {
                let o = l
                    .run(
                        &inv("echo", &["hello"]),
                        &Output::File(out.clone()),
                        &Output::Null,
                    )
                    .unwrap();
                assert!(o.success());
            }
        });
        // Truncated before each run, like `>`.
        assert_eq!(read_captured(&out).unwrap_or_default(), "hello\n");
    }

    #[test]
    fn cancel_kills_a_running_child() {
        let cancel = CancelToken::new();
        let c2 = cancel.clone();
        let t0 = Instant::now();
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            c2.cancel();
        });
        let r = with_launcher(&cancel, |l| {
            l.run(&inv("sleep", &["30"]), &Output::Null, &Output::Null)
        });
        let _ = canceller.join();
        let outcome = r.unwrap();
        assert_eq!(outcome.exit, ExitKind::Signal(libc::SIGKILL));
        assert!(matches!(
            outcome.check("sleep", &cancel),
            Err(BenchError::Cancelled)
        ));
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
        // Once cancelled, nothing new starts.
        let again = with_launcher(&cancel, |l| {
            l.run(&inv("true", &[]), &Output::Null, &Output::Null)
        });
        assert!(matches!(again, Err(BenchError::Cancelled)));
    }

    /// A program's own children (a shell's) die with it on cancel: the
    /// whole process group is killed, not just the direct child.
    #[test]
    fn cancel_kills_the_childs_children_too() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("sleep.pid");
        let script = format!("sleep 30 & echo $! > '{}'; wait", pid_file.display());
        let cancel = CancelToken::new();
        let c2 = cancel.clone();
        let watched = pid_file.clone();
        let canceller = std::thread::spawn(move || {
            // Cancel once the grandchild runs.
            let deadline = Instant::now() + Duration::from_secs(20);
            while !watched.exists() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            std::thread::sleep(Duration::from_millis(50));
            c2.cancel();
        });
        let r = with_launcher(&cancel, |l| {
            l.run(&inv("sh", &["-c", &script]), &Output::Null, &Output::Null)
        });
        let _ = canceller.join();
        assert_eq!(r.unwrap().exit, ExitKind::Signal(libc::SIGKILL));
        let grandchild: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Killed, it is gone or a zombie awaiting its new parent.
        let deadline = Instant::now() + Duration::from_secs(5);
        let running = || {
            std::fs::read_to_string(format!("/proc/{grandchild}/stat")).is_ok_and(|s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|t| !t.trim_start().starts_with('Z'))
            })
        };
        while running() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let left = running();
        if left {
            // Not leave it behind when the test fails.
            if let Some(p) = Pid::from_raw(grandchild) {
                let _ = rustix::process::kill_process(p, Signal::KILL);
            }
        }
        assert!(!left, "the shell's sleep {grandchild} outlived the cancel");
    }

    #[test]
    fn missing_program_is_an_error() {
        if sysgauge_testkit::emulator_cannot(
            "qemu-user runs posix_spawn's child as a plain fork, so a failed exec reaches the parent as exit status 127",
        ) {
            return;
        }
        let cancel = CancelToken::new();
        let r = with_launcher(&cancel, |l| {
            l.run(
                &Invocation {
                    program: PathBuf::from("/nonexistent/sysgauge-nothing"),
                    args: vec![],
                },
                &Output::Null,
                &Output::Null,
            )
        });
        let msg = r.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            msg.contains("cannot start /nonexistent/sysgauge-nothing"),
            "{msg}"
        );
    }
}
