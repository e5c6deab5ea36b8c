//! A child process for tests that run a server or a reference program next
//! to the code under test: its stdout and stderr lines are collected by
//! reader threads (so a test can wait for "ready" lines without blocking),
//! and it is killed and reaped on drop, so no exit path leaves it running.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A child process, killed and reaped on drop, its output lines collected
/// (stderr lines prefixed with `stderr: `).
pub struct ChildGuard {
    child: Child,
    lines: mpsc::Receiver<String>,
    /// Every line received so far, in arrival order.
    pub seen: Vec<String>,
}

/// Sends each line of `pipe` (prefixed with `prefix`) until the pipe closes
/// or nobody listens any more.
fn forward_lines(pipe: impl Read + Send + 'static, prefix: &'static str, tx: mpsc::Sender<String>) {
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            if tx.send(format!("{prefix}{line}")).is_err() {
                break;
            }
        }
    });
}

impl ChildGuard {
    /// Spawns `cmd` with stdout and stderr piped into the collector.
    pub fn spawn(cmd: &mut Command) -> ChildGuard {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
        let (tx, rx) = mpsc::channel();
        let out = child.stdout.take().unwrap_or_else(|| panic!("stdout"));
        let err = child.stderr.take().unwrap_or_else(|| panic!("stderr"));
        forward_lines(out, "", tx.clone());
        forward_lines(err, "stderr: ", tx);
        ChildGuard {
            child,
            lines: rx,
            seen: Vec::new(),
        }
    }

    /// Spawns `cmd` and waits up to `timeout` for a line containing
    /// `ready`; panics (showing the output so far) when it does not come.
    pub fn spawn_ready(cmd: &mut Command, ready: &str, timeout: Duration) -> ChildGuard {
        let mut child = ChildGuard::spawn(cmd);
        assert!(
            child.wait_for_line(ready, timeout),
            "{cmd:?} did not print {ready:?} within {timeout:?}: {}",
            child.output()
        );
        child
    }

    /// Waits up to `timeout` for a line containing `needle`.
    pub fn wait_for_line(&mut self, needle: &str, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let hit = line.contains(needle);
                    self.seen.push(line);
                    if hit {
                        return true;
                    }
                }
                Err(_) => return false,
            }
        }
        false
    }

    /// The process id (the child is not reaped before drop, so it stays its).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGINT (what Ctrl-C sends).
    pub fn interrupt(&self) {
        // The child has not been reaped yet (that happens in wait_exit or
        // on drop), so its pid cannot have been reused.
        if let Some(pid) = i32::try_from(self.child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
        }
    }

    /// Waits up to `timeout` for the process to exit; collects all output.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                // Let the reader threads finish the pipes.
                while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(300)) {
                    self.seen.push(line);
                }
                return Some(status);
            }
            if Instant::now() >= end {
                return None;
            }
            while let Ok(line) = self.lines.try_recv() {
                self.seen.push(line);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything received so far, one line each.
    pub fn output(&self) -> String {
        self.seen.join("\n")
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The reference `2ping --listen` on `ip` and `port` with `extra` options,
/// ready (it printed its "2PING listener" line within `timeout`).
pub fn reference_2ping_listener(
    ip: &str,
    port: u16,
    extra: &[&str],
    timeout: Duration,
) -> ChildGuard {
    let mut cmd = Command::new("2ping");
    cmd.args(["--listen", "-I", ip, "--port", &port.to_string()])
        .args(extra);
    ChildGuard::spawn_ready(&mut cmd, "2PING listener", timeout)
}
