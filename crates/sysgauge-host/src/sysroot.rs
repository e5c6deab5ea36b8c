//! `SysRoot`: where a host's /proc, /sys and /etc are found.
//!
//! Every collector reads through a `SysRoot` instead of naming `/proc`
//! directly, so that a whole machine captured as a small fixture tree
//! (`tests/fixtures/<machine>/proc/cpuinfo`, ...) is collected by exactly the
//! code that reads the live machine. Facts that only exist for the running
//! system (uname, statvfs, CPUID, the pointer width of this build) are asked
//! for only when `live` is true, so a fixture never mixes in facts about the
//! machine running the tests.
//!
//! Reads never fail loudly: a missing, unreadable or non-UTF-8 file is simply
//! "not known" (`None`), because any of these files may be absent on some
//! kernel, container or board.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// /proc and /sys files are small; a cap keeps a mistaken path (a fixture
/// pointing at a huge file, a device node) from reading without bound.
const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;

/// The roots a host is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysRoot {
    /// The file system root (`/`): `run/`, `usr/lib/os-release` are found under it.
    pub root: PathBuf,
    /// The procfs root (`/proc`).
    pub proc: PathBuf,
    /// The sysfs root (`/sys`).
    pub sys: PathBuf,
    /// The configuration root (`/etc`).
    pub etc: PathBuf,
    /// True for the running system: enables uname, statvfs, CPUID, path
    /// canonicalisation and this build's pointer width.
    pub live: bool,
}

impl Default for SysRoot {
    fn default() -> Self {
        SysRoot::live()
    }
}

impl SysRoot {
    /// The running system: `/`, `/proc`, `/sys`, `/etc`.
    pub fn live() -> Self {
        SysRoot {
            root: PathBuf::from("/"),
            proc: PathBuf::from("/proc"),
            sys: PathBuf::from("/sys"),
            etc: PathBuf::from("/etc"),
            live: true,
        }
    }

    /// A captured tree: `dir/proc`, `dir/sys`, `dir/etc`, not live.
    pub fn under(dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref();
        SysRoot {
            root: dir.to_path_buf(),
            proc: dir.join("proc"),
            sys: dir.join("sys"),
            etc: dir.join("etc"),
            live: false,
        }
    }

    /// `proc/<rel>`.
    pub fn proc_path(&self, rel: &str) -> PathBuf {
        self.proc.join(rel)
    }

    /// `sys/<rel>`.
    pub fn sys_path(&self, rel: &str) -> PathBuf {
        self.sys.join(rel)
    }

    /// `etc/<rel>`.
    pub fn etc_path(&self, rel: &str) -> PathBuf {
        self.etc.join(rel)
    }

    /// `<root>/<rel>` (`rel` without a leading slash).
    pub fn root_path(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }

    pub(crate) fn read_proc(&self, rel: &str) -> Option<String> {
        read_text(&self.proc_path(rel))
    }

    pub(crate) fn read_sys(&self, rel: &str) -> Option<String> {
        read_text(&self.sys_path(rel))
    }

    /// `proc/sys/kernel/<name>` trimmed (`hostname`, `osrelease`, `arch`).
    pub(crate) fn sys_kernel_value(&self, name: &str) -> Option<String> {
        read_value(&self.proc_path(&format!("sys/kernel/{name}")))
    }

    /// A sysfs attribute trimmed of its newline; empty counts as absent.
    pub(crate) fn sys_value(&self, rel: &str) -> Option<String> {
        read_value(&self.sys_path(rel))
    }
}

/// Reads a text file (lossily, capped); `None` when it cannot be read.
pub(crate) fn read_text(path: &Path) -> Option<String> {
    let file = File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_READ_BYTES).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Reads a one-value file (sysfs attribute) and trims it.
pub(crate) fn read_value(path: &Path) -> Option<String> {
    let text = read_text(path)?;
    let value = text.trim();
    if value.is_empty() {
        None
    } else {
        Some(value.to_string())
    }
}

/// Names of the entries of a directory, sorted; empty when unreadable.
/// Sorted so that collection is deterministic whatever order the file
/// system returns.
pub(crate) fn dir_names(path: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(path) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}
