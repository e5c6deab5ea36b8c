//! What a test asks of the machine before it sets anything up: programs on
//! PATH, root, a free port, OpenSSH and a private directory for its sshd,
//! and system commands (`ip`, `losetup`) that must succeed for the set-up
//! to mean anything.

use std::path::Path;
use std::process::{Command, Output};

/// True if `program` is an executable file in a directory on PATH.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}

/// True when the tests run as root (network namespaces, loop devices).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A UDP port on `ip` that was free a moment ago (for programs that need a
/// number rather than a bound socket).
pub fn free_udp_port(ip: &str) -> u16 {
    std::net::UdpSocket::bind((ip, 0))
        .and_then(|s| s.local_addr())
        .unwrap_or_else(|e| panic!("no free UDP port on {ip}: {e}"))
        .port()
}

/// Runs a set-up command to the end and returns its output; panics with
/// its stderr unless it succeeds.
pub fn output_of_success(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// [`output_of_success`] for `args[0]` with the rest as its arguments.
pub fn run_checked(args: &[&str]) {
    output_of_success(Command::new(args[0]).args(&args[1..]));
}

/// Makes a FIFO (named pipe) at `path`: the file argument that must be
/// refused without blocking, since opening one without a writer never
/// returns.
pub fn mkfifo(path: &Path) {
    output_of_success(Command::new("mkfifo").arg(path));
}

/// A live process, as /proc shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    pub pid: i32,
    /// The command line, arguments separated by spaces.
    pub cmdline: String,
}

/// Live processes whose command line mentions `needle` (a scratch directory
/// in a server's arguments, a file a child reads): what a test looks for to
/// prove something ran, and then that nothing was left running.
pub fn processes_mentioning(needle: &str) -> Vec<Process> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmdline.contains(needle) {
                found.push(Process { pid, cmdline });
            }
        }
    }
    found
}

/// The rule ([`crate::require`]) for tests that start a private OpenSSH
/// server (`sshd`, the path the ssh family starts) and connect with the
/// client: true when `ssh`, `ssh-keygen` and `sshd` are all there.
pub fn require_openssh(sshd: &std::path::Path) -> bool {
    crate::require(
        &format!("ssh tests need ssh, ssh-keygen and {}", sshd.display()),
        sshd.is_file() && on_path("ssh") && on_path("ssh-keygen"),
        "apt-get install -y openssh-client openssh-server",
    )
}

/// A new temporary directory closed to everyone but this user (0700,
/// whatever the umask): the only kind a private sshd is started from (it
/// runs with `StrictModes no`, so its start-up checks this instead).
pub fn private_tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()
        .unwrap_or_else(|e| panic!("cannot make a private temporary directory: {e}"))
}
