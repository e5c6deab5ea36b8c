//! Scratch directories: the only places benchmarks write to.
//!
//! Each is created on first use, recorded in a process-wide list, and removed
//! when its owner is dropped. The list exists for the last resort: if the
//! user presses Ctrl-C twice, the binary removes every listed directory
//! before exiting, so no scratch file outlives the process either way.

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
        std::fs::create_dir(&path)?;
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
}
