//! The programs `spawn` starts: the embedded static no-op helper (see
//! `noop-helper.S` and build.rs) and `/bin/true`, and the check that a
//! method really ran the target.
//!
//! Why a static helper: a dynamically linked `/bin/true` spends most of its
//! life in the dynamic loader (mapping libc, relocating), which is the same
//! for every spawning method and hides their differences; a static program
//! of a few instructions leaves only the kernel's and the method's work. The
//! helper is written into the scratch directory at run time (no installed
//! files), so a scratch directory on a `noexec` filesystem makes the static
//! cases skip with a hint. `/bin/true` stays as the realistic case.

use super::method::{ChildEnd, ExecPlan, Method, SpawnError};
use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use sysgauge_core::BenchError;

/// The helper as built for this target; empty when build.rs could not
/// build it.
pub static HELPER: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/noop-helper"));

/// True when this build carries the static helper.
pub fn helper_available() -> bool {
    HELPER.starts_with(b"\x7fELF")
}

/// A target program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// The embedded static no-op helper.
    Static,
    /// `/bin/true` (or `true` on PATH).
    True,
}

impl Target {
    pub fn name(self) -> &'static str {
        match self {
            Target::Static => "static",
            Target::True => "true",
        }
    }

    pub fn parse(s: &str) -> Option<Target> {
        match s {
            "static" => Some(Target::Static),
            "true" => Some(Target::True),
            _ => None,
        }
    }
}

impl std::str::FromStr for Target {
    type Err = String;

    fn from_str(s: &str) -> Result<Target, String> {
        Target::parse(s.trim())
            .ok_or_else(|| format!("unknown target '{}' (use static or true)", s.trim()))
    }
}

/// Write the helper into `dir` as an executable file.
pub fn install_helper(dir: &Path) -> Result<PathBuf, BenchError> {
    if !helper_available() {
        return Err(BenchError::skip(
            format!(
                "this sysgauge build has no static no-op helper (none could be built for {})",
                std::env::consts::ARCH
            ),
            "use --target true, or build sysgauge on x86_64 or aarch64 with a C compiler installed",
        ));
    }
    let path = dir.join("noop-helper");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o755)
        .open(&path)
        .map_err(|e| BenchError::io(format!("cannot create {}", path.display()), e))?;
    f.write_all(HELPER)
        .and_then(|_| f.sync_all())
        .map_err(|e| BenchError::io(format!("cannot write {}", path.display()), e))?;
    drop(f);
    Ok(path)
}

/// `/bin/true`, or `true` from PATH.
pub fn true_path() -> Result<PathBuf, BenchError> {
    let bin = Path::new("/bin/true");
    if sysgauge_core::bench::find_program("/bin/true").is_some() {
        return Ok(bin.to_path_buf());
    }
    sysgauge_core::bench::find_program("true").ok_or_else(|| {
        BenchError::skip(
            "no 'true' program (/bin/true or on PATH)",
            "install coreutils (Debian/Ubuntu: apt-get install coreutils)",
        )
    })
}

/// Check that `program` can be executed at all: first access(X_OK), which
/// the kernel answers with EACCES for a file without execute permission
/// and for one on a noexec mount, whatever spawns it later (an emulator
/// such as qemu-user turns posix_spawn's exec error into a child exiting
/// with 127); then posix_spawn itself, which reports the exec's errno. A
/// freshly written file can be briefly busy (ETXTBSY) when another thread
/// of this process forked while it was open for writing; that is retried
/// for up to about a second.
pub fn check_executable(program: &Path) -> Result<(), BenchError> {
    if let Err(e) = rustix::fs::access(program, rustix::fs::Access::EXEC_OK) {
        if e == rustix::io::Errno::ACCESS || e == rustix::io::Errno::PERM {
            return Err(not_executable(program, e.raw_os_error()));
        }
    }
    let mut plan = ExecPlan::new(program, &[]).map_err(BenchError::failed)?;
    let mut tries = 0;
    loop {
        match plan.spawn(Method::PosixSpawn) {
            Ok(()) => return Ok(()),
            Err(SpawnError::Os { errno, .. }) if errno == libc::ETXTBSY && tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            // Under a user-mode emulator (qemu-user) posix_spawn cannot
            // report the exec's errno: a busy file shows as a child that
            // exited with 127. The file passed access(X_OK) above, so that
            // is retried the same way.
            Err(SpawnError::Child(ChildEnd::Exited(127))) if tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(SpawnError::Os { errno, .. }) if errno == libc::EACCES || errno == libc::EPERM => {
                return Err(not_executable(program, errno));
            }
            Err(e) => {
                return Err(BenchError::failed(format!(
                    "{} cannot be run: {e}",
                    program.display()
                )))
            }
        }
    }
}

fn not_executable(program: &Path, errno: i32) -> BenchError {
    BenchError::skip(
        format!(
            "{} cannot be executed ({}); is its filesystem mounted noexec?",
            program.display(),
            std::io::Error::from_raw_os_error(errno)
        ),
        "pass --scratch-dir on a filesystem that allows executing programs",
    )
}

/// Run the target `count` times by `method` and count how often it really
/// ran, by its side effect: the static helper appends one byte to a marker
/// file per run; fork+exit's child writes one byte to a pipe. Returns the
/// number of runs seen. `program` must be the static helper (or, for
/// fork+exit, anything: it is not executed).
pub fn count_runs(
    method: Method,
    program: &Path,
    marker_dir: &Path,
    count: u32,
) -> Result<u64, BenchError> {
    if method == Method::ForkExit {
        // Both ends close-on-exec; the plan hands the writing end to the
        // child explicitly.
        let (mut reader, writer) =
            std::io::pipe().map_err(|e| BenchError::io("cannot create a pipe", e))?;
        let result = (|| {
            use std::os::fd::AsRawFd;
            let mut plan = ExecPlan::new(program, &[])
                .map_err(BenchError::failed)?
                .with_marker_fd(writer.as_raw_fd());
            for _ in 0..count {
                plan.spawn(method)
                    .map_err(|e| BenchError::failed(format!("{}: {e}", method.name())))?;
            }
            Ok::<(), BenchError>(())
        })();
        drop(writer);
        result?;
        let mut buf = Vec::new();
        use std::io::Read;
        reader
            .read_to_end(&mut buf)
            .map_err(|e| BenchError::io("cannot read the marker pipe", e))?;
        return Ok(buf.len() as u64);
    }
    let marker = marker_dir.join(format!("runs-{}", method.name()));
    let _ = std::fs::remove_file(&marker);
    let mut plan = ExecPlan::new(program, &[marker.as_os_str()]).map_err(BenchError::failed)?;
    for _ in 0..count {
        plan.spawn(method)
            .map_err(|e| BenchError::failed(format!("{}: {e}", method.name())))?;
    }
    let n = std::fs::metadata(&marker).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_file(&marker);
    Ok(n)
}

/// Check once, before timing, that `method` really runs `program`: with
/// the static helper by counting its side effect, with any other target by
/// its exit status (it cannot be told to leave a trace).
pub fn verify(
    method: Method,
    target: Option<Target>,
    program: &Path,
    scratch: &Path,
) -> Result<(), BenchError> {
    match target {
        Some(Target::True) => {
            let mut plan = ExecPlan::new(program, &[]).map_err(BenchError::failed)?;
            plan.spawn(method).map_err(|e| {
                BenchError::failed(format!("{} of {}: {e}", method.name(), program.display()))
            })
        }
        _ => {
            let seen = count_runs(method, program, scratch, 2)?;
            if seen == 2 {
                Ok(())
            } else {
                Err(BenchError::failed(format!(
                    "{}: the target ran {seen} times instead of 2",
                    method.name()
                )))
            }
        }
    }
}

/// Arguments the timed spawns pass: none.
pub const NO_ARGS: [&OsStr; 0] = [];

#[cfg(test)]
mod tests {
    use super::*;

    fn require_helper() -> bool {
        sysgauge_testkit::require(
            "the static no-op helper",
            helper_available(),
            "build on x86-64 or aarch64 Linux with a C compiler (the cc crate builds it)",
        )
    }

    /// The helper is a static ELF executable: no PT_INTERP program header,
    /// so no dynamic loader runs before it.
    #[test]
    fn helper_is_static_elf() {
        if !require_helper() {
            return;
        }
        let h = HELPER;
        assert_eq!(&h[..4], b"\x7fELF");
        let le16 = |o: usize| u16::from_le_bytes([h[o], h[o + 1]]) as usize;
        let le32 = |o: usize| u32::from_le_bytes([h[o], h[o + 1], h[o + 2], h[o + 3]]);
        let is64 = h[4] == 2;
        let (phoff, phentsize, phnum) = if is64 {
            let off = u64::from_le_bytes(h[0x20..0x28].try_into().unwrap_or([0; 8])) as usize;
            (off, le16(0x36), le16(0x38))
        } else {
            (le32(0x1c) as usize, le16(0x2a), le16(0x2c))
        };
        assert!(phnum > 0);
        for i in 0..phnum {
            let p_type = le32(phoff + i * phentsize);
            assert_ne!(
                p_type, 3,
                "PT_INTERP found: the helper is dynamically linked"
            );
        }
        assert_eq!(le16(0x10), 2, "ET_EXEC expected");
    }

    #[test]
    fn every_method_runs_the_helper() {
        if !require_helper() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let helper = install_helper(dir.path()).unwrap();
        check_executable(&helper).unwrap();
        for m in Method::ALL {
            if m.available().is_err() {
                eprintln!("note: {} not available on this architecture", m.name());
                continue;
            }
            let n = count_runs(m, &helper, dir.path(), 5).unwrap();
            assert_eq!(n, 5, "{} ran the target {n} times instead of 5", m.name());
            verify(m, Some(Target::Static), &helper, dir.path())
                .unwrap_or_else(|e| panic!("{}: {e}", m.name()));
        }
    }

    #[test]
    fn every_method_reports_a_failing_target() {
        let Some(false_prog) = sysgauge_core::bench::find_program("false") else {
            panic!("'false' is not installed (coreutils)");
        };
        for m in Method::ALL.into_iter().filter(|m| m.execs()) {
            if m.available().is_err() {
                continue;
            }
            let mut plan = ExecPlan::new(&false_prog, &[]).unwrap();
            match plan.spawn(m) {
                Err(SpawnError::Child(super::super::method::ChildEnd::Exited(1))) => {}
                other => panic!("{}: expected exit status 1, got {other:?}", m.name()),
            }
        }
    }

    #[test]
    fn every_method_runs_true() {
        let t = true_path().unwrap();
        let dir = tempfile::tempdir().unwrap();
        for m in Method::ALL {
            if m.available().is_err() {
                continue;
            }
            verify(m, Some(Target::True), &t, dir.path())
                .unwrap_or_else(|e| panic!("{}: {e}", m.name()));
        }
    }

    #[test]
    fn missing_program_is_an_error_not_a_pass() {
        let dir = tempfile::tempdir().unwrap();
        let nothing = dir.path().join("no-such-program");
        for m in Method::ALL.into_iter().filter(|m| m.execs()) {
            if m.available().is_err() {
                continue;
            }
            let mut plan = ExecPlan::new(&nothing, &[]).unwrap();
            assert!(plan.spawn(m).is_err(), "{} reported success", m.name());
        }
        assert!(check_executable(&nothing).is_err());
    }

    #[test]
    fn noexec_like_file_is_a_skip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("not-executable");
        std::fs::write(&p, b"#!/bin/sh\n").unwrap();
        match check_executable(&p) {
            Err(BenchError::Skip { hint, .. }) => {
                assert!(hint.unwrap_or_default().contains("--scratch-dir"))
            }
            other => panic!("expected a skip, got {other:?}"),
        }
    }
}
