//! One OpenSSH connection per host, through the system's `ssh` client, so
//! the user's ssh_config, agent, ProxyJump and known_hosts all apply.
//!
//! Shape and reasons:
//! - `BatchMode=yes`: a password, passphrase or host-key question fails at
//!   once instead of waiting for a user who is not there.
//! - The master connection is a child process of ours (`ssh -M -N`, with
//!   `ControlPersist=no`), not a daemon left behind by ControlPersist: it
//!   lives exactly as long as the [`Connection`], is closed (`-O exit`, then
//!   killed) on drop, and so on success, failure, timeout and Ctrl-C alike.
//!   Only a fleet process killed outright leaves it running; the next fleet
//!   run stops it ([`crate::leftover`]).
//!   Every command after it goes through its socket (one handshake a host).
//! - The socket lives in a private (0700) temporary directory of the fleet
//!   run, named by a short index: a socket path is limited to about 100
//!   bytes.
//! - The master is ready when its socket appears: ssh creates it only after
//!   authentication succeeded. If the master exits first, its log says why
//!   (key refused, connection refused, host key mismatch), and that is the
//!   host's failure reason.
//! - Key exchange: when neither the user's ssh_config nor `--ssh-option`
//!   sets `KexAlgorithms` (`ssh -G` for the host prints OpenSSH's default
//!   list), the master offers `curve25519-sha256` ahead of sntrup761x25519.
//!   That post-quantum hybrid, OpenSSH 9.0-9.8's first choice, costs
//!   the client about 50 ms of CPU per connection (x86-64 server here; many
//!   times that on a small ARM board), which a fleet pays once per host on
//!   one machine. What a fleet run carries (a public binary, benchmark
//!   results, a key valid for one run) gains nothing from post-quantum
//!   secrecy; a user who wants it sets `KexAlgorithms`, and that is used.
//! - Every ssh runs in a process group of its own: Ctrl-C on a terminal
//!   signals the whole foreground group, and an ssh that died of it would
//!   end its session with the remote's last progress line as the only
//!   word, before sysgauge could stop the host's run and say `interrupted`.
//!   The fleet alone decides when its connections end (and a second Ctrl-C
//!   stops them, see [`crate::leftover::stop_and_remove`]).
//! - A session whose ssh ends with 255 lost its connection. Its stderr is
//!   the remote command's, so the reason is what the master logged (it
//!   sees a vanished host first, by its keep-alives: "Timeout, server not
//!   responding"), else a line ssh itself wrote, never the remote's output.
//! - Every command has a deadline and watches the cancellation token; the
//!   local `ssh` is killed when either passes (or, for a command run with
//!   a [`Wind`], when the grace after asking it to stop has passed too:
//!   what it prints as it stops still comes home). That does not end the
//!   command on the host: the multiplexing client handed its stdout and
//!   stderr to the master, which keeps serving them. Stopping what runs on
//!   the host is the caller's (see `remote`).

use crate::inventory::Host;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use sysgauge_core::CancelToken;

/// How every connection is made.
#[derive(Debug, Clone)]
pub struct SshSettings {
    /// The `ssh` program.
    pub program: PathBuf,
    /// `-F FILE`: another ssh_config instead of the user's.
    pub config: Option<PathBuf>,
    /// `-o KEY=VALUE` options, in order, after ours (ssh takes the first
    /// value given for an option, so these cannot override BatchMode or
    /// the control settings, but can set anything else).
    pub options: Vec<(String, String)>,
    /// `ConnectTimeout`.
    pub connect_timeout: Duration,
}

impl Default for SshSettings {
    fn default() -> Self {
        SshSettings {
            program: PathBuf::from("ssh"),
            config: None,
            options: Vec::new(),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

/// Why a step on a host did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SshError {
    /// ssh itself failed (exit 255): unreachable, refused, key refused, ...
    Connect(String),
    /// The deadline passed.
    Timeout,
    /// Ctrl-C (or another stop signal).
    Cancelled,
    /// The local `ssh` could not be started.
    Spawn(String),
}

impl std::fmt::Display for SshError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SshError::Connect(s) => write!(f, "{s}"),
            SshError::Timeout => write!(f, "timed out"),
            SshError::Cancelled => write!(f, "interrupted"),
            SshError::Spawn(s) => write!(f, "cannot run ssh: {s}"),
        }
    }
}

/// What a remote command printed and how it ended.
#[derive(Debug, Clone)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Output {
    /// The exit code (`None` when ssh was killed by a signal).
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }
}

/// ssh's error text turned into a short reason for the closing table.
pub fn classify(stderr: &str) -> String {
    known_reason(stderr).unwrap_or_else(|| match last_line(stderr) {
        "" => "ssh failed".to_string(),
        l => format!("ssh failed: {l}"),
    })
}

/// The error texts ssh is known to write (lower-cased; a row matches when
/// every text of one of its alternatives is there), first match wins, and
/// the short reason each stands for.
const KNOWN_REASONS: &[(&[&[&str]], &str)] = &[
    (
        &[&["timeout, server", "not responding"]],
        "connection lost (Timeout, server not responding)",
    ),
    (
        &[&["closed by remote host"], &["connection closed by"]],
        "connection lost (closed by the host)",
    ),
    (
        &[&["connection reset"]],
        "connection lost (connection reset)",
    ),
    (&[&["broken pipe"]], "connection lost (broken pipe)"),
    (&[&["permission denied"]], "key refused (Permission denied)"),
    (
        &[
            &["host key verification failed"],
            &["identification has changed"],
        ],
        "host key verification failed (see known_hosts)",
    ),
    (&[&["connection refused"]], "connection refused"),
    (&[&["timed out"]], "unreachable (connection timed out)"),
    (&[&["no route to host"]], "unreachable (no route to host)"),
    (
        &[&["could not resolve hostname"]],
        "unknown host name (could not resolve)",
    ),
    (
        &[&["network is unreachable"]],
        "unreachable (network is unreachable)",
    ),
];

/// The short reason for an ssh error text ssh is known to write, `None`
/// for anything else.
fn known_reason(stderr: &str) -> Option<String> {
    let s = stderr.to_ascii_lowercase();
    KNOWN_REASONS
        .iter()
        .find(|(alternatives, _)| {
            alternatives
                .iter()
                .any(|all| all.iter().all(|t| s.contains(t)))
        })
        .map(|(_, reason)| reason.to_string())
}

/// The lines of a session's stderr that ssh itself writes (the rest is the
/// remote command's).
fn own_lines(stderr: &str) -> String {
    const OURS: [&str; 8] = [
        "ssh:",
        "Connection to ",
        "Connection closed",
        "Timeout, server",
        "client_loop:",
        "mux_client",
        "Control socket",
        "Read from remote host",
    ];
    stderr
        .lines()
        .map(str::trim)
        .filter(|l| OURS.iter().any(|p| l.starts_with(p)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The last non-empty line of `text`, trimmed.
pub fn last_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("")
}

/// A fresh private directory (0700 whatever the umask) for a fleet run's
/// control sockets, master logs and secrets in transit; removed on drop.
/// Anyone who can enter it can use the connections through their sockets,
/// so the mode is set explicitly (the umask cannot widen a `chmod`) and
/// checked. It names this process as its owner, so that the next fleet
/// run can tell it was abandoned if this one is killed ([`crate::leftover`]).
pub fn control_dir() -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix(crate::leftover::DIR_PREFIX)
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))?;
    let mode = std::fs::metadata(dir.path())?.permissions().mode() & 0o7777;
    if mode != 0o700 {
        return Err(std::io::Error::other(format!(
            "{} has mode {mode:o} after it was made 0700",
            dir.path().display()
        )));
    }
    if Path::new("/proc/self/stat").exists() {
        crate::leftover::write_owner(dir.path(), std::process::id())?;
    }
    Ok(dir)
}

/// Creates (or empties) `path` readable by its owner alone: a master's log
/// can hold host names, users and key file names.
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

/// How [`Connection::run_winding`] ends a command cut off by its deadline
/// or by cancellation. Killing the local ssh loses whatever the command
/// would still print (a measuring command prints its record when it
/// stops); instead `ask` asks it to stop (through another session; it is
/// handed the moment the grace ends, its own deadline), and the session
/// waits until then for it to end and for its output to come home.
pub struct Wind<'a> {
    pub ask: &'a dyn Fn(Instant),
    /// From the moment `ask` is called.
    pub grace: Duration,
}

/// A live multiplexed connection to one host; closed on drop.
pub struct Connection {
    settings: SshSettings,
    host: Host,
    socket: PathBuf,
    master: Option<Child>,
    log: PathBuf,
}

impl Connection {
    /// Connects to `host` (index `n` names its socket in `control_dir`),
    /// waiting until authenticated, `deadline`, or cancellation.
    pub fn open(
        host: &Host,
        n: usize,
        control_dir: &Path,
        settings: &SshSettings,
        deadline: Instant,
        cancel: &CancelToken,
    ) -> Result<Connection, SshError> {
        let socket = control_dir.join(format!("{n}.sock"));
        let log = control_dir.join(format!("{n}.log"));
        let log_file = private_file(&log).map_err(|e| SshError::Spawn(e.to_string()))?;
        let mut conn = Connection {
            settings: settings.clone(),
            host: host.clone(),
            socket,
            master: None,
            log,
        };
        let mut extra = vec!["-M", "-N", "-o", "ControlMaster=yes"];
        let kex = conn.quick_kex().map(|list| format!("KexAlgorithms={list}"));
        if let Some(k) = &kex {
            extra.extend(["-o", k.as_str()]);
        }
        let mut cmd = conn.command(&extra);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log_file);
        conn.master = Some(
            cmd.spawn()
                .map_err(|e| SshError::Spawn(format!("{}: {e}", settings.program.display())))?,
        );
        loop {
            if conn.socket.exists() {
                return Ok(conn);
            }
            if let Some(m) = conn.master.as_mut() {
                if let Ok(Some(_)) = m.try_wait() {
                    conn.master = None;
                    let text = std::fs::read_to_string(&conn.log).unwrap_or_default();
                    return Err(SshError::Connect(classify(&text)));
                }
            }
            if cancel.is_cancelled() {
                return Err(SshError::Cancelled);
            }
            if Instant::now() >= deadline {
                return Err(SshError::Timeout);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The key exchange list with `curve25519-sha256` ahead of sntrup761, when the
    /// effective list for this host is OpenSSH's default (see the module's
    /// notes); `None` leaves ssh's choice alone.
    fn quick_kex(&self) -> Option<String> {
        let effective = kex_algorithms(self.command(&["-G"]))?;
        let default = default_kex(&self.settings.program)?;
        (effective == default)
            .then(|| prefer(&effective, QUICK_KEX))
            .flatten()
    }

    /// `ssh` with our options, `extra`, and the destination (no command).
    fn command(&self, extra: &[&str]) -> Command {
        let mut cmd = Command::new(&self.settings.program);
        let mut args: Vec<OsString> = Vec::new();
        if let Some(f) = &self.settings.config {
            args.push("-F".into());
            args.push(f.into());
        }
        let mut o = |k: &str, v: &str| {
            args.push("-o".into());
            args.push(format!("{k}={v}").into());
        };
        o("BatchMode", "yes");
        o(
            "ConnectTimeout",
            &self.settings.connect_timeout.as_secs().max(1).to_string(),
        );
        o("ControlPersist", "no");
        // Keep-alives notice a host that vanished mid-run (a crashed
        // machine never closes the connection).
        o("ServerAliveInterval", "5");
        o("ServerAliveCountMax", "3");
        let mut control = OsString::from("ControlPath=");
        control.push(&self.socket);
        args.push("-o".into());
        args.push(control);
        if let Some(key) = &self.host.identity_file {
            args.push("-o".into());
            args.push(format!("IdentityFile={key}").into());
        }
        for (k, v) in &self.settings.options {
            args.push("-o".into());
            args.push(format!("{k}={v}").into());
        }
        if let Some(p) = self.host.port {
            args.push("-p".into());
            args.push(p.to_string().into());
        }
        if let Some(u) = &self.host.user {
            args.push("-l".into());
            args.push(u.into());
        }
        cmd.args(args).args(extra).arg(&self.host.address);
        // Out of the terminal's foreground group (module notes).
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        cmd
    }

    /// Why a session through this connection ended with ssh's 255: what the
    /// master logged (waiting a moment for it to notice), else what the
    /// session's ssh wrote of its own (see the module's notes).
    pub fn lost(&self, session_stderr: &str) -> SshError {
        let end = Instant::now() + LOST_WAIT;
        loop {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            if let Some(r) = known_reason(&log) {
                return SshError::Connect(r);
            }
            if Instant::now() >= end {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        SshError::Connect(known_reason(&own_lines(session_stderr)).unwrap_or_else(
            || match last_line(&own_lines(session_stderr)) {
                "" => "connection lost (ssh ended with status 255)".to_string(),
                l => format!("connection lost ({l})"),
            },
        ))
    }

    /// Runs `script` (POSIX shell) on the host through the master, with
    /// `stdin` fed from a file, until it ends, `deadline` or cancellation.
    pub fn run(
        &self,
        script: &str,
        stdin: Option<&Path>,
        deadline: Instant,
        cancel: Option<&CancelToken>,
    ) -> Result<Output, SshError> {
        self.run_winding(script, stdin, deadline, cancel, None)
    }

    /// [`Connection::run`], but at `deadline` or cancellation the session
    /// is wound down by `wind` (see [`Wind`]) instead of ended at once:
    /// when the command ends within the grace, its output is returned as
    /// for any command that ended (its exit status says how it was
    /// stopped); else the session ends as `run`'s would, with
    /// [`SshError::Timeout`] or [`SshError::Cancelled`].
    pub fn run_winding(
        &self,
        script: &str,
        stdin: Option<&Path>,
        deadline: Instant,
        cancel: Option<&CancelToken>,
        wind: Option<&Wind<'_>>,
    ) -> Result<Output, SshError> {
        let mut cmd = self.command(&["-T", "-o", "ControlMaster=no"]);
        cmd.arg(script);
        let input = match stdin {
            Some(p) => Stdio::from(
                std::fs::File::open(p)
                    .map_err(|e| SshError::Spawn(format!("{}: {e}", p.display())))?,
            ),
            None => Stdio::null(),
        };
        let mut child = cmd
            .stdin(input)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| SshError::Spawn(format!("{}: {e}", self.settings.program.display())))?;
        let out = child.stdout.take().map(|s| collect(s, MAX_STDOUT));
        let err = child.stderr.take().map(|s| collect(s, MAX_STDERR));
        // Why the session is being wound down, and until when it may take.
        let mut winding: Option<(SshError, Instant)> = None;
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break Ok(s),
                Ok(None) => {}
                Err(e) => break Err(SshError::Spawn(e.to_string())),
            }
            match &winding {
                Some((why, until)) => {
                    if Instant::now() >= *until {
                        break Err(why.clone());
                    }
                }
                None => {
                    let why = if cancel.is_some_and(|c| c.is_cancelled()) {
                        Some(SshError::Cancelled)
                    } else if Instant::now() >= deadline {
                        Some(SshError::Timeout)
                    } else {
                        None
                    };
                    match (why, wind) {
                        (None, _) => {}
                        (Some(why), None) => break Err(why),
                        (Some(why), Some(w)) => {
                            let until = Instant::now() + w.grace;
                            (w.ask)(until);
                            winding = Some((why, until));
                        }
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        if let Err(e) = status {
            let _ = child.kill();
            let _ = child.wait();
            // The readers are not joined: a multiplexed client hands its
            // stdout and stderr to the master, which holds them open until
            // the remote command ends, however long that takes. They end
            // when it does (the caller's clean-up stops it).
            return Err(e);
        }
        let stdout = out.and_then(|h| h.join().ok()).unwrap_or_default();
        let stderr = err.and_then(|h| h.join().ok()).unwrap_or_default();
        let status = status?;
        let stderr = String::from_utf8_lossy(&stderr).into_owned();
        if status.code() == Some(255) {
            if let Some((why, _)) = winding {
                return Err(why);
            }
            if cancel.is_some_and(|c| c.is_cancelled()) {
                return Err(SshError::Cancelled);
            }
            return Err(self.lost(&stderr));
        }
        Ok(Output {
            status,
            stdout,
            stderr,
        })
    }

    /// Starts `script` on the host through the master and returns at once:
    /// stdout and stderr piped to the caller, stdin as given. Killing the
    /// returned `ssh` does not stop the command on the host (see the
    /// module's notes); the caller stops it there.
    pub fn spawn(&self, script: &str, stdin: Stdio) -> Result<Child, SshError> {
        let mut cmd = self.command(&["-T", "-o", "ControlMaster=no"]);
        cmd.arg(script)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| SshError::Spawn(format!("{}: {e}", self.settings.program.display())))
    }

    /// Closes the master (politely, then by force).
    pub fn close(&mut self) {
        let Some(mut master) = self.master.take() else {
            return;
        };
        let _ = self
            .command(&["-O", "exit"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let end = Instant::now() + Duration::from_secs(2);
        while Instant::now() < end {
            if let Ok(Some(_)) = master.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = master.kill();
        let _ = master.wait();
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.close();
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// The key exchange a fleet's connections offer first (module notes).
const QUICK_KEX: &str = "curve25519-sha256";

/// `kexalgorithms` from `ssh -G` (the effective configuration), or `None`
/// when this ssh cannot say.
fn kex_algorithms(mut cmd: Command) -> Option<String> {
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
        l.strip_prefix("kexalgorithms ")
            .map(|v| v.trim().to_string())
    })
}

/// OpenSSH's default key exchange list for `program`: `ssh -G` with no
/// configuration file at all. Asked once per program.
fn default_kex(program: &Path) -> Option<String> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Option<String>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(v) = cache.lock().ok()?.get(program) {
        return v.clone();
    }
    let mut cmd = Command::new(program);
    cmd.args(["-G", "-F", "/dev/null", "localhost"]);
    let v = kex_algorithms(cmd);
    cache.lock().ok()?.insert(program.to_path_buf(), v.clone());
    v
}

/// `list` (comma-separated) with `quick` moved ahead of the first
/// sntrup761 hybrid, or `None` when there is nothing to move. Faster
/// post-quantum exchanges (OpenSSH 9.9's ML-KEM) keep their place.
fn prefer(list: &str, quick: &str) -> Option<String> {
    let mut names: Vec<&str> = list.split(',').collect();
    let slow = names.iter().position(|n| n.starts_with("sntrup761"))?;
    let at = names.iter().position(|n| *n == quick)?;
    if at < slow {
        return None;
    }
    names.remove(at);
    names.insert(slow, quick);
    Some(names.join(","))
}

/// How long a session that lost its connection waits for the master to
/// log why (the master notices within its keep-alive period; when the
/// session noticed first, the master's word follows in a moment).
const LOST_WAIT: Duration = Duration::from_secs(3);

/// A run record is a few megabytes at most; this bounds a runaway host.
pub(crate) const MAX_STDOUT: u64 = 256 * 1024 * 1024;
pub(crate) const MAX_STDERR: u64 = 1024 * 1024;

fn collect(pipe: impl Read + Send + 'static, limit: u64) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let mut pipe = pipe;
        let _ = pipe.by_ref().take(limit).read_to_end(&mut buf);
        // Drain the rest so the writer is never blocked on a full pipe.
        let _ = std::io::copy(&mut pipe, &mut std::io::sink());
        buf
    })
}

/// `s` quoted for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_from_ssh_errors() {
        assert_eq!(
            classify("root@10.0.0.1: Permission denied (publickey).\r\n"),
            "key refused (Permission denied)"
        );
        assert_eq!(
            classify("ssh: connect to host 10.0.0.1 port 22: Connection refused\n"),
            "connection refused"
        );
        assert_eq!(
            classify("ssh: connect to host 10.9.9.9 port 22: Connection timed out\n"),
            "unreachable (connection timed out)"
        );
        assert_eq!(
            classify("Host key verification failed.\n"),
            "host key verification failed (see known_hosts)"
        );
        assert_eq!(classify("\n weird thing \n\n"), "ssh failed: weird thing");
        assert_eq!(classify(""), "ssh failed");
        assert_eq!(
            classify("Timeout, server 10.0.0.1 not responding.\r\n"),
            "connection lost (Timeout, server not responding)"
        );
        assert_eq!(
            classify("Connection to 10.0.0.1 closed by remote host.\r\n"),
            "connection lost (closed by the host)"
        );
    }

    /// A session's stderr is mostly the remote's: progress lines never
    /// become the reason.
    #[test]
    fn only_ssh_own_lines_of_a_session_count() {
        let progress = "[9/68] hash.sha256 block_size=1048576 threads=1: 513.5 MB/s ±19.0%\n";
        assert_eq!(own_lines(progress), "");
        let both = format!("{progress}Timeout, server 10.0.0.1 not responding.\r\n");
        assert_eq!(own_lines(&both), "Timeout, server 10.0.0.1 not responding.");
    }

    #[test]
    fn the_quick_key_exchange_goes_ahead_of_sntrup761_only() {
        assert_eq!(
            prefer(
                "sntrup761x25519-sha512@openssh.com,curve25519-sha256,ecdh-sha2-nistp256",
                QUICK_KEX
            )
            .as_deref(),
            Some("curve25519-sha256,sntrup761x25519-sha512@openssh.com,ecdh-sha2-nistp256")
        );
        assert_eq!(
            prefer(
                "mlkem768x25519-sha256,sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,curve25519-sha256",
                QUICK_KEX
            )
            .as_deref(),
            Some("mlkem768x25519-sha256,curve25519-sha256,sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com")
        );
        assert_eq!(
            prefer(
                "curve25519-sha256,sntrup761x25519-sha512@openssh.com",
                QUICK_KEX
            ),
            None
        );
        assert_eq!(
            prefer("curve25519-sha256,ecdh-sha2-nistp256", QUICK_KEX),
            None
        );
        assert_eq!(
            prefer(
                "sntrup761x25519-sha512@openssh.com,ecdh-sha2-nistp256",
                QUICK_KEX
            ),
            None
        );
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("--profile"), "--profile");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$(rm -rf /)"), "'$(rm -rf /)'");
    }
}
