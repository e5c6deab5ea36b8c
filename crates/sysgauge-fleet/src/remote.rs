//! What a fleet run does on one host, in three round trips (each costs an
//! ssh session on the host, a few hundred milliseconds on a busy one, so
//! steps share a trip wherever a failure can still be told apart):
//! 1. connect (one multiplexed OpenSSH connection);
//! 2. `uname -m` and `mktemp -d` under the host's `$TMPDIR` (or /tmp): the
//!    host's architecture, and so which binary it needs (the running one
//!    when it matches, else one given with `--binary ARCH=PATH`; none is a
//!    failure naming the architecture), and a private 0700 directory for
//!    everything this run puts on the host;
//! 3. one script: the binary streamed in through ssh (`cat >`), made
//!    executable, its SHA-256 checked on the host with `sha256sum -c`
//!    against ours (exit 201 when the copy fails, 202 with the host's sum
//!    when it differs), then `sysgauge SUBCOMMAND ARGS --json - --no-store`
//!    run with `TMPDIR` pointing into the private directory (so the run's
//!    scratch space goes too), the run record read from stdout, and the
//!    directory removed whatever the run did (a marker on stderr when it
//!    could not be);
//! 4. only when step 3 was cut off (the timeout, Ctrl-C, a lost
//!    connection) or a host had no binary: a clean-up trip. On timeout or
//!    Ctrl-C the binary is deleted first (so a session still on its way to
//!    start it cannot), then the remote sysgauge (found by its path in our
//!    directory with `ps`) is sent SIGINT (it cleans up its scratch and
//!    stops), then SIGKILL if it lingers, then the directory goes.
//!
//! The host needs a POSIX shell, `uname`, `mktemp`, `cat`, `chmod` and
//! `sha256sum` (coreutils or busybox): what any Linux system has.

use crate::inventory::Host;
use crate::ssh::{last_line, shell_quote, Connection, Output, SshError, SshSettings};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};
use sysgauge_core::CancelToken;

/// A sysgauge binary for one architecture.
#[derive(Debug, Clone)]
pub struct Binary {
    pub path: PathBuf,
    pub sha256: String,
    pub bytes: u64,
}

impl Binary {
    /// Reads `path` and computes its checksum.
    pub fn load(path: &Path) -> std::io::Result<Binary> {
        use std::io::Read;
        let mut file = std::fs::File::open(path)?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut bytes = 0u64;
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            bytes += n as u64;
        }
        let sha256 = hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(Binary {
            path: path.to_path_buf(),
            sha256,
            bytes,
        })
    }
}

/// `uname -m` names that mean the same architecture, by Rust's name for it
/// (`std::env::consts::ARCH`).
const ARCH_NAMES: &[(&str, &[&str])] = &[
    ("x86_64", &["x86_64", "amd64"]),
    ("x86", &["i386", "i486", "i586", "i686", "x86"]),
    ("aarch64", &["aarch64", "arm64", "armv8b", "aarch64_be"]),
    (
        "arm",
        &["armv7l", "armv6l", "armv8l", "armv7", "armv6", "arm"],
    ),
    ("riscv64", &["riscv64"]),
    ("powerpc64", &["ppc64", "ppc64le"]),
    ("s390x", &["s390x"]),
    ("loongarch64", &["loongarch64"]),
];

/// Canonical (Rust) name of a `uname -m` answer; unknown names stay as
/// they are.
pub fn canonical_arch(uname: &str) -> String {
    let u = uname.trim();
    ARCH_NAMES
        .iter()
        .find(|(_, names)| names.contains(&u) || u == (*names)[0])
        .map(|(rust, _)| rust.to_string())
        .unwrap_or_else(|| u.to_string())
}

/// The binaries a fleet run can place, by canonical architecture.
#[derive(Debug, Clone, Default)]
pub struct Binaries {
    by_arch: BTreeMap<String, Binary>,
}

impl Binaries {
    /// The running binary for this build's architecture, and `extra`
    /// (`--binary ARCH=PATH`, which wins for its architecture).
    pub fn new(running: Option<Binary>, extra: Vec<(String, Binary)>) -> Binaries {
        let mut by_arch = BTreeMap::new();
        if let Some(b) = running {
            by_arch.insert(std::env::consts::ARCH.to_string(), b);
        }
        for (arch, b) in extra {
            by_arch.insert(canonical_arch(&arch), b);
        }
        Binaries { by_arch }
    }

    /// The binary for a host whose `uname -m` said `uname`.
    pub fn for_uname(&self, uname: &str) -> Option<&Binary> {
        self.by_arch.get(&canonical_arch(uname))
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
    /// The binary for `arch` (`bytes` long) being copied, then run.
    Running {
        arch: String,
        bytes: u64,
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

/// A directory name `mktemp -d` may print that is safe to put in a shell
/// command unquoted-equivalent (we quote it anyway).
fn plausible_dir(s: &str) -> bool {
    s.starts_with('/')
        && s.len() > 1
        && !s.contains("..")
        && s.contains("sysgauge-fleet.")
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c))
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
        let (machine, dir) = probe(&conn, deadline, cancel, &mut arch)?;
        let Some(binary) = plan.binaries.for_uname(&machine) else {
            stage(Stage::CleaningUp);
            if let Err(e) = clean_up(&conn, &dir, false) {
                cleanup_problem = Some(format!("could not remove {dir} on the host: {e}"));
            }
            return Err(Failure::new(format!(
                "no binary for {machine}; pass --binary {machine}=PATH (have: {})",
                plan.binaries.arches().join(", ")
            )));
        };
        stage(Stage::Running {
            arch: machine.clone(),
            bytes: binary.bytes,
        });
        let result = place_and_run(&conn, &dir, binary, plan, deadline, cancel);
        let cut_off = match &result {
            Ok((_, removed)) | Err((_, Some(removed))) => {
                if !removed {
                    cleanup_problem = Some(format!("could not remove {dir} on the host"));
                }
                false
            }
            Err((_, None)) => true,
        };
        if cut_off {
            stage(Stage::CleaningUp);
            if let Err(e) = clean_up(&conn, &dir, true) {
                cleanup_problem = Some(format!("could not remove {dir} on the host: {e}"));
            }
        }
        result.map(|(record, _)| record).map_err(|(f, _)| f)
    })();
    Outcome {
        arch,
        record,
        duration: started.elapsed(),
        cleanup_problem,
    }
}

/// Step 2: the host's `uname -m` (also stored into `arch` as soon as it is
/// known) and a private directory made by `mktemp -d`.
fn probe(
    conn: &Connection,
    deadline: Instant,
    cancel: &CancelToken,
    arch: &mut Option<String>,
) -> Result<(String, String), Failure> {
    let probe = conn.run(
        r#"uname -m && mktemp -d "${TMPDIR:-/tmp}/sysgauge-fleet.XXXXXXXXXX""#,
        None,
        deadline,
        Some(cancel),
    )?;
    let text = String::from_utf8_lossy(&probe.stdout);
    let mut lines = text.lines().map(str::trim);
    let machine = lines.next().unwrap_or_default().to_string();
    if machine.is_empty() || machine.contains(char::is_whitespace) {
        return Err(Failure::new(format!(
            "uname -m failed on the host: {}",
            last_line(&probe.stderr)
        )));
    }
    *arch = Some(machine.clone());
    let dir = lines.next().unwrap_or_default().to_string();
    if probe.code() != Some(0) || !plausible_dir(&dir) {
        return Err(Failure::new(format!(
            "mktemp -d failed on the host: {}",
            last_line(&probe.stderr)
        )));
    }
    Ok((machine, dir))
}

/// The marker the script writes on stderr when the directory stayed.
const NOT_REMOVED: &str = "sysgauge-fleet: could not remove ";

/// Step 3: the record and whether the directory was removed; on failure
/// the reason and, when the script ran to its end, whether the directory
/// was removed (`None`: cut off, the remote run may still be going).
#[allow(clippy::type_complexity)]
fn place_and_run(
    conn: &Connection,
    dir: &str,
    binary: &Binary,
    plan: &Plan,
    deadline: Instant,
    cancel: &CancelToken,
) -> Result<(String, bool), (Failure, Option<bool>)> {
    let d = shell_quote(dir);
    let b = shell_quote(&format!("{dir}/sysgauge"));
    let args: Vec<String> = plan.args.iter().map(|a| shell_quote(a)).collect();
    let remove = format!(
        "rm -rf -- {d}; if test -e {d}; then echo {} >&2; fi",
        shell_quote(&format!("{NOT_REMOVED}{dir}"))
    );
    let script = format!(
        "{copy} TMPDIR={d} {b} {args} --json - --no-store; rc=$?; {remove}; exit $rc",
        copy = copy_and_check(&b, binary, &remove),
        args = args.join(" "),
    );
    let out = conn
        .run(&script, Some(&binary.path), deadline, Some(cancel))
        .map_err(|e| (Failure::from(e), None))?;
    let stderr = out
        .stderr
        .lines()
        .filter(|l| !l.starts_with(NOT_REMOVED))
        .collect::<Vec<_>>()
        .join("\n");
    let removed = !out.stderr.contains(NOT_REMOVED);
    let fail = |reason: String| Err((Failure::new(reason), Some(removed)));
    if let Some(reason) = copy_failure(out.code(), &stderr, binary) {
        return fail(reason);
    }
    match out.code() {
        // 0: all ran; 1: some benchmark failed, the record says which.
        Some(0 | 1) if String::from_utf8_lossy(&out.stdout).trim().starts_with('{') => Ok((
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
            removed,
        )),
        code => fail(format!(
            "sysgauge failed on the host (exit {}): {}",
            code.map(|c| c.to_string())
                .unwrap_or_else(|| "by signal".into()),
            last_line(&stderr)
        )),
    }
}

/// The start of a script that streams `binary` in from stdin to the path
/// `b` (quoted), makes it executable and checks its SHA-256 on the host,
/// running `remove` and exiting 201 (copy failed) or 202 (checksum
/// differs, the host's sum on stderr) when either goes wrong. 201 and 202
/// are no exit status of sysgauge's (0, 1, 2, 129, 130, 143).
fn copy_and_check(b: &str, binary: &Binary, remove: &str) -> String {
    format!(
        "if ! {{ cat > {b} && chmod 0700 {b}; }}; then {remove}; exit 201; fi; \
         if ! printf '%s  %s\\n' {sum} {b} | sha256sum -c - >/dev/null 2>&1; then \
         sha256sum {b} >&2; {remove}; exit 202; fi;",
        sum = shell_quote(&binary.sha256),
    )
}

/// The reason for [`copy_and_check`]'s exit codes, `None` for any other.
fn copy_failure(code: Option<i32>, stderr: &str, binary: &Binary) -> Option<String> {
    match code {
        Some(201) => Some(format!("copying the binary failed: {}", last_line(stderr))),
        Some(202) => Some(format!(
            "checksum mismatch after copying {} (sha256 on the host {}, expected {})",
            binary.path.display(),
            last_line(stderr)
                .split_whitespace()
                .next()
                .unwrap_or("unknown"),
            binary.sha256
        )),
        _ => None,
    }
}

/// Stops what still runs from `dir` (when `running` is set) and removes it.
fn clean_up(conn: &Connection, dir: &str, running: bool) -> Result<(), String> {
    let d = shell_quote(dir);
    let mut script = String::new();
    if running {
        // The binary goes first: a session whose shell has not reached its
        // `exec` yet (ssh was cut off while the channel was opening) then
        // fails there instead of starting a run nobody waits for. Whatever
        // runs the binary from our directory is ours: SIGINT lets it clean
        // its scratch space, SIGKILL after 5 s, then a wait (up to 5 s) until
        // it is gone, since a signal is delivered, not awaited. The scan is
        // made twice, a moment apart, to catch an exec that was in flight.
        let bin = format!("{dir}/sysgauge");
        let pattern = shell_quote(&bin);
        let wait = "i=0; while [ -n \"$pids\" ] && kill -0 $pids 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; ";
        let stop = format!(
            "pids=$(ps -eo pid=,args= 2>/dev/null | awk -v p={pattern} 'index($0, p) && !/awk/ {{print $1}}'); \
             [ -n \"$pids\" ] && kill -INT $pids 2>/dev/null; {wait}\
             [ -n \"$pids\" ] && kill -KILL $pids 2>/dev/null; {wait}"
        );
        script.push_str(&format!("rm -f -- {pattern}; {stop}sleep 0.2; {stop}"));
    }
    script.push_str(&format!("rm -rf -- {d} && ! test -e {d}"));
    let out = conn
        .run(&script, None, Instant::now() + CLEANUP_TIMEOUT, None)
        .map_err(|e| e.to_string())?;
    if out.code() == Some(0) {
        Ok(())
    } else {
        Err(last_line(&out.stderr).to_string())
    }
}

/// A host with sysgauge placed in its private directory, for several
/// commands one after another (the network matrix): steps 1 and 2 as for
/// a run, the copy and check of step 3 alone, then [`Placed::run`] and
/// [`Placed::spawn`] as often as needed, and [`Placed::clean_up`] (which
/// also stops whatever still runs from the directory) at the end.
pub struct Placed {
    conn: Connection,
    /// The private directory on the host.
    pub dir: String,
    /// `uname -m` of the host.
    pub arch: String,
    control_dir: PathBuf,
    n: usize,
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
    let (machine, dir) =
        probe(&conn, deadline, cancel, &mut arch).map_err(|f| (f, arch.clone()))?;
    let placed = Placed {
        conn,
        dir,
        arch: machine.clone(),
        control_dir: plan.control_dir.clone(),
        n,
    };
    let fail = |placed: Placed, f: Failure| {
        let _ = placed.clean_up();
        Err((f, Some(machine.clone())))
    };
    let Some(binary) = plan.binaries.for_uname(&machine) else {
        let reason = format!(
            "no binary for {machine}; pass --binary {machine}=PATH (have: {})",
            plan.binaries.arches().join(", ")
        );
        return fail(placed, Failure::new(reason));
    };
    let d = shell_quote(&placed.dir);
    let script = format!(
        "{} exit 0",
        copy_and_check(&placed.binary(), binary, &format!("rm -rf -- {d}"))
    );
    let out = match placed
        .conn
        .run(&script, Some(&binary.path), deadline, Some(cancel))
    {
        Ok(out) => out,
        Err(e) => return fail(placed, Failure::from(e)),
    };
    if let Some(reason) = copy_failure(out.code(), &out.stderr, binary) {
        return fail(placed, Failure::new(reason));
    }
    if out.code() != Some(0) {
        let reason = format!("placing the binary failed: {}", last_line(&out.stderr));
        return fail(placed, Failure::new(reason));
    }
    Ok(placed)
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
    /// `env` set from a file of the directory (see [`Placed::put_secret`]).
    fn command_line(&self, args: &[String], env: &[(&str, &str)]) -> String {
        let d = shell_quote(&self.dir);
        let mut line = format!("cd {d} && TMPDIR={d}");
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
        self.conn
            .run(&self.command_line(args, env), None, deadline, Some(cancel))
    }

    /// Starts the placed sysgauge with `args` and returns at once (a
    /// listener for the length of the matrix); [`Placed::clean_up`] stops
    /// it on the host.
    pub fn spawn(&self, args: &[String], env: &[(&str, &str)]) -> Result<Child, SshError> {
        self.conn.spawn(&self.command_line(args, env))
    }

    /// Stops everything that runs from the private directory (SIGINT, then
    /// SIGKILL) and removes the directory.
    pub fn clean_up(self) -> Result<(), String> {
        clean_up(&self.conn, &self.dir, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architecture_names() {
        assert_eq!(canonical_arch("x86_64\n"), "x86_64");
        assert_eq!(canonical_arch("armv7l"), "arm");
        assert_eq!(canonical_arch("arm64"), "aarch64");
        assert_eq!(canonical_arch("riscv64"), "riscv64");
        assert_eq!(canonical_arch("mips"), "mips");
        let b = Binary {
            path: "/x".into(),
            sha256: "00".into(),
            bytes: 1,
        };
        let bins = Binaries::new(None, vec![("armv7l".into(), b)]);
        assert!(bins.for_uname("armv6l").is_some());
        assert!(bins.for_uname("x86_64").is_none());
        assert_eq!(bins.arches(), ["arm"]);
    }

    #[test]
    fn only_mktemp_like_directories_are_used() {
        assert!(plausible_dir("/tmp/sysgauge-fleet.AbC123xyz0"));
        assert!(!plausible_dir("/"));
        assert!(!plausible_dir("/tmp/../etc/sysgauge-fleet.x"));
        assert!(!plausible_dir("/tmp/sysgauge-fleet.a b"));
        assert!(!plausible_dir("tmp/sysgauge-fleet.x"));
        assert!(!plausible_dir("/tmp/x"));
    }

    #[test]
    fn checksum_of_a_file() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("f");
        std::fs::write(&p, b"abc").unwrap_or_else(|e| panic!("{e}"));
        let b = Binary::load(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            b.sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(b.bytes, 3);
    }
}
