//! Scratch directories: the only places benchmarks write to.
//!
//! Each is created on first use, recorded in a process-wide list, and removed
//! when its owner is dropped. The list exists for the last resort: if the
//! user presses Ctrl-C twice, the binary removes every listed directory
//! before exiting, so no scratch file outlives the process either way.
//! A process killed outright (SIGKILL, power loss) cannot clean up; the next
//! sysgauge that opens the database for writing calls `remove_stale`, which
//! removes the `sysgauge-<pid>-<n>` directories of pids that no longer exist.
//!
//! Directories are created mode 0700 whatever the umask: they hold the ssh
//! family's private sshd configuration and keys (sshd runs with
//! `StrictModes no`), which nobody else may swap or read.

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static COUNTER: AtomicU64 = AtomicU64::new(0);

fn register(p: &Path) {
    if let Ok(mut v) = LIVE.lock() {
        v.push(p.to_path_buf());
    }
}

fn unregister(p: &Path) {
    if let Ok(mut v) = LIVE.lock() {
        v.retain(|q| q != p);
    }
}

/// Remove every scratch directory still alive. Called on a forced exit.
pub fn remove_all_live() {
    let dirs = match LIVE.lock() {
        Ok(mut v) => std::mem::take(&mut *v),
        Err(_) => return,
    };
    for d in dirs {
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// Paths of scratch directories currently alive (for tests and diagnostics).
pub fn live_dirs() -> Vec<PathBuf> {
    LIVE.lock().map(|v| v.clone()).unwrap_or_default()
}

/// A directory named `sysgauge-<pid>-<n>` inside `parent`, removed on drop.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// Create a fresh scratch directory inside `parent` (which must exist).
    pub fn create_in(parent: &Path) -> std::io::Result<ScratchDir> {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let path = parent.join(format!("sysgauge-{}-{}", std::process::id(), n));
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        register(&path);
        Ok(ScratchDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
        unregister(&self.path);
    }
}

/// The pid in a scratch directory's name `sysgauge-<pid>-<n>`.
fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("sysgauge-")?;
    let (pid, n) = rest.split_once('-')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// The metadata of `path` when it is a directory of this user's, not a
/// symbolic link to one: what a sweep of directories left behind by dead
/// processes (scratch directories, the fleet's control directories) may
/// remove. A link could point anywhere, and another user's directory was
/// not made by us.
pub fn own_directory(path: &Path) -> Option<std::fs::Metadata> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    (meta.is_dir() && meta.uid() == rustix::process::geteuid().as_raw()).then_some(meta)
}

/// Remove the scratch directories in `parent` left by sysgauge processes
/// that no longer exist (killed before they could clean up). Only real
/// directories (not symlinks) owned by this user are touched, and nothing
/// is done without /proc to tell live pids from dead ones. Returns what was
/// removed.
pub fn remove_stale(parent: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    if !Path::new("/proc/self").exists() {
        return removed;
    }
    let Ok(entries) = std::fs::read_dir(parent) else {
        return removed;
    };
    let own = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(owner_pid) else {
            continue;
        };
        if pid == own || Path::new("/proc").join(pid.to_string()).exists() {
            continue;
        }
        let path = entry.path();
        if own_directory(&path).is_none() {
            continue;
        }
        if std::fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_and_removed() {
        let base = tempfile::tempdir().unwrap();
        let p;
        {
            let s = ScratchDir::create_in(base.path()).unwrap();
            p = s.path().to_path_buf();
            std::fs::write(p.join("f"), b"x").unwrap();
            assert!(live_dirs().contains(&p));
        }
        assert!(!p.exists());
        assert!(!live_dirs().contains(&p));
    }

    #[test]
    fn private_whatever_the_umask() {
        let base = tempfile::tempdir().unwrap();
        use rustix::fs::Mode;
        let old = rustix::process::umask(Mode::from_raw_mode(0o002));
        let s = ScratchDir::create_in(base.path());
        rustix::process::umask(old);
        let s = s.unwrap();
        let mode = std::fs::metadata(s.path()).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[test]
    fn stale_dirs_of_dead_pids_removed() {
        let base = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = base.path().join(format!("sysgauge-{dead}-0"));
        std::fs::create_dir(&stale).unwrap();
        std::fs::write(stale.join("data"), b"x").unwrap();
        let live = base
            .path()
            .join(format!("sysgauge-{}-7", std::process::id()));
        std::fs::create_dir(&live).unwrap();
        let other = base.path().join(format!("sysgauge-{dead}-x"));
        std::fs::create_dir(&other).unwrap();
        assert_eq!(remove_stale(base.path()), vec![stale.clone()]);
        assert!(!stale.exists());
        assert!(live.exists());
        assert!(other.exists());
    }

    #[test]
    fn only_own_real_directories_count_as_own() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("dir");
        std::fs::create_dir(&dir).unwrap();
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        let file = base.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        assert!(own_directory(&dir).is_some_and(|m| m.is_dir()));
        for not_ours in [&link, &file, &base.path().join("missing")] {
            assert!(own_directory(not_ours).is_none(), "{}", not_ours.display());
        }
        // Another user's directory (only root can give one away).
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(&dir, Some(65534), None).unwrap();
            assert!(own_directory(&dir).is_none());
        }
    }
}
