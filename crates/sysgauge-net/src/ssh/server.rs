//! The private `sshd` of local mode: started from a directory of its own
//! (inside the run's scratch directory) with freshly generated host keys
//! (ed25519, ECDSA, RSA) and a client key, listening on 127.0.0.1 at a free
//! port, public-key authentication only and only for the current user, and
//! every algorithm the OpenSSH build supports enabled, legacy ones included
//! (for measurement only: it listens on loopback and lives for one run).
//!
//! Shape and reasons:
//! - `/usr/sbin/sshd` is run by absolute path (sshd re-executes itself for
//!   every connection and refuses a relative path), in the foreground
//!   (`-D`), logging to a file (`-E`) that is kept for diagnosis until the
//!   directory is removed; its tail goes into every start-up error.
//! - `StrictModes no`: the scratch directory's permissions are not what
//!   sshd demands of a home directory, and nothing else can log in anyway.
//!   Since sshd then checks nothing, `LocalServer::start` checks instead
//!   that the directory is ours and closed to everyone else (scratch
//!   directories are created 0700): otherwise a group member could swap
//!   authorized_keys or sshd_config.
//!   `UsePAM no`: PAM would want a real login (and root's PAM stack may
//!   refuse key-only logins in odd ways); keys are all we need.
//! - As root: `PermitRootLogin prohibit-password` (keys only), and the
//!   privilege separation directory `/run/sshd` is created if missing
//!   (sshd refuses to start without it; an empty root-owned directory is
//!   harmless). As another user sshd cannot switch users, so it serves that
//!   user only, which is all we want.
//! - The algorithm lists come from `ssh -Q` (the same OpenSSH build) and
//!   are checked with `sshd -t`; a name this sshd does not know is dropped
//!   one by one. Options newer than some sshd versions (`PerSourcePenalties`,
//!   which would refuse our own probes after a few rejected negotiations)
//!   are added only when `sshd -t` accepts them.
//! - Readiness is the "Server listening on 127.0.0.1 port N" log line, not a
//!   probing connection. A port taken between our choosing it and sshd
//!   binding it is retried with another.
//! - Stopping: SIGTERM, a bounded wait, SIGKILL; then any per-connection
//!   sshd process still alive below it (they start their own sessions, so
//!   the process group does not reach them) is found through /proc and
//!   killed. sshd gets SIGTERM if sysgauge dies (`PR_SET_PDEATHSIG`). Drop
//!   stops it, so every path out (success, error, Ctrl-C) stops it.

use super::algorithms::ClientAlgorithms;
use super::client::ChildGuard;
use rustix::process::{kill_process, Pid, Signal};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use sysgauge_core::CancelToken;
use thiserror::Error;

/// Where Debian (and most distributions) install the server.
pub const SSHD: &str = "/usr/sbin/sshd";

/// The privilege separation directory sshd needs when started as root.
pub const PRIVSEP_DIR: &str = "/run/sshd";

/// How long sshd may take to start listening (RSA host key loading and
/// a busy machine included).
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// How long sshd may take to exit after SIGTERM.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Error)]
pub enum ServerError {
    #[error("{SSHD} is not installed")]
    Missing,
    #[error("{what}: {detail}")]
    Setup { what: String, detail: String },
    #[error("sshd did not start: {detail}{}", log_tail(.log))]
    Start { detail: String, log: String },
    #[error("interrupted")]
    Cancelled,
}

fn log_tail(log: &str) -> String {
    let t = super::client::tail_lines(log, 4);
    if t.is_empty() {
        String::new()
    } else {
        format!(" (sshd log: {t})")
    }
}

/// `dir` must be owned by us and have no group or other permissions (see
/// the module doc on `StrictModes no`).
fn check_private(dir: &Path) -> Result<(), ServerError> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(dir)
        .map_err(|e| setup(format!("cannot inspect {}", dir.display()), e))?;
    let uid = rustix::process::geteuid().as_raw();
    if !m.is_dir() || m.uid() != uid || m.mode() & 0o077 != 0 {
        return Err(setup(
            format!("refusing to run the private sshd from {}", dir.display()),
            format!(
                "the directory must be ours and mode 0700 (it is {:o}, owner {})",
                m.mode() & 0o7777,
                m.uid()
            ),
        ));
    }
    Ok(())
}

fn setup(what: impl Into<String>, detail: impl std::fmt::Display) -> ServerError {
    ServerError::Setup {
        what: what.into(),
        detail: detail.to_string(),
    }
}

/// Which algorithms the private server enables; `None` means everything the
/// client lists. Tests restrict them to build a server that rejects things.
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    pub ciphers: Option<Vec<String>>,
    pub macs: Option<Vec<String>>,
    pub kex: Option<Vec<String>>,
}

/// The current user's name (from the password database, as sshd sees it).
pub fn current_user() -> Result<String, String> {
    let uid = nix::unistd::Uid::effective();
    match nix::unistd::User::from_uid(uid) {
        Ok(Some(user)) => Ok(user.name),
        _ => Err(format!("user id {uid} is not in the password database")),
    }
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A running private sshd; stopped on drop.
pub struct LocalServer {
    dir: PathBuf,
    child: Option<ChildGuard>,
    port: u16,
    user: String,
    config: PathBuf,
    log: PathBuf,
    client_key: PathBuf,
    known_hosts: PathBuf,
    host_key_lines: Vec<String>,
}

impl std::fmt::Debug for LocalServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalServer")
            .field("dir", &self.dir)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("pid", &self.pid())
            .finish()
    }
}

fn keygen(path: &Path, kind: &str, comment: &str) -> Result<(), ServerError> {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", kind, "-N", "", "-C", comment, "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| setup("cannot run ssh-keygen", e))?;
    if !out.status.success() {
        return Err(setup(
            format!("ssh-keygen -t {kind} failed"),
            String::from_utf8_lossy(&out.stderr).trim(),
        ));
    }
    Ok(())
}

fn read(path: &Path) -> Result<String, ServerError> {
    std::fs::read_to_string(path).map_err(|e| setup(format!("cannot read {}", path.display()), e))
}

fn write(path: &Path, text: &str) -> Result<(), ServerError> {
    std::fs::write(path, text).map_err(|e| setup(format!("cannot write {}", path.display()), e))
}

/// `sshd -t` on a config (plus `-o` overrides): Ok or its complaint.
fn sshd_test(config: &Path, overrides: &[String]) -> Result<(), String> {
    let mut cmd = Command::new(SSHD);
    cmd.arg("-t").arg("-f").arg(config);
    for o in overrides {
        cmd.arg("-o").arg(o);
    }
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {SSHD}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// A port on 127.0.0.1 that was free a moment ago.
fn free_port() -> Result<u16, ServerError> {
    let l = std::net::TcpListener::bind(("127.0.0.1", 0))
        .map_err(|e| setup("cannot find a free port on 127.0.0.1", e))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| setup("cannot find a free port on 127.0.0.1", e))
}

struct ConfigText<'a> {
    dir: &'a Path,
    port: u16,
    user: &'a str,
    lists: [(&'static str, Vec<String>); 5],
    optional: Vec<String>,
}

impl ConfigText<'_> {
    fn render(&self) -> String {
        let d = self.dir.display();
        let mut s = format!(
            "# Private sshd of one sysgauge run: loopback only, keys only, this user only.\n\
             Port {port}\n\
             ListenAddress 127.0.0.1\n\
             HostKey {d}/ssh_host_ed25519_key\n\
             HostKey {d}/ssh_host_ecdsa_key\n\
             HostKey {d}/ssh_host_rsa_key\n\
             PidFile {d}/sshd.pid\n\
             AuthorizedKeysFile {d}/authorized_keys\n\
             AllowUsers {user}\n\
             PermitRootLogin prohibit-password\n\
             PubkeyAuthentication yes\n\
             AuthenticationMethods publickey\n\
             PasswordAuthentication no\n\
             KbdInteractiveAuthentication no\n\
             HostbasedAuthentication no\n\
             UsePAM no\n\
             StrictModes no\n\
             UseDNS no\n\
             PrintMotd no\n\
             PrintLastLog no\n\
             X11Forwarding no\n\
             AllowTcpForwarding no\n\
             AllowAgentForwarding no\n\
             PermitTunnel no\n\
             LoginGraceTime 30\n\
             ClientAliveInterval 10\n\
             ClientAliveCountMax 3\n\
             MaxStartups 100\n\
             LogLevel VERBOSE\n",
            port = self.port,
            user = self.user,
        );
        for (keyword, list) in &self.lists {
            s.push_str(&format!("{keyword} {}\n", list.join(",")));
        }
        for line in &self.optional {
            s.push_str(line);
            s.push('\n');
        }
        s
    }
}

impl LocalServer {
    /// Generate keys and a config in `dir` (which must exist and be
    /// private to this run) and start sshd.
    pub fn start(
        dir: &Path,
        client: &ClientAlgorithms,
        options: &ServerOptions,
        cancel: &CancelToken,
    ) -> Result<LocalServer, ServerError> {
        check_private(dir)?;
        if !Path::new(SSHD).is_file() {
            return Err(ServerError::Missing);
        }
        let user = current_user().map_err(|e| setup("cannot find the current user", e))?;
        if is_root() && !Path::new(PRIVSEP_DIR).is_dir() {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .mode(0o755)
                .create(PRIVSEP_DIR)
                .map_err(|e| setup(format!("cannot create {PRIVSEP_DIR}"), e))?;
        }
        for (name, kind) in [
            ("ssh_host_ed25519_key", "ed25519"),
            ("ssh_host_ecdsa_key", "ecdsa"),
            ("ssh_host_rsa_key", "rsa"),
        ] {
            if cancel.is_cancelled() {
                return Err(ServerError::Cancelled);
            }
            keygen(&dir.join(name), kind, "sysgauge-private-sshd")?;
        }
        let client_key = dir.join("id_ed25519");
        keygen(&client_key, "ed25519", "sysgauge-client")?;
        let public = read(&dir.join("id_ed25519.pub"))?;
        write(&dir.join("authorized_keys"), &public)?;
        let mut host_key_lines = Vec::new();
        for name in [
            "ssh_host_ed25519_key",
            "ssh_host_ecdsa_key",
            "ssh_host_rsa_key",
        ] {
            let text = read(&dir.join(format!("{name}.pub")))?;
            let key: Vec<&str> = text.split_whitespace().take(2).collect();
            if key.len() == 2 {
                host_key_lines.push(key.join(" "));
            }
        }
        let mut server = LocalServer {
            dir: dir.to_path_buf(),
            child: None,
            port: 0,
            user,
            config: dir.join("sshd_config"),
            log: dir.join("sshd.log"),
            client_key,
            known_hosts: dir.join("known_hosts"),
            host_key_lines,
        };
        let lists = server.algorithm_lists(client, options)?;
        let optional = vec!["PerSourcePenalties no".to_string()];
        let mut last = String::new();
        for _attempt in 0..3 {
            if cancel.is_cancelled() {
                return Err(ServerError::Cancelled);
            }
            let port = free_port()?;
            server.port = port;
            let mut text = ConfigText {
                dir,
                port,
                user: &server.user,
                lists: lists.clone(),
                optional: optional.clone(),
            };
            write(&server.config, &text.render())?;
            if sshd_test(&server.config, &[]).is_err() {
                text.optional.clear();
                write(&server.config, &text.render())?;
            }
            if let Err(e) = sshd_test(&server.config, &[]) {
                return Err(ServerError::Start {
                    detail: format!("sshd -t rejects the generated configuration: {e}"),
                    log: String::new(),
                });
            }
            let kh: String = server
                .host_key_lines
                .iter()
                .map(|k| format!("[127.0.0.1]:{port} {k}\n"))
                .collect();
            write(&server.known_hosts, &kh)?;
            match server.launch(cancel) {
                Ok(()) => return Ok(server),
                Err(ServerError::Start { detail, log })
                    if log.contains("Address already in use") =>
                {
                    last = detail;
                    continue;
                }
                Err(e) => return Err(e),
            }
        }
        Err(ServerError::Start {
            detail: format!("no free port after 3 attempts ({last})"),
            log: String::new(),
        })
    }

    /// The five algorithm lists, each checked against this sshd.
    fn algorithm_lists(
        &self,
        client: &ClientAlgorithms,
        options: &ServerOptions,
    ) -> Result<[(&'static str, Vec<String>); 5], ServerError> {
        let pick =
            |o: &Option<Vec<String>>, all: &[String]| o.clone().unwrap_or_else(|| all.to_vec());
        let mut lists = [
            ("Ciphers", pick(&options.ciphers, &client.ciphers)),
            ("MACs", pick(&options.macs, &client.macs)),
            ("KexAlgorithms", pick(&options.kex, &client.kex)),
            ("HostKeyAlgorithms", client.host_key_algorithms.clone()),
            ("PubkeyAcceptedAlgorithms", client.pubkey_algorithms.clone()),
        ];
        // A minimal config to test single names against.
        let probe_config = self.dir.join("sshd_config.names");
        let d = self.dir.display();
        write(
            &probe_config,
            &format!(
                "ListenAddress 127.0.0.1\nHostKey {d}/ssh_host_ed25519_key\nUsePAM no\nPidFile {d}/sshd-test.pid\n"
            ),
        )?;
        for (keyword, list) in lists.iter_mut() {
            if list.is_empty() {
                continue;
            }
            let all = format!("{keyword}={}", list.join(","));
            if sshd_test(&probe_config, &[all]).is_ok() {
                continue;
            }
            // Some name is unknown to this sshd: keep those it accepts.
            list.retain(|name| sshd_test(&probe_config, &[format!("{keyword}={name}")]).is_ok());
        }
        let _ = std::fs::remove_file(&probe_config);
        for (keyword, list) in &lists {
            if list.is_empty() {
                return Err(setup(
                    "cannot configure the private sshd",
                    format!("{SSHD} accepts none of the {keyword} this ssh client lists"),
                ));
            }
        }
        Ok(lists)
    }

    fn launch(&mut self, cancel: &CancelToken) -> Result<(), ServerError> {
        let _ = std::fs::remove_file(&self.log);
        let mut cmd = Command::new(SSHD);
        cmd.arg("-D")
            .arg("-f")
            .arg(&self.config)
            .arg("-E")
            .arg(&self.log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut child =
            ChildGuard::spawn(&mut cmd, libc::SIGTERM).map_err(|e| ServerError::Start {
                detail: format!("cannot run {SSHD}: {e}"),
                log: String::new(),
            })?;
        let listening = format!("Server listening on 127.0.0.1 port {}", self.port);
        let start = Instant::now();
        loop {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            if log.contains(&listening) {
                self.child = Some(child);
                return Ok(());
            }
            match child.try_wait() {
                Ok(Some(status)) => {
                    return Err(ServerError::Start {
                        detail: format!("sshd exited at start ({status})"),
                        log,
                    })
                }
                Ok(None) => {}
                Err(e) => {
                    return Err(ServerError::Start {
                        detail: format!("cannot wait for sshd: {e}"),
                        log,
                    })
                }
            }
            if cancel.is_cancelled() {
                return Err(ServerError::Cancelled);
            }
            if start.elapsed() > START_TIMEOUT {
                return Err(ServerError::Start {
                    detail: format!(
                        "sshd did not report listening on port {} within {} s",
                        self.port,
                        START_TIMEOUT.as_secs()
                    ),
                    log,
                });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }
    pub fn user(&self) -> &str {
        &self.user
    }
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// The generated client private key.
    pub fn client_key(&self) -> &Path {
        &self.client_key
    }
    /// A known_hosts file holding this server's host keys.
    pub fn known_hosts(&self) -> &Path {
        &self.known_hosts
    }
    /// The host keys as "type base64" (for building a known_hosts elsewhere).
    pub fn host_keys(&self) -> &[String] {
        &self.host_key_lines
    }
    pub fn log_path(&self) -> &Path {
        &self.log
    }
    /// The sshd log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// Stop sshd and whatever it started. Idempotent.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = child.id();
        let descendants = descendants_of(pid);
        if let Some(p) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
            let _ = kill_process(p, Signal::TERM);
        }
        let _ = child.wait_bounded(STOP_TIMEOUT);
        drop(child);
        kill_all(&descendants);
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Every live descendant of `pid` (pid, start time), from /proc.
fn descendants_of(pid: u32) -> Vec<(i32, u64)> {
    let Ok(snap) = sysgauge_host::procs::snapshot(Path::new("/proc")) else {
        return Vec::new();
    };
    let mut found: Vec<(i32, u64)> = Vec::new();
    let mut frontier = vec![i32::try_from(pid).unwrap_or(-1)];
    // Bounded by the number of processes: each is added at most once.
    while let Some(parent) = frontier.pop() {
        for p in &snap.procs {
            if p.ppid == parent && !found.iter().any(|(q, _)| *q == p.pid) {
                found.push((p.pid, p.starttime));
                frontier.push(p.pid);
            }
        }
    }
    found
}

/// Is `pid` still the process that started at `starttime`?
fn same_process(pid: i32, starttime: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|t| sysgauge_host::procs::parse_stat(&t).ok())
        .is_some_and(|p| p.starttime == starttime && p.state != 'Z')
}

/// SIGTERM, a short wait, then SIGKILL for processes that are not our
/// children (so cannot be waited for); the start time guards against a
/// reused pid.
fn kill_all(procs: &[(i32, u64)]) {
    let alive = |v: &[(i32, u64)]| -> Vec<(i32, u64)> {
        v.iter()
            .copied()
            .filter(|(p, s)| same_process(*p, *s))
            .collect()
    };
    let mut left = alive(procs);
    for sig in [Signal::TERM, Signal::KILL] {
        // Each is a process we checked is the one we found.
        for p in left.iter().filter_map(|(p, _)| Pid::from_raw(*p)) {
            let _ = kill_process(p, sig);
        }
        let start = Instant::now();
        while !left.is_empty() && start.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(10));
            left = alive(&left);
        }
        if left.is_empty() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn sshd_directory_must_be_private() {
        let base = tempfile::tempdir().unwrap();
        let scratch = sysgauge_core::scratch::ScratchDir::create_in(base.path()).unwrap();
        assert!(check_private(scratch.path()).is_ok());
        std::fs::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o775)).unwrap();
        match check_private(scratch.path()) {
            Err(e) => assert!(e.to_string().contains("0700"), "{e}"),
            Ok(()) => panic!("a group-writable directory was accepted"),
        }
    }
}
