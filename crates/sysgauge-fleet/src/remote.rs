//! What a fleet run does on one host, in order:
//! 1. connect (one multiplexed OpenSSH connection);
//! 2. `uname -m`: the host's architecture, and so which binary it needs
//!    (the running one when it matches, else one given with
//!    `--binary ARCH=PATH`; none is a failure naming the architecture);
//! 3. `mktemp -d` under the host's `$TMPDIR` (or /tmp): a private 0700
//!    directory for everything this run puts on the host;
//! 4. the binary streamed in through ssh (`cat >`), made executable, and its
//!    SHA-256 computed on the host with `sha256sum` and compared with ours;
//! 5. `sysgauge SUBCOMMAND ARGS --json - --no-store` run there with
//!    `TMPDIR` pointing into the private directory (so the run's scratch
//!    space goes too); the run record is read from stdout;
//! 6. the directory removed, whatever happened before (success, a failed
//!    step, the timeout, Ctrl-C); on timeout or Ctrl-C the binary is
//!    deleted first (so a session still on its way to `exec` cannot start
//!    it), then the remote sysgauge (found by its path in our directory
//!    with `ps`) is sent SIGINT (it cleans up its scratch and stops), then
//!    SIGKILL if it lingers.
//!
//! The host needs a POSIX shell, `uname`, `mktemp`, `cat`, `chmod` and
//! `sha256sum` (coreutils or busybox): what any Linux system has.

use crate::inventory::Host;
use crate::ssh::{last_line, shell_quote, Connection, SshError, SshSettings};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
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
    Copying { arch: String, bytes: u64 },
    Running,
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
    fn new(reason: impl Into<String>) -> Failure {
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

/// How long clean-up may take after a failure or Ctrl-C.
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(20);

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
        let uname = conn.run("uname -m", None, deadline, Some(cancel))?;
        let machine = String::from_utf8_lossy(&uname.stdout).trim().to_string();
        if uname.code() != Some(0) || machine.is_empty() || machine.contains(char::is_whitespace) {
            return Err(Failure::new(format!(
                "uname -m failed on the host: {}",
                last_line(&uname.stderr)
            )));
        }
        arch = Some(machine.clone());
        let Some(binary) = plan.binaries.for_uname(&machine) else {
            return Err(Failure::new(format!(
                "no binary for {machine}; pass --binary {machine}=PATH (have: {})",
                plan.binaries.arches().join(", ")
            )));
        };
        let made = conn.run(
            r#"mktemp -d "${TMPDIR:-/tmp}/sysgauge-fleet.XXXXXXXXXX""#,
            None,
            deadline,
            Some(cancel),
        )?;
        let dir = String::from_utf8_lossy(&made.stdout).trim().to_string();
        if made.code() != Some(0) || !plausible_dir(&dir) {
            return Err(Failure::new(format!(
                "mktemp -d failed on the host: {}",
                last_line(&made.stderr)
            )));
        }
        let result = place_and_run(&conn, &dir, binary, &machine, plan, deadline, cancel, stage);
        stage(Stage::CleaningUp);
        let started_run = result.as_ref().err().is_some_and(|(_, started)| *started);
        if let Err(e) = clean_up(&conn, &dir, started_run) {
            cleanup_problem = Some(format!("could not remove {dir} on the host: {e}"));
        }
        result.map_err(|(f, _)| f)
    })();
    Outcome {
        arch,
        record,
        duration: started.elapsed(),
        cleanup_problem,
    }
}

/// Steps 4 and 5; on failure also whether the remote run may still be
/// going (it was cut off by the timeout or Ctrl-C).
#[allow(clippy::too_many_arguments)]
fn place_and_run(
    conn: &Connection,
    dir: &str,
    binary: &Binary,
    machine: &str,
    plan: &Plan,
    deadline: Instant,
    cancel: &CancelToken,
    stage: &dyn Fn(Stage),
) -> Result<String, (Failure, bool)> {
    let bin = format!("{dir}/sysgauge");
    let q = shell_quote(&bin);
    stage(Stage::Copying {
        arch: machine.to_string(),
        bytes: binary.bytes,
    });
    let copied = conn
        .run(
            &format!("cat > {q} && chmod 0700 {q} && sha256sum {q}"),
            Some(&binary.path),
            deadline,
            Some(cancel),
        )
        .map_err(|e| (Failure::from(e), false))?;
    let sum = String::from_utf8_lossy(&copied.stdout);
    let sum = sum.split_whitespace().next().unwrap_or_default();
    if copied.code() != Some(0) {
        return Err((
            Failure::new(format!(
                "copying the binary failed: {}",
                last_line(&copied.stderr)
            )),
            false,
        ));
    }
    if !sum.eq_ignore_ascii_case(&binary.sha256) {
        return Err((
            Failure::new(format!(
                "checksum mismatch after copying {} (sha256 on the host {sum}, expected {})",
                binary.path.display(),
                binary.sha256
            )),
            false,
        ));
    }
    stage(Stage::Running);
    let args: Vec<String> = plan.args.iter().map(|a| shell_quote(a)).collect();
    let script = format!(
        "export TMPDIR={d}; exec {q} {} --json - --no-store",
        args.join(" "),
        d = shell_quote(dir),
    );
    match conn.run(&script, None, deadline, Some(cancel)) {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout);
            let json = text.trim();
            // 0: all ran; 1: some benchmark failed, the record says which.
            match out.code() {
                Some(0 | 1) if json.starts_with('{') => Ok(json.to_string()),
                code => Err((
                    Failure::new(format!(
                        "sysgauge failed on the host (exit {}): {}",
                        code.map(|c| c.to_string())
                            .unwrap_or_else(|| "by signal".into()),
                        last_line(&out.stderr)
                    )),
                    false,
                )),
            }
        }
        // Cut off: the remote sysgauge may still run; clean_up stops it.
        Err(e) => Err((Failure::from(e), true)),
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
