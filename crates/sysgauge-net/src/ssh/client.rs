//! Running the real `ssh` client: one connection, with every wait bounded.
//!
//! A connection is one `ssh` process in its own session (`setsid`, so a
//! Ctrl-C at the terminal reaches sysgauge alone, which then stops its
//! children itself; `PR_SET_PDEATHSIG` so an ssh client never outlives
//! sysgauge). Its stdin is a pipe we feed from our own zero buffer (or
//! /dev/null), stdout and stderr are pipes we read; all three are
//! non-blocking and served by one `poll` loop that also watches the
//! cancellation token and the deadlines, so no connection can hang: the
//! connection phase has a hard deadline, the data phase a no-progress
//! watchdog (on top of ssh's own ConnectTimeout and ServerAliveInterval).
//!
//! Timing (all from the injected monotonic clock): `spawned` before the
//! fork, `authenticated` when the "Authenticated to" line (LogLevel VERBOSE)
//! arrives on stderr, `ready` when the remote command's ready marker arrives
//! on stdout, `data_start` before the first byte is written, `ended` when
//! stdout and stderr are both at end of file, which happens when ssh exits
//! (ssh keeps its own stdout and stderr open until it exits). A transfer is
//! timed from `data_start` to `ended`: the remote shell is already running
//! `cat` (it printed the marker), so neither the handshake nor the shell's
//! start-up is inside, and the tail is one round trip (end of data, exit
//! status, close) plus the process exit.
//!
//! Failures are classified from ssh's stderr (captured real outputs in
//! tests/fixtures/ssh): unreachable, host key mismatch, authentication,
//! no algorithm in common ("Their offer: …"), unknown algorithm.

use rustix::process::{kill_process_group, Pid, Signal};
use std::ffi::OsString;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;
use sysgauge_core::CancelToken;
use thiserror::Error;

use super::algorithms::Kind;

/// The line a remote command prints when it is about to read the data.
pub const READY_MARKER: &str = "sysgauge-ready";

/// Remote command of a timed transfer.
pub const REMOTE_DISCARD: &str = "echo sysgauge-ready; exec cat > /dev/null";

/// Remote command of the verifying transfer: counts what arrived.
pub const REMOTE_COUNT: &str = "echo sysgauge-ready; exec wc -c";

/// Most stderr kept per connection (ssh -v prints a few KiB).
const STDERR_CAP: usize = 256 * 1024;
/// Most stdout kept (the marker, a count, or a login banner).
const STDOUT_CAP: usize = 64 * 1024;
/// How often the loop wakes to look at cancellation and deadlines.
const TICK: Duration = Duration::from_millis(100);

/// Why a connection did not do its job.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum SshError {
    #[error(
        "cannot connect to {target}: connection refused (is an SSH server listening on that port?)"
    )]
    Refused { target: String },
    #[error("cannot connect to {target}: no answer within the connect timeout (host down, unroutable or filtered; raise --connect-timeout if the network is slow)")]
    ConnectTimeout { target: String },
    #[error("{target} accepted the TCP connection but sent no SSH banner within the connect timeout (not an SSH server, or an overloaded one)")]
    BannerTimeout { target: String },
    #[error("cannot reach {target}: {detail}")]
    Unreachable { target: String, detail: String },
    #[error("the host key of {target} does not match the one in known_hosts{where_}: someone may be intercepting the connection, or the server was reinstalled; check the key and fix known_hosts (ssh-keygen -R HOST) — sysgauge never accepts a host key on its own")]
    HostKeyChanged { target: String, where_: String },
    #[error("the host key of {target} is not in known_hosts: connect once with ssh to check and accept it (sysgauge runs ssh in batch mode and never accepts a host key on its own)")]
    HostKeyUnknown { target: String },
    #[error("authentication failed for {target} ({detail}): sysgauge runs ssh in batch mode (no passwords); give it a key through the ssh agent, ~/.ssh/config or --ssh-option IdentityFile=...")]
    Auth { target: String, detail: String },
    #[error("the server at {target} accepts no {} that was offered; it offers: {offer}", .kind.label())]
    NoMatch {
        target: String,
        kind: Kind,
        offer: String,
    },
    #[error("this ssh client does not know the {} '{name}'", .kind.label())]
    UnknownAlgorithm { kind: Kind, name: String },
    #[error("{target} closed the connection before the key exchange (server limits such as MaxStartups or PerSourcePenalties, a firewall, or TCP wrappers): {detail}")]
    ClosedEarly { target: String, detail: String },
    #[error("ssh to {target} did not finish {phase} within {seconds} s and was stopped")]
    Timeout {
        target: String,
        phase: &'static str,
        seconds: u64,
    },
    #[error("ssh to {target} failed ({status}): {detail}")]
    Other {
        target: String,
        status: String,
        detail: String,
    },
    #[error("cannot run ssh: {0}")]
    Spawn(String),
    #[error("interrupted")]
    Cancelled,
}

impl SshError {
    /// Whether the failure concerns the whole target (no point trying other
    /// algorithms), rather than one combination.
    pub fn is_fatal_for_target(&self) -> bool {
        !matches!(
            self,
            SshError::NoMatch { .. } | SshError::UnknownAlgorithm { .. } | SshError::Cancelled
        )
    }
}

/// The last non-empty lines of `text`, joined, for messages.
pub fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("debug"))
        .collect();
    let start = lines.len().saturating_sub(n);
    lines[start..].join(" / ")
}

/// Turn a failed ssh's stderr into the reason. `target` names the server in
/// messages ("root@127.0.0.1 port 2222").
pub fn classify(stderr: &str, status: &str, target: &str) -> SshError {
    let t = target.to_string();
    let find = |needle: &str| stderr.lines().find(|l| l.contains(needle));
    if let Some(line) = find("Unable to negotiate with") {
        let kind = if line.contains("no matching cipher") {
            Some(Kind::Cipher)
        } else if line.contains("no matching MAC") {
            Some(Kind::Mac)
        } else if line.contains("no matching key exchange") {
            Some(Kind::Kex)
        } else {
            None
        };
        let offer = line
            .split_once("Their offer:")
            .map(|(_, o)| o.trim().to_string())
            .unwrap_or_default();
        if let Some(kind) = kind {
            return SshError::NoMatch {
                target: t,
                kind,
                offer,
            };
        }
        return SshError::Other {
            target: t,
            status: status.to_string(),
            detail: line.trim().to_string(),
        };
    }
    let quoted = |line: &str| -> String {
        line.split(['\'', '"'])
            .nth(1)
            .unwrap_or_default()
            .to_string()
    };
    if let Some(line) = find("Unknown cipher type").or_else(|| find("Bad SSH2 cipher spec")) {
        return SshError::UnknownAlgorithm {
            kind: Kind::Cipher,
            name: quoted(line),
        };
    }
    if let Some(line) = find("Unknown mac type").or_else(|| find("Bad SSH2 Mac spec")) {
        return SshError::UnknownAlgorithm {
            kind: Kind::Mac,
            name: quoted(line),
        };
    }
    if let Some(line) = find("Unsupported KEX algorithm").or_else(|| find("Bad SSH2 KexAlgorithms"))
    {
        return SshError::UnknownAlgorithm {
            kind: Kind::Kex,
            name: quoted(line),
        };
    }
    if stderr.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
        || stderr.contains("has changed and you have requested strict checking")
    {
        let where_ = find("Offending")
            .and_then(|l| l.split_once(" in "))
            .map(|(_, w)| format!(" ({})", w.trim()))
            .unwrap_or_default();
        return SshError::HostKeyChanged { target: t, where_ };
    }
    if stderr.contains("Host key verification failed") {
        return SshError::HostKeyUnknown { target: t };
    }
    if let Some(line) = find("Permission denied") {
        let detail = line
            .split_once("Permission denied")
            .map(|(_, d)| d.trim().trim_end_matches('.').to_string())
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| "permission denied".into());
        return SshError::Auth { target: t, detail };
    }
    if stderr.contains("timed out during banner exchange") {
        return SshError::BannerTimeout { target: t };
    }
    if stderr.contains("Connection refused") {
        return SshError::Refused { target: t };
    }
    if stderr.contains("Connection timed out") || stderr.contains("Operation timed out") {
        return SshError::ConnectTimeout { target: t };
    }
    for needle in [
        "No route to host",
        "Network is unreachable",
        "Could not resolve hostname",
        "Name or service not known",
        "Temporary failure in name resolution",
    ] {
        if let Some(line) = find(needle) {
            return SshError::Unreachable {
                target: t,
                detail: line.trim().trim_start_matches("ssh: ").to_string(),
            };
        }
    }
    if let Some(line) = find("kex_exchange_identification")
        .or_else(|| find("Connection reset by peer"))
        .or_else(|| find("Connection closed by"))
    {
        return SshError::ClosedEarly {
            target: t,
            detail: line.trim().to_string(),
        };
    }
    let detail = tail_lines(stderr, 3);
    SshError::Other {
        target: t,
        status: status.to_string(),
        detail: if detail.is_empty() {
            "no message on stderr".into()
        } else {
            detail
        },
    }
}

/// What `ssh -v` says was negotiated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Negotiated {
    pub kex: Option<String>,
    pub host_key: Option<String>,
    /// client→server cipher (the direction our data goes).
    pub cipher: Option<String>,
    /// client→server MAC, "implicit" for AEAD ciphers.
    pub mac: Option<String>,
    pub server_version: Option<String>,
}

/// Parse the `debug1: kex: …` lines of `ssh -v` (LogLevel DEBUG1).
pub fn parse_negotiated(stderr: &str) -> Negotiated {
    let mut n = Negotiated::default();
    for line in stderr.lines() {
        let l = line.trim();
        if let Some(v) = l.strip_prefix("debug1: kex: algorithm: ") {
            n.kex = Some(v.trim().to_string());
        } else if let Some(v) = l.strip_prefix("debug1: kex: host key algorithm: ") {
            n.host_key = Some(v.trim().to_string());
        } else if let Some(v) = l.strip_prefix("debug1: kex: client->server cipher: ") {
            let mut words = v.split_whitespace();
            n.cipher = words.next().map(str::to_string);
            if words.next() == Some("MAC:") {
                n.mac = words
                    .next()
                    .map(|m| if m == "<implicit>" { "implicit" } else { m }.to_string());
            }
        } else if let Some((_, v)) = l.split_once("remote software version ") {
            n.server_version = Some(v.trim().to_string());
        }
    }
    n
}

/// How ssh is told which algorithms to use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restrict {
    pub cipher: Option<String>,
    pub mac: Option<String>,
    pub kex: Option<String>,
}

impl Restrict {
    pub fn args(&self) -> Vec<OsString> {
        let mut v: Vec<OsString> = Vec::new();
        if let Some(c) = &self.cipher {
            v.push("-c".into());
            v.push(c.into());
        }
        if let Some(m) = &self.mac {
            v.push("-m".into());
            v.push(m.into());
        }
        if let Some(k) = &self.kex {
            v.push("-o".into());
            v.push(format!("KexAlgorithms={k}").into());
        }
        v
    }
}

/// ssh's log level for one connection: INFO shows the errors we classify,
/// VERBOSE adds "Authenticated to", DEBUG1 the negotiated algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Info,
    Verbose,
    Debug1,
}

impl LogLevel {
    fn as_str(self) -> &'static str {
        match self {
            LogLevel::Info => "INFO",
            LogLevel::Verbose => "VERBOSE",
            LogLevel::Debug1 => "DEBUG1",
        }
    }
}

/// What to feed the remote command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// stdin is /dev/null.
    Null,
    /// After the ready marker, this many zero bytes, then end of file.
    Zeros(u64),
}

/// One connection to run.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub restrict: &'a Restrict,
    pub log_level: LogLevel,
    pub remote_command: &'a str,
    pub input: Input,
    /// Until the remote is ready (or ssh exits): connect, key exchange,
    /// authentication, remote shell start-up.
    pub connect_deadline: Duration,
    /// Longest time without any progress in the data phase.
    pub stall_timeout: Duration,
}

/// How a connection ended and when things happened (clock readings).
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub success: bool,
    pub status: String,
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub spawned: Duration,
    pub authenticated: Option<Duration>,
    pub ready: Option<Duration>,
    pub data_start: Option<Duration>,
    pub data_written: Option<Duration>,
    pub ended: Duration,
    pub bytes_written: u64,
}

impl Outcome {
    /// stdout after the ready marker line.
    pub fn after_marker(&self) -> String {
        let text = String::from_utf8_lossy(&self.stdout);
        match text.find(READY_MARKER) {
            Some(i) => text[i + READY_MARKER.len()..].trim().to_string(),
            None => text.trim().to_string(),
        }
    }
}

/// Everything needed to start `ssh` for one target.
#[derive(Debug, Clone)]
pub struct SshCommand {
    pub program: PathBuf,
    /// Options before the algorithm restrictions (config, keys, timeouts).
    pub base_args: Vec<OsString>,
    /// The destination word(s) after the options (`-p`, `-l` are in base_args).
    pub destination: String,
    /// For messages: "root@127.0.0.1 port 40123".
    pub target: String,
}

fn set_nonblocking(fd: &impl AsFd) -> std::io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(fd)?;
    rustix::fs::fcntl_setfl(fd, flags | rustix::fs::OFlags::NONBLOCK)?;
    Ok(())
}

/// A started child in its own session; killed (whole process group) and
/// reaped on drop unless it was waited for.
pub struct ChildGuard {
    child: Child,
    reaped: bool,
}

impl ChildGuard {
    /// Start `cmd` in a new session with a parent-death signal. Linux
    /// sends that signal when the spawning *thread* ends, so a child must be
    /// spawned from a thread that outlives it (the main thread for the
    /// server; each probe thread waits for its own ssh).
    pub fn spawn(cmd: &mut Command, death_signal: libc::c_int) -> std::io::Result<ChildGuard> {
        // SAFETY: the closure runs in the child between fork and exec and
        // only calls setsid and prctl, which are async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    death_signal as libc::c_ulong,
                    0,
                    0,
                    0,
                ) < 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Ok(ChildGuard {
            child: cmd.spawn()?,
            reaped: false,
        })
    }

    pub fn id(&self) -> u32 {
        self.child.id()
    }

    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Send `sig` to the child's whole process group (its session).
    pub fn signal_group(&self, sig: Signal) {
        // The child leads its own process group (it called setsid).
        if let Some(pid) = i32::try_from(self.child.id()).ok().and_then(Pid::from_raw) {
            let _ = kill_process_group(pid, sig);
        }
    }

    /// Non-blocking reap.
    pub fn try_wait(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> {
        let r = self.child.try_wait()?;
        if r.is_some() {
            self.reaped = true;
        }
        Ok(r)
    }

    /// Wait up to `limit` for the exit, then kill the group and reap.
    pub fn wait_bounded(&mut self, limit: Duration) -> std::io::Result<std::process::ExitStatus> {
        let start = std::time::Instant::now();
        loop {
            if let Some(s) = self.try_wait()? {
                return Ok(s);
            }
            if start.elapsed() >= limit {
                self.signal_group(Signal::KILL);
                let s = self.child.wait()?;
                self.reaped = true;
                return Ok(s);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if !self.reaped {
            self.signal_group(Signal::KILL);
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn describe_status(s: std::process::ExitStatus) -> String {
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "unknown status".into(),
    }
}

/// The data to write, and where we are in it.
struct Feeder<'a> {
    stdin: Option<ChildStdin>,
    zeros: &'a [u8],
    left: u64,
}

impl SshCommand {
    /// The full argument list for one request.
    pub fn args(&self, req: &Request<'_>) -> Vec<OsString> {
        let mut a = self.base_args.clone();
        a.push("-o".into());
        a.push(format!("LogLevel={}", req.log_level.as_str()).into());
        a.extend(req.restrict.args());
        a.push(self.destination.clone().into());
        a.push(req.remote_command.into());
        a
    }

    /// Run one connection to its end. `zeros` is the buffer written
    /// repeatedly for `Input::Zeros` (allocated and touched by the caller,
    /// before any timing). `now` reads the clock.
    pub fn run(
        &self,
        req: &Request<'_>,
        zeros: &[u8],
        now: &dyn Fn() -> Duration,
        cancel: &CancelToken,
    ) -> Result<Outcome, SshError> {
        let mut cmd = Command::new(&self.program);
        cmd.args(self.args(req))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(match req.input {
                Input::Null => Stdio::null(),
                Input::Zeros(_) => Stdio::piped(),
            });
        let mut out = Outcome {
            spawned: now(),
            ..Default::default()
        };
        let mut child = ChildGuard::spawn(&mut cmd, libc::SIGKILL)
            .map_err(|e| SshError::Spawn(format!("{}: {e}", self.program.display())))?;
        let stdin = child.child_mut().stdin.take();
        let stdout = child.child_mut().stdout.take();
        let stderr = child.child_mut().stderr.take();
        let (Some(mut stdout), Some(mut stderr)) = (stdout, stderr) else {
            return Err(SshError::Spawn(
                "the child has no stdout/stderr pipe".into(),
            ));
        };
        let nb = |r: std::io::Result<()>| r.map_err(|e| SshError::Spawn(format!("fcntl: {e}")));
        nb(set_nonblocking(&stdout))?;
        nb(set_nonblocking(&stderr))?;
        if let Some(s) = &stdin {
            nb(set_nonblocking(s))?;
        }
        let mut feeder = Feeder {
            stdin,
            zeros,
            left: match req.input {
                Input::Zeros(n) => n,
                Input::Null => 0,
            },
        };
        let mut out_open = true;
        let mut err_open = true;
        let mut buf = vec![0u8; 64 * 1024];
        let mut err_bytes: Vec<u8> = Vec::new();
        let mut scanned = 0usize;
        let mut last_progress = now();
        let connect_deadline = out.spawned + req.connect_deadline;
        while out_open || err_open {
            if cancel.is_cancelled() {
                return Err(SshError::Cancelled);
            }
            let t = now();
            if out.ready.is_none() && t > connect_deadline {
                return Err(SshError::Timeout {
                    target: self.target.clone(),
                    phase: "connecting, authenticating and starting the remote command",
                    seconds: req.connect_deadline.as_secs(),
                });
            }
            if out.ready.is_some() && t.saturating_sub(last_progress) > req.stall_timeout {
                return Err(SshError::Timeout {
                    target: self.target.clone(),
                    phase: "the transfer (no progress)",
                    seconds: req.stall_timeout.as_secs(),
                });
            }
            let writing = out.ready.is_some() && feeder.stdin.is_some();
            let mut fds: Vec<libc::pollfd> = Vec::with_capacity(3);
            let mut roles: Vec<u8> = Vec::with_capacity(3);
            // Poll `fd` for `events`; `role` tells its events apart after.
            let mut watch = |fd, events, role| {
                fds.push(libc::pollfd {
                    fd,
                    events,
                    revents: 0,
                });
                roles.push(role);
            };
            if out_open {
                watch(stdout.as_raw_fd(), libc::POLLIN, b'o');
            }
            if err_open {
                watch(stderr.as_raw_fd(), libc::POLLIN, b'e');
            }
            if writing {
                if let Some(s) = &feeder.stdin {
                    watch(s.as_raw_fd(), libc::POLLOUT, b'i');
                }
            }
            let timeout_ms = TICK.as_millis() as libc::c_int;
            // SAFETY: `fds` is a valid array of pollfd of the given length,
            // each holding a descriptor we own for the duration of the call.
            let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
            if rc < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == ErrorKind::Interrupted {
                    continue;
                }
                return Err(SshError::Spawn(format!("poll: {e}")));
            }
            for (pfd, role) in fds.iter().zip(roles.iter()) {
                if pfd.revents == 0 {
                    continue;
                }
                match role {
                    b'o' => {
                        if !drain(
                            &mut stdout,
                            &mut buf,
                            &mut out.stdout,
                            STDOUT_CAP,
                            &mut out_open,
                        ) {
                            continue;
                        }
                        last_progress = now();
                        if out.ready.is_none()
                            && String::from_utf8_lossy(&out.stdout)
                                .contains(&format!("{READY_MARKER}\n"))
                        {
                            let t = now();
                            out.ready = Some(t);
                            last_progress = t;
                            if feeder.stdin.is_some() {
                                out.data_start = Some(now());
                                if feeder.left == 0 {
                                    feeder.stdin = None;
                                    out.data_written = out.data_start;
                                }
                            }
                        }
                    }
                    b'e' => {
                        if !drain(
                            &mut stderr,
                            &mut buf,
                            &mut err_bytes,
                            STDERR_CAP,
                            &mut err_open,
                        ) {
                            continue;
                        }
                        last_progress = now();
                        if out.authenticated.is_none() {
                            let text = String::from_utf8_lossy(&err_bytes[scanned..]);
                            if text.contains("Authenticated to ") {
                                out.authenticated = Some(now());
                            }
                            scanned = err_bytes.len().saturating_sub(32);
                        }
                    }
                    _ => {
                        if pfd.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
                            // The reader went away (ssh exiting): stop
                            // feeding; the exit status tells why.
                            feeder.stdin = None;
                            continue;
                        }
                        let progressed = feed(&mut feeder);
                        if progressed > 0 {
                            out.bytes_written += progressed;
                            last_progress = now();
                        }
                        if feeder.left == 0 && feeder.stdin.is_some() {
                            // End of data: closing the pipe sends EOF through
                            // ssh to the remote `cat`.
                            feeder.stdin = None;
                            out.data_written = Some(now());
                        }
                    }
                }
            }
        }
        out.ended = now();
        drop(feeder);
        let status = child
            .wait_bounded(Duration::from_secs(5))
            .map_err(|e| SshError::Spawn(format!("wait: {e}")))?;
        out.stderr = String::from_utf8_lossy(&err_bytes).to_string();
        out.status = describe_status(status);
        out.success = status.success();
        if !out.success {
            return Err(classify(&out.stderr, &out.status, &self.target));
        }
        if let Input::Zeros(n) = req.input {
            if out.ready.is_none() {
                return Err(SshError::Other {
                    target: self.target.clone(),
                    status: out.status.clone(),
                    detail: format!(
                        "the remote command never printed '{READY_MARKER}' (is the remote login shell a POSIX-like shell with echo and cat?)"
                    ),
                });
            }
            if out.bytes_written != n {
                return Err(SshError::Other {
                    target: self.target.clone(),
                    status: out.status.clone(),
                    detail: format!("only {} of {n} bytes were sent", out.bytes_written),
                });
            }
        }
        Ok(out)
    }
}

/// Read what is there; false when nothing was read (would block). Keeps at
/// most `cap` bytes; end of file clears `open`.
fn drain(
    src: &mut impl Read,
    buf: &mut [u8],
    keep: &mut Vec<u8>,
    cap: usize,
    open: &mut bool,
) -> bool {
    let mut any = false;
    loop {
        match src.read(buf) {
            Ok(0) => {
                *open = false;
                return true;
            }
            Ok(n) => {
                any = true;
                let room = cap.saturating_sub(keep.len());
                keep.extend_from_slice(&buf[..n.min(room)]);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return any,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => {
                *open = false;
                return true;
            }
        }
    }
}

/// Write as much as the pipe takes; returns the bytes written.
fn feed(f: &mut Feeder<'_>) -> u64 {
    let mut written = 0u64;
    let Some(stdin) = f.stdin.as_mut() else {
        return 0;
    };
    while f.left > 0 {
        let n = usize::try_from(f.left)
            .unwrap_or(usize::MAX)
            .min(f.zeros.len());
        match stdin.write(&f.zeros[..n]) {
            Ok(0) => break,
            Ok(w) => {
                written += w as u64;
                f.left -= w as u64;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => {
                // EPIPE: ssh is gone; its exit status explains.
                f.stdin = None;
                break;
            }
        }
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/ssh")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    const T: &str = "root@127.0.0.1 port 35503";

    #[test]
    fn classifies_real_ssh_errors() {
        let c = |f: &str| classify(&fixture(f), "exit status 255", T);
        assert!(matches!(c("refused.txt"), SshError::Refused { .. }));
        assert!(matches!(
            c("connect-timeout.txt"),
            SshError::ConnectTimeout { .. }
        ));
        assert!(matches!(
            c("banner-timeout.txt"),
            SshError::BannerTimeout { .. }
        ));
        match c("hostkey-changed.txt") {
            SshError::HostKeyChanged { where_, .. } => {
                assert!(where_.contains("kh_wrong:1"), "{where_}")
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            c("hostkey-unknown.txt"),
            SshError::HostKeyUnknown { .. }
        ));
        match c("permission-denied.txt") {
            SshError::Auth { detail, .. } => assert_eq!(detail, "(publickey)"),
            other => panic!("{other:?}"),
        }
        match c("no-matching-cipher.txt") {
            SshError::NoMatch { kind, offer, .. } => {
                assert_eq!(kind, Kind::Cipher);
                assert_eq!(offer, "aes256-ctr");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            c("no-matching-mac.txt"),
            SshError::NoMatch {
                kind: Kind::Mac,
                ..
            }
        ));
        assert!(matches!(
            c("no-matching-kex.txt"),
            SshError::NoMatch {
                kind: Kind::Kex,
                ..
            }
        ));
        assert_eq!(
            c("bad-cipher-spec.txt"),
            SshError::UnknownAlgorithm {
                kind: Kind::Cipher,
                name: "foo".into()
            }
        );
        assert_eq!(
            c("bad-mac-spec.txt"),
            SshError::UnknownAlgorithm {
                kind: Kind::Mac,
                name: "foo".into()
            }
        );
        assert_eq!(
            c("bad-kex.txt"),
            SshError::UnknownAlgorithm {
                kind: Kind::Kex,
                name: "foo".into()
            }
        );
        match classify("something odd\n", "exit status 255", T) {
            SshError::Other { detail, .. } => assert_eq!(detail, "something odd"),
            other => panic!("{other:?}"),
        }
        assert!(!c("no-matching-cipher.txt").is_fatal_for_target());
        assert!(c("refused.txt").is_fatal_for_target());
        // Messages name the target and say what to do.
        let m = c("hostkey-changed.txt").to_string();
        assert!(m.contains(T) && m.contains("ssh-keygen -R"), "{m}");
    }

    #[test]
    fn parses_negotiated_algorithms() {
        let n = parse_negotiated(&fixture("verify-debug1.txt"));
        assert_eq!(n.kex.as_deref(), Some("curve25519-sha256"));
        assert_eq!(n.host_key.as_deref(), Some("ssh-ed25519"));
        assert_eq!(n.cipher.as_deref(), Some("aes128-ctr"));
        assert_eq!(n.mac.as_deref(), Some("umac-128-etm@openssh.com"));
        assert!(n
            .server_version
            .as_deref()
            .is_some_and(|v| v.starts_with("OpenSSH_9.2")));
        let a = parse_negotiated(&fixture("verify-aead-debug1.txt"));
        assert_eq!(a.cipher.as_deref(), Some("chacha20-poly1305@openssh.com"));
        assert_eq!(a.mac.as_deref(), Some("implicit"));
        assert_eq!(parse_negotiated(""), Negotiated::default());
    }

    #[test]
    fn restrict_args() {
        let r = Restrict {
            cipher: Some("aes128-ctr".into()),
            mac: None,
            kex: Some("curve25519-sha256".into()),
        };
        let a: Vec<String> = r
            .args()
            .into_iter()
            .map(|s| s.to_string_lossy().to_string())
            .collect();
        assert_eq!(
            a,
            ["-c", "aes128-ctr", "-o", "KexAlgorithms=curve25519-sha256"]
        );
    }

    #[test]
    fn marker_and_tail() {
        let o = Outcome {
            stdout: format!("motd line\n{READY_MARKER}\n1048589\n").into_bytes(),
            ..Default::default()
        };
        assert_eq!(o.after_marker(), "1048589");
        assert_eq!(tail_lines("a\n\ndebug1: x\nb\nc\n", 2), "b / c");
    }
}
