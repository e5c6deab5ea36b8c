//! What a fleet run does on one host, in two ssh sessions (each costs a
//! shell on the host and a round trip, so the steps share them wherever a
//! failure can still be told apart):
//! 1. connect (one multiplexed OpenSSH connection);
//! 2. one session, answered in two steps: the host prints its `uname -m`,
//!    a private 0700 directory it made with `mktemp -d` under its
//!    `$TMPDIR` (or /tmp), named with a nonce of this run, and whether it
//!    has a working `zstd`; sysgauge picks the binary for that architecture
//!    (the running one when it matches, else one given with `--binary
//!    ARCH=PATH`; none is a failure naming the architecture) and sends its
//!    SHA-256 and the binary itself on the session's stdin, as one zstd
//!    frame when the host can unpack it; the host writes it, makes it
//!    executable, checks it (the zstd frame's checksum, or `sha256sum -c`
//!    for a plain copy), runs `sysgauge SUBCOMMAND ARGS --json -
//!    --no-store` with `TMPDIR` pointing into the directory (so the run's
//!    scratch space goes too), and removes the directory whatever the run
//!    did (a marker on stderr when it could not); the run record comes
//!    back on stdout;
//! 3. only when step 2 was cut off (the timeout, Ctrl-C, a lost
//!    connection): a clean-up session. It finds the directory by its name,
//!    or by the nonce when the host's answer never came. On timeout or
//!    Ctrl-C the binary is deleted first (so a session still on its way to
//!    start it cannot), then the remote sysgauge (found by its path in our
//!    directory with `ps`) is sent SIGINT (it cleans up its scratch and
//!    stops), then SIGKILL if it lingers, then the directory goes.
//!
//! The host needs a POSIX shell, `uname`, `mktemp`, `cat`, `chmod`,
//! `sha256sum`, `ps`, `awk`, `grep` and `rm` (coreutils or busybox): what any Linux
//! system has. `zstd` and `perl` are used when present (fewer bytes on the
//! wire; less of the host's CPU, see [`placement_script`]).

use crate::arch::{self, Built};
use crate::inventory::Host;
use crate::ssh::{
    last_line, shell_quote, Connection, Output, SshError, SshSettings, Wind, MAX_STDERR, MAX_STDOUT,
};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use sysgauge_core::file::{read_regular_file, FileError};
use sysgauge_core::CancelToken;

/// A sysgauge binary for one architecture.
#[derive(Debug, Clone)]
pub struct Binary {
    pub path: PathBuf,
    pub sha256: String,
    pub bytes: u64,
    /// What the file says it is built for.
    pub built: Built,
    packed: Packed,
}

/// The binary as one zstd frame, for hosts that have `zstd`: made once
/// (in the background, from [`Binary::load`]) and shared by every host and
/// clone; `None` when it could not be made or would be no smaller.
#[derive(Clone, Default)]
struct Packed {
    frame: Arc<OnceLock<Option<Arc<[u8]>>>>,
    /// A thread makes it from the bytes that were checked.
    making: bool,
}

impl std::fmt::Debug for Packed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.frame.get() {
            Some(Some(z)) => write!(f, "Packed({} bytes)", z.len()),
            Some(None) => f.write_str("Packed(none)"),
            None => f.write_str("Packed(pending)"),
        }
    }
}

/// zstd's own default level: a 19.4 MB release binary became 7.8 MB in
/// 65 ms on the driving machine (once per run); level 1 left 8.8 MB in
/// 37 ms, level 6 took 160 ms for 7.3 MB (docs/performance.md).
const ZSTD_LEVEL: i32 = 3;

/// The largest binary a fleet run sends. It is held in memory (and its
/// zstd form too) for the whole run; a release build is tens of MiB, a
/// debug build a few hundred.
pub const MAX_BINARY_BYTES: u64 = 1 << 30;

/// One zstd frame with the checksum of its content (XXH64), which
/// `zstd -d` on the host verifies as it writes the binary.
fn pack(data: &[u8]) -> Option<Arc<[u8]>> {
    let mut z = zstd::bulk::Compressor::new(ZSTD_LEVEL).ok()?;
    z.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))
        .ok()?;
    z.compress(data)
        .ok()
        .filter(|z| z.len() < data.len())
        .map(Arc::from)
}

impl Binary {
    /// Reads `path` (a regular file of at most [`MAX_BINARY_BYTES`]; `what`
    /// names it in errors, e.g. `--binary aarch64=`) and computes its
    /// checksum; its zstd form is made in the background.
    pub fn load(path: &Path, what: &str) -> Result<Binary, FileError> {
        let data = read_regular_file(path, what, MAX_BINARY_BYTES)?;
        let sha256 = hex_sha256(&data);
        let bytes = data.len() as u64;
        let built = Built::of(&data);
        let packed = Packed {
            making: true,
            ..Packed::default()
        };
        let cell = Arc::clone(&packed.frame);
        std::thread::spawn(move || cell.get_or_init(|| pack(&data)).is_some());
        Ok(Binary {
            path: path.to_path_buf(),
            sha256,
            bytes,
            built,
            packed,
        })
    }

    /// The binary as one zstd frame (waits while it is being made), or
    /// `None` when only the plain binary can be sent. Should it have to be
    /// made here from the file (a `Binary` not from [`Binary::load`]), it
    /// is made only when the file still has the checksum: the host checks
    /// the frame, not the SHA-256.
    pub fn packed(&self) -> Option<Arc<[u8]>> {
        if self.packed.making {
            return self.packed.frame.wait().clone();
        }
        self.packed
            .frame
            .get_or_init(|| {
                read_regular_file(&self.path, "", MAX_BINARY_BYTES)
                    .ok()
                    .filter(|d| hex_sha256(d) == self.sha256)
                    .and_then(|d| pack(&d))
            })
            .clone()
    }
}

fn hex_sha256(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The binaries a fleet run can place, by canonical architecture.
#[derive(Debug, Clone, Default)]
pub struct Binaries {
    by_arch: BTreeMap<String, Binary>,
}

impl Binaries {
    /// The running binary, for the architecture its file says, and `extra`
    /// (`--binary NAME=PATH`, which wins for its architecture). An error
    /// names a binary whose file does not fit its name (see
    /// [`arch::resolve`]).
    pub fn new(running: Option<Binary>, extra: Vec<(String, Binary)>) -> Result<Binaries, String> {
        let mut by_arch = BTreeMap::new();
        if let Some(b) = running {
            by_arch.insert(arch::of_running(&b.built), b);
        }
        for (name, b) in extra {
            let a = arch::resolve(&name, &b.built)
                .map_err(|e| format!("--binary {name}={}: {e}", b.path.display()))?;
            by_arch.insert(a, b);
        }
        Ok(Binaries { by_arch })
    }

    /// The binary for a host whose `uname -m` said `uname`: one for its
    /// own architecture, else one whose code it runs (ARMv6 on ARMv7).
    pub fn for_uname(&self, uname: &str) -> Option<&Binary> {
        arch::runnable_on(&arch::canonical_arch(uname))
            .into_iter()
            .find_map(|a| self.by_arch.get(a))
    }

    /// The architectures there is a binary for.
    pub fn arches(&self) -> Vec<&str> {
        self.by_arch.keys().map(String::as_str).collect()
    }
}

/// Where a host is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stage {
    Connecting,
    /// The binary for `arch` (`bytes` long; `sent` bytes on the wire,
    /// fewer when zstd-compressed) being copied, then run.
    Running {
        arch: String,
        bytes: u64,
        sent: u64,
    },
    CleaningUp,
}

/// How a host ended, when not with a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// A short reason for the closing table.
    pub reason: String,
    /// True when Ctrl-C stopped it (not the host's fault; retried later).
    pub interrupted: bool,
}

impl Failure {
    /// A failure of the host's (not an interruption).
    pub fn new(reason: impl Into<String>) -> Failure {
        Failure {
            reason: reason.into(),
            interrupted: false,
        }
    }
}

impl From<SshError> for Failure {
    fn from(e: SshError) -> Failure {
        Failure {
            interrupted: e == SshError::Cancelled,
            reason: e.to_string(),
        }
    }
}

/// One host's result.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// `uname -m`, once known.
    pub arch: Option<String>,
    /// The run record's JSON text, or why there is none.
    pub record: Result<String, Failure>,
    pub duration: Duration,
    /// Set when the temporary directory could not be removed.
    pub cleanup_problem: Option<String>,
}

/// What every host runs, and how.
#[derive(Debug, Clone)]
pub struct Plan {
    pub binaries: Binaries,
    /// The sysgauge command line on the host, without `--json - --no-store`
    /// (e.g. `run --profile quick`).
    pub args: Vec<String>,
    pub timeout: Duration,
    pub ssh: SshSettings,
    /// The private directory for control sockets and ssh logs.
    pub control_dir: PathBuf,
}

/// How long clean-up may take after a failure or Ctrl-C: its script
/// waits up to about 20 s by itself (two rounds of SIGINT, 5 s, SIGKILL,
/// 5 s; see `clean_up`), plus the ssh round trip on a busy host.
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the clean-up lets a stopped `fleet run` clean up after SIGINT
/// before it sends SIGKILL: a benchmark may have scratch files outside the
/// private directory (`disk --path`), which only it can remove.
pub const RUN_GRACE: Duration = Duration::from_secs(5);

/// A directory name `mktemp -d` may print that is safe to put in a shell
/// command unquoted-equivalent (we quote it anyway), made for this run
/// (its name carries the run's `nonce`).
fn plausible_dir(s: &str, nonce: &str) -> bool {
    s.starts_with('/')
        && s.len() > 1
        && !s.contains("..")
        && s.rsplit('/')
            .next()
            .is_some_and(|name| name.starts_with(&format!("sysgauge-fleet.{nonce}")))
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c))
}

/// A name part for this run's directory on a host, so that a clean-up can
/// find the directory even when the host's answer naming it never came.
fn new_nonce() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = [0u8; 10];
    rand::fill(&mut bytes);
    bytes
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}

/// Where this run's directory is on a host: named by the host's answer,
/// or only known by the run's nonce (the answer was cut off).
#[derive(Debug, Clone)]
enum Spot {
    Dir(String),
    Nonce(String),
}

impl Spot {
    /// Shell words: the directory's path (or its prefix) as `pre`, and the
    /// glob that completes it.
    fn shell(&self) -> (String, &'static str) {
        match self {
            Spot::Dir(d) => (shell_quote(d), ""),
            Spot::Nonce(n) => (
                format!("\"${{TMPDIR:-/tmp}}/sysgauge-fleet.{n}\""),
                "??????",
            ),
        }
    }
}

/// Runs the whole procedure on `host` (index `n`), reporting stages.
pub fn run_host(
    host: &Host,
    n: usize,
    plan: &Plan,
    cancel: &CancelToken,
    stage: &dyn Fn(Stage),
) -> Outcome {
    let started = Instant::now();
    let deadline = started + plan.timeout;
    let mut arch = None;
    let mut cleanup_problem = None;
    let record = (|| {
        stage(Stage::Connecting);
        let conn = Connection::open(host, n, &plan.control_dir, &plan.ssh, deadline, cancel)?;
        let nonce = new_nonce();
        let args: Vec<String> = host_args(&plan.args, host)
            .iter()
            .map(|a| shell_quote(a))
            .collect();
        let then = format!(
            "TMPDIR=\"$d\" \"$b\" {} --json - --no-store; rc=$?; gone; exit $rc",
            args.join(" ")
        );
        let session = placement(
            &conn,
            &nonce,
            &then,
            &plan.binaries,
            deadline,
            cancel,
            &mut |a, b| {
                arch = Some(a.to_string());
                if let Some((b, sent)) = b {
                    stage(Stage::Running {
                        arch: a.to_string(),
                        bytes: b.bytes,
                        sent,
                    });
                }
            },
        );
        let (spot, out) = match session {
            Placement::CutOff(spot, failure) => {
                stage(Stage::CleaningUp);
                if let Err(e) = clean_up(&conn, &spot, Some(RUN_GRACE)) {
                    cleanup_problem =
                        Some(format!("could not remove {} on the host: {e}", spot.name()));
                }
                return Err(failure);
            }
            Placement::Ended(spot, out) => (spot, out),
        };
        if out.stderr.contains(NOT_REMOVED) {
            cleanup_problem = Some(format!("could not remove {} on the host", spot.name()));
        }
        let stderr = out
            .stderr
            .lines()
            .filter(|l| !l.starts_with(NOT_REMOVED))
            .collect::<Vec<_>>()
            .join("\n");
        if let Some(reason) = placement_failure(&out, &stderr, arch.as_deref(), &plan.binaries) {
            return Err(Failure::new(reason));
        }
        match out.code() {
            // 0: all ran; 1: some benchmark failed, the record says which.
            Some(0 | 1) if String::from_utf8_lossy(&out.stdout).trim().starts_with('{') => {
                Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
            }
            code => Err(Failure::new(format!(
                "sysgauge failed on the host (exit {}): {}",
                code.map(|c| c.to_string())
                    .unwrap_or_else(|| "by signal".into()),
                last_line(&stderr)
            ))),
        }
    })();
    Outcome {
        arch,
        record,
        duration: started.elapsed(),
        cleanup_problem,
    }
}

/// Subcommands that take `--rated`.
const RATED_COMMANDS: [&str; 2] = ["run", "clock"];

/// The command line `host` runs: the plan's, with `--rated` from the
/// host's `rated_mhz` when its subcommand takes one and the command line
/// gives none (a `--rated` after `--` is for every host, and wins).
pub fn host_args(args: &[String], host: &Host) -> Vec<String> {
    let mut v = args.to_vec();
    let takes = v
        .first()
        .is_some_and(|c| RATED_COMMANDS.contains(&c.as_str()));
    let given = v
        .iter()
        .any(|a| a == "--rated" || a.starts_with("--rated="));
    if let (true, false, Some(mhz)) = (takes, given, host.rated_mhz()) {
        v.insert(1, format!("--rated={mhz}MHz"));
    }
    v
}

/// The marker the script writes on stderr when the directory stayed.
const NOT_REMOVED: &str = "sysgauge-fleet: could not remove ";

/// How the placement session ended.
enum Placement {
    /// The script ran to its end (whatever its exit status): what it
    /// printed after its answer, and the directory it named (or the nonce
    /// when it named none).
    Ended(Spot, Output),
    /// Cut off (timeout, Ctrl-C, lost connection): what it made may still
    /// be there, a run may still go on.
    CutOff(Spot, Failure),
}

impl Spot {
    /// The directory for messages.
    fn name(&self) -> String {
        match self {
            Spot::Dir(d) => d.clone(),
            Spot::Nonce(n) => format!("$TMPDIR/sysgauge-fleet.{n}*"),
        }
    }
}

/// The binary chosen for a host, and the bytes it takes on the wire.
type Chosen<'a> = Option<(&'a Binary, u64)>;

/// Steps 2 and 3 in one ssh session. The host answers its `uname -m`, a
/// private directory it made (`mktemp -d`, 0700, named with `nonce`) and
/// whether it has a working `zstd`; sysgauge then sends, on the same
/// session's stdin, the SHA-256 of the binary for that architecture (with
/// the word `zstd` when the binary follows compressed) and the binary
/// itself (or nothing when it has none, and the host removes the directory
/// and exits 204). The host writes it, makes it executable and checks it
/// (exit 201 when the copy fails, or the decompression with the frame's
/// checksum; for a plain copy 202 with its own SHA-256 when that differs),
/// then runs `then`
/// with `$d` the directory, `$b` the binary and `gone` the shell function
/// that removes the directory (writing [`NOT_REMOVED`] on stderr when it
/// could not). 201-204 are no exit status of sysgauge's (0, 1, 2, 129,
/// 130, 143). `answered` hears the architecture, and the binary chosen with
/// the bytes it takes on the wire, as soon as the host has answered.
fn placement(
    conn: &Connection,
    nonce: &str,
    then: &str,
    binaries: &Binaries,
    deadline: Instant,
    cancel: &CancelToken,
    answered: &mut dyn FnMut(&str, Chosen<'_>),
) -> Placement {
    use std::io::{Read, Write};
    let script = placement_script(nonce, then);
    let mut spot = Spot::Nonce(nonce.to_string());
    let mut child = match conn.spawn(&script, std::process::Stdio::piped()) {
        Ok(c) => c,
        Err(e) => return Placement::CutOff(spot, Failure::from(e)),
    };
    let mut stdin = child.stdin.take();
    // The answer is the first two lines of stdout; the rest is the run's.
    let (answer_tx, answer_rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 64 * 1024];
            let mut told = false;
            loop {
                let n = match pipe.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                if (buf.len() as u64) < MAX_STDOUT {
                    buf.extend_from_slice(&chunk[..n]);
                }
                if !told && buf.iter().filter(|&&c| c == b'\n').count() >= 3 {
                    told = true;
                    let _ = answer_tx.send(answer_of(&buf).map(|(a, _)| a));
                }
            }
            buf
        })
    });
    let stderr = child.stderr.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.by_ref().take(MAX_STDERR).read_to_end(&mut buf);
            let _ = std::io::copy(&mut pipe, &mut std::io::sink());
            buf
        })
    });
    let mut writer = None;
    let status = loop {
        if let Ok(Some(answer)) = answer_rx.try_recv() {
            if plausible_dir(&answer.dir, nonce) {
                spot = Spot::Dir(answer.dir.clone());
            }
            let binary = binaries
                .for_uname(&answer.machine)
                .filter(|_| matches!(spot, Spot::Dir(_)));
            let packed = binary.filter(|_| answer.zstd).and_then(Binary::packed);
            answered(
                &answer.machine,
                binary.map(|b| (b, packed.as_ref().map_or(b.bytes, |z| z.len() as u64))),
            );
            match (binary, stdin.take()) {
                (Some(b), Some(mut pipe)) => {
                    let (sum, path) = (b.sha256.clone(), b.path.clone());
                    writer = Some(std::thread::spawn(move || {
                        // A host that stops reading (a failed copy) ends
                        // the session; its exit status says why.
                        match packed {
                            Some(z) => {
                                let _ = writeln!(pipe, "{sum} zstd");
                                let _ = pipe.write_all(&z);
                            }
                            None => {
                                let _ = writeln!(pipe, "{sum}");
                                if let Ok(mut f) = std::fs::File::open(&path) {
                                    let _ = std::io::copy(&mut f, &mut pipe);
                                }
                            }
                        }
                    }));
                }
                // No binary (or an implausible directory): stdin closes,
                // and the host removes its directory and exits 204.
                (_, pipe) => drop(pipe),
            }
        }
        match child.try_wait() {
            Ok(Some(s)) => break Ok(s),
            Ok(None) => {}
            Err(e) => break Err(SshError::Spawn(e.to_string())),
        }
        if cancel.is_cancelled() {
            break Err(SshError::Cancelled);
        }
        if Instant::now() >= deadline {
            break Err(SshError::Timeout);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let status = match status {
        Ok(s) => s,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            // Neither the readers nor the writer are joined: the master
            // keeps the pipes until the remote command ends (see ssh.rs).
            return Placement::CutOff(spot, Failure::from(e));
        }
    };
    drop(stdin);
    if let Some(w) = writer {
        let _ = w.join();
    }
    let out = stdout.and_then(|h| h.join().ok()).unwrap_or_default();
    let err = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
    let err = String::from_utf8_lossy(&err).into_owned();
    if status.code() == Some(255) {
        let e = if cancel.is_cancelled() {
            SshError::Cancelled
        } else {
            conn.lost(&err)
        };
        return Placement::CutOff(spot, Failure::from(e));
    }
    let rest = match answer_of(&out) {
        Some((answer, rest)) => {
            if matches!(spot, Spot::Nonce(_)) {
                // The host answered and ended before the answer was read.
                answered(&answer.machine, None);
                if plausible_dir(&answer.dir, nonce) {
                    spot = Spot::Dir(answer.dir);
                }
            }
            rest
        }
        None => out,
    };
    Placement::Ended(
        spot,
        Output {
            status,
            stdout: rest,
            stderr: err,
        },
    )
}

/// The placement session's script (POSIX shell); see [`placement`].
/// `zstd -V` rather than `command -v zstd`: bash names a file on PATH
/// even when it cannot run it. A compressed binary is checked by its zstd
/// frame's checksum instead of `sha256sum`: the host has hashed it once
/// already while decompressing, and SHA-256 in coreutils (no SHA
/// extensions) costs a Raspberry Pi far more than the copy.
///
/// sshd feeds the session's stdin through a pipe; with the default 64 KiB
/// it writes little per turn of its loop while it reads 256 KiB from the
/// network, and OpenSSH grows its channel buffer for the rest one packet
/// at a time, each step a fresh allocation and copy: about 70 ms of the
/// host's CPU for our binary (docs/performance.md). A 1 MiB pipe
/// (F_SETPIPE_SZ = 1031 on every Linux, 1 MiB the unprivileged limit) keeps
/// the buffer small; perl, which Debian counts as essential, sets it where
/// present, and nothing changes where it is not.
fn placement_script(nonce: &str, then: &str) -> String {
    format!(
        "m=$(uname -m) && d=$(mktemp -d \"${{TMPDIR:-/tmp}}/sysgauge-fleet.{nonce}XXXXXX\") || exit 203; \
         b=\"$d/sysgauge\"; \
         gone() {{ rm -rf -- \"$d\"; if test -e \"$d\"; then echo \"{NOT_REMOVED}$d\" >&2; fi; }}; \
         z=; if zstd -V >/dev/null 2>&1; then z=zstd; fi; \
         perl -e 'fcntl(STDIN, 1031, 1048576)' 2>/dev/null; \
         printf '%s\\n%s\\n%s\\n' \"$m\" \"$d\" \"$z\"; \
         read -r sum how || sum=; \
         case $sum in ''|*[!0-9a-f]*) gone; exit 204;; esac; \
         if [ \"$how\" = zstd ]; then \
         if ! {{ zstd -d -q -c > \"$b\" && chmod 0700 \"$b\"; }}; then gone; exit 201; fi; \
         else \
         if ! {{ cat > \"$b\" && chmod 0700 \"$b\"; }}; then gone; exit 201; fi; \
         if ! printf '%s  %s\\n' \"$sum\" \"$b\" | sha256sum -c - >/dev/null 2>&1; then \
         sha256sum \"$b\" >&2; gone; exit 202; fi; \
         fi; {then}"
    )
}

/// The host's answer at the start of the placement session.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Answer {
    /// `uname -m`.
    machine: String,
    /// The private directory it made.
    dir: String,
    /// It has a working `zstd`.
    zstd: bool,
}

/// The host's answer in the placement session's stdout (three lines), and
/// what follows it.
fn answer_of(out: &[u8]) -> Option<(Answer, Vec<u8>)> {
    let mut lines = out.splitn(4, |&c| c == b'\n');
    let mut line = || {
        lines
            .next()
            .map(|b| String::from_utf8_lossy(b).trim().to_string())
    };
    let (machine, dir, zstd) = (line()?, line()?, line()?);
    let rest = lines.next()?.to_vec();
    Some((
        Answer {
            machine,
            dir,
            zstd: zstd == "zstd",
        },
        rest,
    ))
}

/// The reason for the placement session's own exit statuses (201-204),
/// `None` for any other.
fn placement_failure(
    out: &Output,
    stderr: &str,
    machine: Option<&str>,
    binaries: &Binaries,
) -> Option<String> {
    match out.code() {
        Some(201) => Some(format!("copying the binary failed: {}", last_line(stderr))),
        Some(202) => {
            let b = machine.and_then(|m| binaries.for_uname(m));
            Some(format!(
                "checksum mismatch after copying {} (sha256 on the host {}, expected {})",
                b.map(|b| b.path.display().to_string()).unwrap_or_default(),
                last_line(stderr)
                    .split_whitespace()
                    .next()
                    .unwrap_or("unknown"),
                b.map(|b| b.sha256.as_str()).unwrap_or("unknown")
            ))
        }
        Some(203) => Some(format!(
            "uname -m or mktemp -d failed on the host: {}",
            last_line(stderr)
        )),
        Some(204) => Some(match machine {
            Some(m) if binaries.for_uname(m).is_none() => format!(
                "no binary for {m}; pass --binary {m}=PATH (have: {})",
                binaries.arches().join(", ")
            ),
            _ => "the host named no usable private directory".to_string(),
        }),
        _ => None,
    }
}

/// Stops what still runs from the run's directory (when `stop` gives the
/// grace between SIGINT and SIGKILL) and removes it.
fn clean_up(conn: &Connection, spot: &Spot, stop: Option<Duration>) -> Result<(), String> {
    let out = conn
        .run(
            &clean_up_script(spot, stop),
            None,
            Instant::now() + CLEANUP_TIMEOUT,
            None,
        )
        .map_err(|e| e.to_string())?;
    if out.code() == Some(0) {
        Ok(())
    } else {
        Err(last_line(&out.stderr).to_string())
    }
}

/// The clean-up's script (POSIX shell); exits 0 when the directory is gone.
fn clean_up_script(spot: &Spot, stop: Option<Duration>) -> String {
    let (pre, glob) = spot.shell();
    let mut script = format!("pre={pre}; ");
    if let Some(grace) = stop {
        // The binary goes first: a session whose shell has not reached its
        // `exec` yet (ssh was cut off while the channel was opening) then
        // fails there instead of starting a run nobody waits for. Whatever
        // runs a program from our directory is ours: SIGINT lets it clean
        // its scratch space, SIGKILL after `grace`, then a wait (up to 5 s) until
        // it is gone, since a signal is delivered, not awaited. The scan is
        // made twice, a moment apart, to catch an exec that was in flight.
        // It skips lines with "awk": the scan itself and this shell, whose
        // command line holds the same path.
        //
        // "Gone" is "no longer in the scan", not `kill -0`: a process that
        // ended but is not reaped yet (a zombie, which `ps` shows as
        // `[name] <defunct>`) still takes signals, and waiting for it took
        // both grace periods whole. On a host that is also the machine
        // driving the fleet, the fleet's own ssh clients carry the
        // directory in their command lines, and one the clean-up stopped
        // stays a zombie until the fleet reaps it, after the clean-up.
        let wait = |tenths: u128| {
            format!("i=0; while [ -n \"$pids\" ] && ours | grep -qxF \"$pids\" && [ $i -lt {tenths} ]; do sleep 0.1; i=$((i+1)); done; ")
        };
        let stop = format!(
            "pids=$(ours); \
             [ -n \"$pids\" ] && kill -INT $pids 2>/dev/null; {}\
             [ -n \"$pids\" ] && kill -KILL $pids 2>/dev/null; {}",
            wait(grace.as_millis().div_ceil(100)),
            wait(50)
        );
        script.push_str(&format!(
            "ours() {{ ps -eo pid=,args= 2>/dev/null | awk -v p=\"$pre\" 'index($0, p) && !/awk/ {{print $1}}'; }}; \
             rm -f -- \"$pre\"{glob}/sysgauge; {stop}sleep 0.2; {stop}"
        ));
    }
    script.push_str(&format!(
        "for d in \"$pre\"{glob}; do if test -e \"$d\"; then rm -rf -- \"$d\"; fi; done; \
         ! ls -d \"$pre\"{glob} >/dev/null 2>&1"
    ));
    script
}

/// A host with sysgauge placed in its private directory, for several
/// commands one after another (the network matrix): steps 1 to 3 as for
/// a run, without the run, then [`Placed::run`], [`Placed::run_stopping`]
/// and [`Placed::spawn`] as often as needed, and [`Placed::clean_up`]
/// (which also stops whatever still runs from the directory) at the end.
pub struct Placed {
    conn: Connection,
    /// The private directory on the host.
    pub dir: String,
    /// `uname -m` of the host.
    pub arch: String,
    control_dir: PathBuf,
    n: usize,
    /// Names the pid file of each [`Placed::run_stopping`] command.
    stoppable: AtomicUsize,
}

/// Connects to `host` (index `n`), finds its architecture, makes the
/// private directory and places the matching binary in it, checked. On
/// failure the reason, the architecture when known, and the directory is
/// removed again.
pub fn place(
    host: &Host,
    n: usize,
    plan: &Plan,
    cancel: &CancelToken,
) -> Result<Placed, (Failure, Option<String>)> {
    let deadline = Instant::now() + plan.timeout;
    let mut arch = None;
    let conn = Connection::open(host, n, &plan.control_dir, &plan.ssh, deadline, cancel)
        .map_err(|e| (Failure::from(e), None))?;
    let nonce = new_nonce();
    let session = placement(
        &conn,
        &nonce,
        "exit 0",
        &plan.binaries,
        deadline,
        cancel,
        &mut |a, _| arch = Some(a.to_string()),
    );
    let failed = |f: Failure, arch: Option<String>| Err((f, arch));
    match session {
        Placement::CutOff(spot, f) => {
            let _ = clean_up(&conn, &spot, Some(RUN_GRACE));
            failed(f, arch)
        }
        Placement::Ended(spot, out) => {
            if let Some(reason) =
                placement_failure(&out, &out.stderr, arch.as_deref(), &plan.binaries)
            {
                return failed(Failure::new(reason), arch);
            }
            match (out.code(), spot, arch.clone()) {
                (Some(0), Spot::Dir(dir), Some(machine)) => Ok(Placed {
                    conn,
                    dir,
                    arch: machine,
                    control_dir: plan.control_dir.clone(),
                    n,
                    stoppable: AtomicUsize::new(0),
                }),
                (_, spot, _) => {
                    let _ = clean_up(&conn, &spot, None);
                    failed(
                        Failure::new(format!(
                            "placing the binary failed: {}",
                            last_line(&out.stderr)
                        )),
                        arch,
                    )
                }
            }
        }
    }
}

impl Placed {
    /// The placed binary's path on the host, quoted.
    fn binary(&self) -> String {
        shell_quote(&format!("{}/sysgauge", self.dir))
    }

    /// Writes `contents` into the file `name` (0600) of the private
    /// directory: secrets go this way, through ssh's stdin, so that no
    /// command line on the host shows them.
    pub fn put_secret(
        &self,
        name: &str,
        contents: &[u8],
        deadline: Instant,
    ) -> Result<(), Failure> {
        let local = self.control_dir.join(format!("{}.{name}", self.n));
        {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&local)
                .map_err(|e| Failure::new(format!("{}: {e}", local.display())))?;
            f.write_all(contents)
                .map_err(|e| Failure::new(format!("{}: {e}", local.display())))?;
        }
        let path = shell_quote(&format!("{}/{name}", self.dir));
        let out = self.conn.run(
            &format!("umask 077 && cat > {path}"),
            Some(&local),
            deadline,
            None,
        );
        let _ = std::fs::remove_file(&local);
        let out = out?;
        if out.code() == Some(0) {
            Ok(())
        } else {
            Err(Failure::new(format!(
                "writing {name} on the host failed: {}",
                last_line(&out.stderr)
            )))
        }
    }

    /// The shell command that runs the placed sysgauge with `args`, its
    /// TMPDIR in the private directory, and each `(VARIABLE, file)` of
    /// `env` set from a file of the directory (see [`Placed::put_secret`]);
    /// its process id written to `pid_file` of the directory when given
    /// (the shell's, which `exec` hands on to sysgauge).
    fn command_line(
        &self,
        args: &[String],
        env: &[(&str, &str)],
        pid_file: Option<&str>,
    ) -> String {
        let d = shell_quote(&self.dir);
        let mut line = format!("cd {d} && ");
        if let Some(f) = pid_file {
            line.push_str(&format!("echo $$ > {} && ", shell_quote(f)));
        }
        line.push_str(&format!("TMPDIR={d}"));
        for (var, file) in env {
            line.push_str(&format!(" {var}=\"$(cat {})\"", shell_quote(file)));
        }
        line.push_str(" exec ");
        line.push_str(&self.binary());
        for a in args {
            line.push(' ');
            line.push_str(&shell_quote(a));
        }
        line
    }

    /// Runs the placed sysgauge with `args` until it ends, `deadline` or
    /// cancellation.
    pub fn run(
        &self,
        args: &[String],
        env: &[(&str, &str)],
        deadline: Instant,
        cancel: &CancelToken,
    ) -> Result<Output, SshError> {
        self.conn.run(
            &self.command_line(args, env, None),
            None,
            deadline,
            Some(cancel),
        )
    }

    /// [`Placed::run`] for a command that prints what it measured when it
    /// stops (a measuring sysgauge with `--json -`): at `deadline` or
    /// cancellation it is sent SIGINT, as Ctrl-C would send it, and its
    /// output is awaited for up to `grace` more (see [`Wind`]). The
    /// signal goes to its process id, which the command line writes into
    /// the private directory: only this command is asked, not the others
    /// that run from the directory (a listener the peers still measure).
    pub fn run_stopping(
        &self,
        args: &[String],
        env: &[(&str, &str)],
        deadline: Instant,
        cancel: &CancelToken,
        grace: Duration,
    ) -> Result<Output, SshError> {
        let pid_file = format!("stop{}.pid", self.stoppable.fetch_add(1, Ordering::Relaxed));
        let ask = |until: Instant| {
            let path = shell_quote(&format!("{}/{pid_file}", self.dir));
            // No pid file yet: the session has not reached its command,
            // and the clean-up stops it.
            let _ = self.conn.run(
                &format!("p=$(cat {path} 2>/dev/null) && kill -INT \"$p\""),
                None,
                until,
                None,
            );
        };
        self.conn.run_winding(
            &self.command_line(args, env, Some(&pid_file)),
            None,
            deadline,
            Some(cancel),
            Some(&Wind { ask: &ask, grace }),
        )
    }

    /// Starts the placed sysgauge with `args` and returns at once (a
    /// listener for the length of the matrix); [`Placed::clean_up`] stops
    /// it on the host.
    pub fn spawn(&self, args: &[String], env: &[(&str, &str)]) -> Result<Child, SshError> {
        self.conn.spawn(
            &self.command_line(args, env, None),
            std::process::Stdio::null(),
        )
    }

    /// Stops everything that runs from the private directory (SIGINT, then
    /// SIGKILL after `grace`) and removes the directory.
    pub fn clean_up(self, grace: Duration) -> Result<(), String> {
        clean_up(&self.conn, &Spot::Dir(self.dir.clone()), Some(grace))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn rated_mhz_reaches_clock_and_run_only() {
        let words = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut host = Host::new("h");
        let run = words(&["run", "--no-wait", "--profile", "tiny"]);
        assert_eq!(host_args(&run, &host), run);
        host.vars.insert("rated_mhz".into(), "4500".into());
        assert_eq!(
            host_args(&run, &host),
            words(&["run", "--rated=4500MHz", "--no-wait", "--profile", "tiny"])
        );
        let clock = words(&["clock", "--no-wait"]);
        assert_eq!(host_args(&clock, &host)[1], "--rated=4500MHz");
        let crypto = words(&["crypto", "--no-wait"]);
        assert_eq!(host_args(&crypto, &host), crypto);
        let given = words(&["clock", "--rated", "3GHz"]);
        assert_eq!(host_args(&given, &host), given);
    }

    /// A binary as `--binary` would load it, of an architecture as its
    /// file says.
    fn built_as(built: Built) -> Binary {
        Binary {
            path: "/x".into(),
            sha256: "00".into(),
            bytes: 1,
            built,
            packed: Packed::default(),
        }
    }

    #[test]
    fn which_binary_a_host_gets() {
        let v6 = built_as(Built::Arch("armv6"));
        let v7 = built_as(Built::Arch("armv7"));
        // Only ARMv6 code: every 32-bit ARM host gets it.
        let bins = Binaries::new(None, vec![("armv6l".into(), v6.clone())])
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(bins.for_uname("armv6l").is_some());
        assert!(bins.for_uname("armv7l").is_some());
        assert!(bins.for_uname("armv8l").is_some());
        assert!(bins.for_uname("x86_64").is_none());
        assert!(bins.for_uname("aarch64").is_none());
        assert_eq!(bins.arches(), ["armv6"]);
        // Only ARMv7 code: an ARMv6 host (Pi 1, Zero) gets none.
        let bins = Binaries::new(None, vec![("armv7l".into(), v7.clone())])
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(bins.for_uname("armv6l").is_none());
        assert!(bins.for_uname("armv7l").is_some());
        // Both: each its own.
        let mut v7b = v7.clone();
        v7b.path = "/v7".into();
        let bins = Binaries::new(None, vec![("armv6l".into(), v6), ("armv7l".into(), v7b)])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            bins.for_uname("armv7l").map(|b| b.path.clone()),
            Some("/v7".into())
        );
        assert_eq!(
            bins.for_uname("armv6l").map(|b| b.path.clone()),
            Some("/x".into())
        );
        // A file that is not what its name says is refused, named.
        let e = Binaries::new(None, vec![("armv6l".into(), v7)]).unwrap_err();
        assert!(e.starts_with("--binary armv6l=/x: it is ARMv7 code"), "{e}");
    }

    #[test]
    fn only_this_runs_mktemp_directories_are_used() {
        let n = "k3y0nc3abc";
        assert!(plausible_dir("/tmp/sysgauge-fleet.k3y0nc3abcAbC123", n));
        assert!(!plausible_dir("/tmp/sysgauge-fleet.otherrun00AbC123", n));
        assert!(!plausible_dir("/", n));
        assert!(!plausible_dir("/tmp/../etc/sysgauge-fleet.k3y0nc3abcx", n));
        assert!(!plausible_dir("/tmp/sysgauge-fleet.k3y0nc3abc a b", n));
        assert!(!plausible_dir("tmp/sysgauge-fleet.k3y0nc3abcx", n));
        assert!(!plausible_dir("/tmp/sysgauge-fleet.k3y0nc3abc/x", n));
        assert!(!plausible_dir("/tmp/x", n));
    }

    #[test]
    fn nonces_are_shell_safe_and_differ() {
        let a = new_nonce();
        assert_eq!(a.len(), 10);
        assert!(a
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
        assert_ne!(a, new_nonce());
    }

    #[test]
    fn the_hosts_answer_and_what_follows() {
        let (a, rest) = answer_of(b"x86_64\n/tmp/sysgauge-fleet.abc\nzstd\n{\"id\": 1}\n").unwrap();
        let dir = "/tmp/sysgauge-fleet.abc".to_string();
        let machine = "x86_64".to_string();
        assert_eq!(
            a,
            Answer {
                machine: machine.clone(),
                dir: dir.clone(),
                zstd: true
            }
        );
        assert_eq!(rest, b"{\"id\": 1}\n");
        let (a, rest) = answer_of(b"x86_64\n/tmp/sysgauge-fleet.abc\n\n").unwrap();
        assert_eq!(
            a,
            Answer {
                machine,
                dir,
                zstd: false
            }
        );
        assert!(rest.is_empty());
        assert!(answer_of(b"x86_64\n/tmp/sysgauge-fleet.abc\n").is_none());
        assert!(answer_of(b"x86_64\n").is_none());
        assert!(answer_of(b"").is_none());
    }

    /// The clean-up script, run by a real shell: a directory known only by
    /// the run's nonce is found, what runs from it is stopped, another
    /// run's directory stays.
    #[test]
    fn clean_up_by_nonce_stops_the_run_and_spares_other_runs() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let ours = tmp.path().join("sysgauge-fleet.k3y0nc3abcQx7Zp1");
        let theirs = tmp.path().join("sysgauge-fleet.otherrun00Ab12Cd");
        for d in [&ours, &theirs] {
            std::fs::create_dir(d).unwrap_or_else(|e| panic!("{e}"));
        }
        let bin = ours.join("sysgauge");
        std::fs::copy("/bin/sleep", &bin).unwrap_or_else(|e| panic!("{e}"));
        // ETXTBSY while another test's fork still holds the copy's
        // descriptor (between its fork and exec) passes in a moment.
        let mut tries = 0;
        let running = loop {
            match std::process::Command::new(&bin).arg("30").spawn() {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(10));
                }
                r => break r.unwrap_or_else(|e| panic!("{e}")),
            }
        };
        let pid = running.id();
        // Reaped at once, as the run session's shell would on a host.
        let reaper = std::thread::spawn(move || {
            let mut running = running;
            running.wait()
        });
        let script = clean_up_script(&Spot::Nonce("k3y0nc3abc".into()), Some(RUN_GRACE));
        sysgauge_testkit::output_of_success(
            std::process::Command::new("sh")
                .args(["-c", &script])
                .env("TMPDIR", tmp.path()),
        );
        assert!(!ours.exists());
        assert!(theirs.exists());
        let gone = (0..50).any(|_| {
            std::thread::sleep(Duration::from_millis(100));
            reaper.is_finished()
        });
        if !gone {
            if let Some(p) = rustix::process::Pid::from_raw(pid as i32) {
                let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
            }
        }
        assert!(gone, "the run from the directory was not stopped");
        // Nothing left to remove is success too; a named directory works alike.
        let again = std::process::Command::new("sh")
            .args([
                "-c",
                &clean_up_script(&Spot::Dir(theirs.display().to_string()), None),
            ])
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(again.status.success());
        assert!(!theirs.exists());
    }

    /// What the host's side of the placement session does with what the
    /// driver sends, run by a real shell (sh, as on a host) without ssh.
    fn place_by_hand(
        send: impl FnOnce(&Answer, &mut std::process::ChildStdin),
    ) -> (Answer, std::process::Output) {
        use std::io::BufRead;
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let nonce = "k3y0nc3abc";
        let then = "\"$b\" hello; rc=$?; gone; exit $rc";
        let mut child = std::process::Command::new("sh")
            .args(["-c", &placement_script(nonce, then)])
            .env("TMPDIR", tmp.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap_or_else(|| panic!()));
        let mut head = Vec::new();
        for _ in 0..3 {
            out.read_until(b'\n', &mut head)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let (answer, _) = answer_of(&head).unwrap_or_else(|| panic!("no answer: {head:?}"));
        // Not this build's ARCH: under qemu-user the shell is the
        // machine's own.
        assert!(!answer.machine.is_empty());
        assert!(plausible_dir(&answer.dir, nonce), "{}", answer.dir);
        let mut stdin = child.stdin.take().unwrap_or_else(|| panic!());
        send(&answer, &mut stdin);
        drop(stdin);
        let mut rest = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut rest).unwrap_or_else(|e| panic!("{e}"));
        let mut output = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
        output.stdout = rest;
        assert!(
            !Path::new(&answer.dir).exists(),
            "the host's directory stayed"
        );
        (answer, output)
    }

    /// A "binary" (a shell script with a long, compressible comment) that
    /// prints its argument.
    fn script_binary(dir: &Path) -> Binary {
        let p = dir.join("sysgauge");
        let text = format!(
            "#!/bin/sh\n# {}\necho \"ran: $1\"\n",
            "padding ".repeat(4096)
        );
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("{e}"));
        Binary::load(&p, "--binary").unwrap_or_else(|e| panic!("{e}"))
    }

    #[derive(Debug, Clone, Copy)]
    enum Damage {
        Cut,
        Checksum,
    }

    #[test]
    fn the_host_takes_the_binary_compressed_or_plain_and_checks_it() {
        let have_zstd = std::process::Command::new("zstd")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        if !sysgauge_testkit::require("the zstd program", have_zstd, "apt-get install zstd") {
            return;
        }
        let src = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let b = script_binary(src.path());
        let z = b.packed().unwrap_or_else(|| panic!("no zstd form"));
        assert!(
            z.len() * 10 < b.bytes as usize,
            "{} of {}",
            z.len(),
            b.bytes
        );
        // Compressed.
        let (answer, out) = place_by_hand(|a, w| {
            assert!(a.zstd, "the host's zstd was not found");
            writeln!(w, "{} zstd", b.sha256).unwrap_or_else(|e| panic!("{e}"));
            w.write_all(&z).unwrap_or_else(|e| panic!("{e}"));
        });
        assert!(answer.zstd);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "ran: hello\n");
        // Plain.
        let (_, out) = place_by_hand(|_, w| {
            writeln!(w, "{}", b.sha256).unwrap_or_else(|e| panic!("{e}"));
            w.write_all(&std::fs::read(&b.path).unwrap_or_else(|e| panic!("{e}")))
                .unwrap_or_else(|e| panic!("{e}"));
        });
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "ran: hello\n");
        // A damaged or cut zstd stream: the copy fails (201), nothing runs.
        // A wrong checksum (the frame's last four bytes) on content that
        // decodes: only the check catches it.
        for damage in [Damage::Cut, Damage::Checksum] {
            let (_, out) = place_by_hand(|_, w| {
                writeln!(w, "{} zstd", b.sha256).unwrap_or_else(|e| panic!("{e}"));
                let mut bad = z.to_vec();
                match damage {
                    Damage::Cut => bad.truncate(bad.len() / 2),
                    Damage::Checksum => {
                        if let Some(last) = bad.last_mut() {
                            *last ^= 1;
                        }
                    }
                }
                let _ = w.write_all(&bad);
            });
            assert_eq!(out.status.code(), Some(201), "{damage:?}: {out:?}");
            assert!(out.stdout.is_empty());
        }
        // A plain copy that is not what the sum says: 202 with the host's
        // sum.
        let (_, out) = place_by_hand(|_, w| {
            writeln!(w, "{}", "0".repeat(64)).unwrap_or_else(|e| panic!("{e}"));
            w.write_all(&std::fs::read(&b.path).unwrap_or_else(|e| panic!("{e}")))
                .unwrap_or_else(|e| panic!("{e}"));
        });
        assert_eq!(out.status.code(), Some(202), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).starts_with(&b.sha256));
        assert!(out.stdout.is_empty());
        // Nothing sent (no binary for the host): 204.
        let (_, out) = place_by_hand(|_, _| {});
        assert_eq!(out.status.code(), Some(204), "{out:?}");
    }

    #[test]
    fn a_frame_made_late_is_made_only_from_the_checked_file() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("f");
        std::fs::write(&p, "x".repeat(4096)).unwrap_or_else(|e| panic!("{e}"));
        let loaded = Binary::load(&p, "--binary").unwrap_or_else(|e| panic!("{e}"));
        // The same binary without the frame made at load, then the file
        // changes: no frame from the new content.
        let b = Binary {
            packed: Packed::default(),
            ..loaded.clone()
        };
        std::fs::write(&p, "y".repeat(4096)).unwrap_or_else(|e| panic!("{e}"));
        assert!(b.packed().is_none());
        // The one made at load is of the content that was checked.
        let z = loaded.packed().unwrap_or_else(|| panic!("no frame"));
        let back = zstd::bulk::decompress(&z, 1 << 20).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, "x".repeat(4096).into_bytes());
    }

    /// `--binary aarch64=/dev/zero` once grew until the kernel killed it.
    #[test]
    fn a_binary_that_is_no_regular_file_is_refused() {
        let e = Binary::load(Path::new("/dev/zero"), "--binary aarch64=")
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("--binary aarch64=/dev/zero: not a regular file (a character device)")
        );
    }

    #[test]
    fn checksum_of_a_file() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("f");
        std::fs::write(&p, b"abc").unwrap_or_else(|e| panic!("{e}"));
        let b = Binary::load(&p, "--binary").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            b.sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(b.bytes, 3);
    }
}
