//! Is the process that started a run still there? A run row records the
//! writer's pid and the kernel's boot id; a `running` row whose boot id is
//! not this boot's, or whose pid no longer exists in this boot, belongs to a
//! process that was killed (SIGKILL, OOM killer, power loss) and can never
//! finish it.
//!
//! Limits, documented in docs/reliability.md: a pid reused by an unrelated
//! process keeps the row `running` (we err towards leaving a live run
//! alone), and processes in another pid namespace sharing the database are
//! not told apart.

use std::path::Path;

/// This process's pid as stored.
pub(crate) fn own_pid() -> i64 {
    i64::from(std::process::id())
}

/// The kernel's boot id, new at every boot (None when /proc is missing).
pub(crate) fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Whether liveness can be judged at all: without /proc every pid would
/// look dead and live runs would be marked interrupted.
pub(crate) fn can_judge() -> bool {
    Path::new("/proc/self").exists()
}

/// Whether `pid` exists (a zombie counts: it has not been reaped yet).
pub(crate) fn pid_alive(pid: i64) -> bool {
    pid > 0 && Path::new("/proc").join(pid.to_string()).exists()
}

/// Whether the writer of a `running` run recorded with `pid` and
/// `run_boot` is gone: recorded on another boot, or by a pid that no longer
/// exists in this one.
pub(crate) fn writer_gone(pid: i64, run_boot: Option<&str>) -> bool {
    let other_boot = matches!((boot_id(), run_boot), (Some(a), Some(b)) if a != b);
    other_boot || (pid != own_pid() && !pid_alive(pid))
}
