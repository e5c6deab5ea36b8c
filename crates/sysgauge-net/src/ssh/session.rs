//! A measuring session against one SSH server: the target (the private
//! local sshd, or a remote host reached with the user's own keys), the ssh
//! command line every connection shares, the client's algorithms, and
//! discovery: which of them the server accepts, found by probing (one
//! connection restricted to one algorithm each).
//!
//! Opening a session makes one plain connection first, so an unreachable
//! host, a host key mismatch or an authentication failure is reported once,
//! clearly, before anything is measured.

use super::algorithms::{is_aead, ClientAlgorithms, Kind};
use super::client::{Input, LogLevel, Request, Restrict, SshCommand, SshError};
use super::server::{LocalServer, ServerError, ServerOptions};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use sysgauge_core::scratch::ScratchDir;
use sysgauge_core::CancelToken;

/// Where to measure.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Target {
    /// A private sshd on 127.0.0.1.
    #[default]
    Local,
    /// `[USER@]HOST[:PORT]`.
    Remote {
        user: Option<String>,
        host: String,
        port: Option<u16>,
    },
}

impl Target {
    /// `local` or `remote`: the `mode` param.
    pub fn mode(&self) -> &'static str {
        match self {
            Target::Local => "local",
            Target::Remote { .. } => "remote",
        }
    }

    /// Parse `[USER@]HOST[:PORT]` (IPv6 in brackets: `[::1]:22`).
    pub fn parse_remote(text: &str) -> Result<Target, String> {
        let t = text.trim();
        if t.is_empty() {
            return Err("--host is empty; give [USER@]HOST[:PORT]".into());
        }
        let bad = |why: &str| format!("--host '{t}': {why} (expected [USER@]HOST[:PORT])");
        let (user, rest) = match t.rsplit_once('@') {
            Some((u, r)) => (Some(u), r),
            None => (None, t),
        };
        if let Some(u) = user {
            if u.is_empty() || u.starts_with('-') || u.contains(char::is_whitespace) {
                return Err(bad("the user name is empty or malformed"));
            }
        }
        let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
            let (h, after) = inner
                .split_once(']')
                .ok_or_else(|| bad("an IPv6 address in [ ] lacks its ']'"))?;
            match after {
                "" => (h, None),
                p => (
                    h,
                    Some(
                        p.strip_prefix(':')
                            .ok_or_else(|| bad("text after ']' must be :PORT"))?,
                    ),
                ),
            }
        } else if rest.matches(':').count() == 1 {
            let (h, p) = rest.split_once(':').unwrap_or((rest, ""));
            (h, Some(p))
        } else {
            // No colon, or a bare IPv6 address (several colons, no port).
            (rest, None)
        };
        if host.is_empty()
            || host.starts_with('-')
            || host.contains(char::is_whitespace)
            || host.contains('/')
        {
            return Err(bad("the host name is empty or malformed"));
        }
        let port = match port {
            None => None,
            Some(p) => Some(
                p.parse::<u16>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| bad(&format!("'{p}' is not a port number (1-65535)")))?,
            ),
        };
        Ok(Target::Remote {
            user: user.map(str::to_string),
            host: host.to_string(),
            port,
        })
    }
}

/// Client-side settings shared by every connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientSettings {
    /// `ssh -F FILE` (remote mode: instead of ~/.ssh/config).
    pub config: Option<PathBuf>,
    /// Extra `-o KEY=VALUE` options, placed first so they win.
    pub options: Vec<String>,
    /// ssh's ConnectTimeout.
    pub connect_timeout: Duration,
}

impl Default for ClientSettings {
    fn default() -> Self {
        ClientSettings {
            config: None,
            options: Vec::new(),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

impl ClientSettings {
    /// Longest time from spawning ssh to the remote command running.
    pub fn connect_deadline(&self) -> Duration {
        self.connect_timeout * 2 + Duration::from_secs(20)
    }
    /// Longest time without progress once data flows (ServerAlive gives
    /// up after 15 s of silence on its own).
    pub fn stall_timeout(&self) -> Duration {
        Duration::from_secs(30)
    }
}

/// What a probe found about one algorithm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acceptance {
    Accepted,
    /// Rejected, with the server's offer when it said so.
    Rejected {
        offer: String,
    },
}

/// One probe's outcome: accepted or rejected (with the connection's
/// seconds), or a failure of the target.
type ProbeResult = Result<(Acceptance, f64), SshError>;

/// Discovery: every algorithm probed, with the outcome.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Discovery {
    pub probes: Vec<(Kind, String, Acceptance)>,
    /// Median wall time of a successful probe connection.
    pub probe_seconds: f64,
}

impl Discovery {
    /// The accepted names of one class, in probing order.
    pub fn accepted(&self, kind: Kind) -> Vec<String> {
        self.probes
            .iter()
            .filter(|(k, _, a)| *k == kind && *a == Acceptance::Accepted)
            .map(|(_, n, _)| n.clone())
            .collect()
    }
    pub fn rejected(&self, kind: Kind) -> Vec<String> {
        self.probes
            .iter()
            .filter(|(k, _, a)| *k == kind && *a != Acceptance::Accepted)
            .map(|(_, n, _)| n.clone())
            .collect()
    }
    /// The server's own list for a class, when a rejection revealed it.
    pub fn server_offer(&self, kind: Kind) -> Option<String> {
        self.probes.iter().find_map(|(k, _, a)| match a {
            Acceptance::Rejected { offer } if *k == kind && !offer.is_empty() => {
                Some(offer.clone())
            }
            _ => None,
        })
    }
}

/// An open session. Dropping it stops the private server and removes its
/// directory (the server first).
pub struct Session {
    target: Target,
    pub client: ClientAlgorithms,
    pub settings: ClientSettings,
    command: SshCommand,
    server: Option<LocalServer>,
    _scratch: Option<ScratchDir>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("target", &self.target)
            .field("server", &self.server)
            .finish()
    }
}

/// Why a session could not be opened: skip (a program is missing) or fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenError {
    Skip { reason: String, hint: String },
    Failed(String),
    Cancelled,
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Skip { reason, hint } => write!(f, "{reason}; {hint}"),
            OpenError::Failed(m) => f.write_str(m),
            OpenError::Cancelled => f.write_str("interrupted"),
        }
    }
}

impl From<SshError> for OpenError {
    fn from(e: SshError) -> Self {
        match e {
            SshError::Cancelled => OpenError::Cancelled,
            e => OpenError::Failed(e.to_string()),
        }
    }
}

/// The ssh client on PATH.
pub fn ssh_program() -> Result<PathBuf, OpenError> {
    sysgauge_core::bench::find_program("ssh").ok_or_else(|| OpenError::Skip {
        reason: "'ssh' is not installed".into(),
        hint: "install it (Debian/Ubuntu: apt-get install openssh-client)".into(),
    })
}

/// `-o OPTION` for each of `options`.
fn push_options<O: Into<OsString>>(args: &mut Vec<OsString>, options: impl IntoIterator<Item = O>) {
    for o in options {
        args.push("-o".into());
        args.push(o.into());
    }
}

fn common_args(settings: &ClientSettings) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    push_options(&mut a, &settings.options);
    let secs = settings.connect_timeout.as_secs().max(1);
    push_options(
        &mut a,
        [
            "BatchMode=yes".to_string(),
            format!("ConnectTimeout={secs}"),
            "ConnectionAttempts=1".into(),
            "ServerAliveInterval=5".into(),
            "ServerAliveCountMax=3".into(),
            // Compressed zeros would measure zlib, not the cipher.
            "Compression=no".into(),
            // A multiplexed connection would skip the handshake being timed.
            "ControlMaster=no".into(),
            "ControlPath=none".into(),
            "ClearAllForwardings=yes".into(),
            "ForwardAgent=no".into(),
            "ForwardX11=no".into(),
            "PermitLocalCommand=no".into(),
            "UpdateHostKeys=no".into(),
            "RequestTTY=no".into(),
        ],
    );
    // No escape character: the data is binary.
    a.push("-e".into());
    a.push("none".into());
    a
}

impl Session {
    /// Open a session: start the private server (local) or check the remote
    /// host, then make one plain connection.
    pub fn open(
        target: &Target,
        settings: &ClientSettings,
        server_options: &ServerOptions,
        scratch_base: &Path,
        cancel: &CancelToken,
    ) -> Result<Session, OpenError> {
        let ssh = ssh_program()?;
        let client = ClientAlgorithms::query(&ssh).map_err(OpenError::Failed)?;
        let mut args = Vec::new();
        let (server, scratch, destination, label) = match target {
            Target::Local => {
                if sysgauge_core::bench::find_program("ssh-keygen").is_none() {
                    return Err(OpenError::Skip {
                        reason: "'ssh-keygen' is not installed".into(),
                        hint: "install it (Debian/Ubuntu: apt-get install openssh-client)".into(),
                    });
                }
                if !Path::new(super::server::SSHD).is_file() {
                    return Err(OpenError::Skip {
                        reason: format!("{} is not installed", super::server::SSHD),
                        hint: "install it (Debian/Ubuntu: apt-get install openssh-server), or measure another host with --host".into(),
                    });
                }
                let scratch = ScratchDir::create_in(scratch_base).map_err(|e| {
                    OpenError::Failed(format!(
                        "cannot create a scratch directory in {}: {e}",
                        scratch_base.display()
                    ))
                })?;
                let server = LocalServer::start(scratch.path(), &client, server_options, cancel)
                    .map_err(|e| match e {
                        ServerError::Cancelled => OpenError::Cancelled,
                        e => OpenError::Failed(e.to_string()),
                    })?;
                args.push("-F".into());
                args.push("/dev/null".into());
                push_options(
                    &mut args,
                    [
                        "StrictHostKeyChecking=yes".to_string(),
                        format!("UserKnownHostsFile={}", server.known_hosts().display()),
                        "GlobalKnownHostsFile=/dev/null".into(),
                        "CheckHostIP=no".into(),
                        "IdentitiesOnly=yes".into(),
                        "IdentityAgent=none".into(),
                        "PreferredAuthentications=publickey".into(),
                    ],
                );
                args.push("-i".into());
                args.push(server.client_key().as_os_str().to_os_string());
                args.push("-p".into());
                args.push(server.port().to_string().into());
                args.push("-l".into());
                args.push(server.user().into());
                let label = format!("{}@127.0.0.1 port {}", server.user(), server.port());
                (Some(server), Some(scratch), "127.0.0.1".to_string(), label)
            }
            Target::Remote { user, host, port } => {
                if let Some(c) = &settings.config {
                    args.push("-F".into());
                    args.push(c.as_os_str().to_os_string());
                }
                if let Some(p) = port {
                    args.push("-p".into());
                    args.push(p.to_string().into());
                }
                if let Some(u) = user {
                    args.push("-l".into());
                    args.push(u.into());
                }
                let mut label = match user {
                    Some(u) => format!("{u}@{host}"),
                    None => host.clone(),
                };
                if let Some(p) = port {
                    label.push_str(&format!(" port {p}"));
                }
                (None, None, host.clone(), label)
            }
        };
        let mut base = common_args(settings);
        base.extend(args);
        let session = Session {
            target: target.clone(),
            client,
            settings: settings.clone(),
            command: SshCommand {
                program: ssh,
                base_args: base,
                destination,
                target: label,
            },
            server,
            _scratch: scratch,
        };
        // One plain connection: reachability, host key, authentication.
        // A negotiation failure here is not fatal (probing decides).
        match session.connect(&Restrict::default(), cancel) {
            Ok(_) => {}
            Err(SshError::NoMatch { .. }) => {}
            Err(e) => return Err(session.with_server_log(e)),
        }
        Ok(session)
    }

    pub fn target(&self) -> &Target {
        &self.target
    }
    pub fn mode(&self) -> &'static str {
        self.target.mode()
    }
    /// For messages: "root@127.0.0.1 port 40123".
    pub fn label(&self) -> &str {
        &self.command.target
    }
    pub fn command(&self) -> &SshCommand {
        &self.command
    }
    pub fn server(&self) -> Option<&LocalServer> {
        self.server.as_ref()
    }

    /// An error with the private server's log tail (local mode), which often
    /// says more than the client.
    pub fn with_server_log(&self, e: SshError) -> OpenError {
        match (&e, &self.server) {
            (SshError::Cancelled, _) => OpenError::Cancelled,
            (_, Some(s)) => {
                let tail = super::client::tail_lines(&s.log(), 3);
                if tail.is_empty() {
                    OpenError::Failed(e.to_string())
                } else {
                    OpenError::Failed(format!("{e} (sshd log: {tail})"))
                }
            }
            _ => OpenError::Failed(e.to_string()),
        }
    }

    /// One connection running `true` (connect, authenticate, run it).
    pub fn connect(&self, restrict: &Restrict, cancel: &CancelToken) -> Result<f64, SshError> {
        self.run_command(restrict, "true", cancel)
            .map(|o| o.ended.saturating_sub(o.spawned).as_secs_f64())
    }

    /// One connection running `remote_command` with no input (times from
    /// the start of the call).
    pub fn run_command(
        &self,
        restrict: &Restrict,
        remote_command: &str,
        cancel: &CancelToken,
    ) -> Result<super::client::Outcome, SshError> {
        let start = Instant::now();
        let req = Request {
            restrict,
            log_level: LogLevel::Info,
            remote_command,
            input: Input::Null,
            connect_deadline: self.settings.connect_deadline(),
            stall_timeout: self.settings.stall_timeout(),
        };
        self.command.run(&req, &[], &|| start.elapsed(), cancel)
    }

    /// Probe each named algorithm: a connection restricted to it (and, for
    /// a MAC, to the ciphers that use one) succeeds or is rejected. Up to
    /// `parallel` probes run at once. Stops at the first failure that is
    /// not a rejection (the target itself is broken).
    pub fn discover(
        &self,
        names: &[(Kind, Vec<String>)],
        parallel: usize,
        cancel: &CancelToken,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Discovery, SshError> {
        let mac_ciphers: Vec<String> = self
            .client
            .ciphers
            .iter()
            .filter(|c| !is_aead(c))
            .cloned()
            .collect();
        let jobs: Vec<(Kind, String)> = names
            .iter()
            .flat_map(|(k, v)| v.iter().map(move |n| (*k, n.clone())))
            .collect();
        let results: std::sync::Mutex<Vec<Option<ProbeResult>>> =
            std::sync::Mutex::new(vec![None; jobs.len()]);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let done = std::sync::atomic::AtomicUsize::new(0);
        let failed = std::sync::atomic::AtomicBool::new(false);
        let total = jobs.len();
        std::thread::scope(|s| {
            for _ in 0..parallel.clamp(1, 8) {
                s.spawn(|| loop {
                    use std::sync::atomic::Ordering;
                    if failed.load(Ordering::SeqCst) || cancel.is_cancelled() {
                        return;
                    }
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some((kind, name)) = jobs.get(i) else {
                        return;
                    };
                    let restrict = match kind {
                        Kind::Cipher => Restrict {
                            cipher: Some(name.clone()),
                            ..Default::default()
                        },
                        Kind::Mac => Restrict {
                            cipher: Some(mac_ciphers.join(",")),
                            mac: Some(name.clone()),
                            ..Default::default()
                        },
                        Kind::Kex => Restrict {
                            kex: Some(name.clone()),
                            ..Default::default()
                        },
                    };
                    let r = match self.connect(&restrict, cancel) {
                        Ok(secs) => Ok((Acceptance::Accepted, secs)),
                        // A MAC probe can also fail on the cipher (the
                        // server takes no cipher that uses a MAC): the MAC
                        // cannot be used either way.
                        Err(SshError::NoMatch { kind: k, offer, .. }) => Ok((
                            Acceptance::Rejected {
                                offer: if k == *kind { offer } else { String::new() },
                            },
                            0.0,
                        )),
                        Err(e) => {
                            failed.store(true, Ordering::SeqCst);
                            Err(e)
                        }
                    };
                    if let Ok(mut v) = results.lock() {
                        v[i] = Some(r);
                    }
                    progress(done.fetch_add(1, Ordering::SeqCst) + 1, total);
                });
            }
        });
        if cancel.is_cancelled() {
            return Err(SshError::Cancelled);
        }
        let results = results.into_inner().unwrap_or_default();
        let mut d = Discovery::default();
        let mut times = Vec::new();
        for ((kind, name), r) in jobs.into_iter().zip(results) {
            match r {
                Some(Ok((a, secs))) => {
                    if a == Acceptance::Accepted {
                        times.push(secs);
                    }
                    d.probes.push((kind, name, a));
                }
                Some(Err(e)) => return Err(e),
                None => {
                    if failed.load(std::sync::atomic::Ordering::SeqCst) {
                        continue;
                    }
                    return Err(SshError::Cancelled);
                }
            }
        }
        d.probe_seconds = sysgauge_stats::Summary::from_samples(&times)
            .map(|s| s.median)
            .unwrap_or(0.0);
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(user: Option<&str>, host: &str, port: Option<u16>) -> Target {
        Target::Remote {
            user: user.map(str::to_string),
            host: host.to_string(),
            port,
        }
    }

    #[test]
    fn host_syntax() {
        let p = |s: &str| Target::parse_remote(s);
        assert_eq!(p("pi"), Ok(remote(None, "pi", None)));
        assert_eq!(p("me@pi:2222"), Ok(remote(Some("me"), "pi", Some(2222))));
        assert_eq!(p("[::1]:22"), Ok(remote(None, "::1", Some(22))));
        assert_eq!(
            p("root@[fe80::1]"),
            Ok(remote(Some("root"), "fe80::1", None))
        );
        assert_eq!(p("::1"), Ok(remote(None, "::1", None)));
        for bad in [
            "",
            "@pi",
            "-oProxyCommand=x",
            "pi:0",
            "pi:70000",
            "pi:",
            "[::1",
            "[::1]x",
            "a b",
            "me@",
        ] {
            let e = p(bad).err().unwrap_or_default();
            assert!(!e.is_empty(), "{bad} should be refused");
        }
        assert!(p("pi:ssh")
            .err()
            .unwrap_or_default()
            .contains("not a port number"));
        assert_eq!(Target::Local.mode(), "local");
        assert_eq!(remote(None, "x", None).mode(), "remote");
    }

    #[test]
    fn discovery_lists() {
        let d = Discovery {
            probes: vec![
                (Kind::Cipher, "a".into(), Acceptance::Accepted),
                (
                    Kind::Cipher,
                    "b".into(),
                    Acceptance::Rejected {
                        offer: "a,c".into(),
                    },
                ),
                (Kind::Mac, "m".into(), Acceptance::Accepted),
            ],
            probe_seconds: 0.1,
        };
        assert_eq!(d.accepted(Kind::Cipher), ["a"]);
        assert_eq!(d.rejected(Kind::Cipher), ["b"]);
        assert_eq!(d.server_offer(Kind::Cipher).as_deref(), Some("a,c"));
        assert_eq!(d.server_offer(Kind::Mac), None);
    }
}
