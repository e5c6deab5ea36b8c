//! What `--db` may point at. SQLite opens whatever it is given: a block
//! device gets a database header written over its file system, `/dev/null`
//! gets a `/dev/null-journal` beside it, a FIFO blocks forever. So before
//! SQLite sees a path we require a regular file (symlinks followed), or a
//! path that does not exist yet inside an existing directory.
//!
//! The check and SQLite's open are two system calls, so a path swapped in
//! between is not caught; this guards against mistakes, not against an
//! attacker who can write to the database's directory.

use crate::StoreError;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// What the path is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DbPath {
    /// A regular file (possibly through a symlink).
    Existing,
    /// Nothing there yet; its directory exists.
    New,
}

/// Check `path` before SQLite opens it (see the module doc).
pub(crate) fn check(path: &Path) -> Result<DbPath, StoreError> {
    let refuse = |reason: String| StoreError::Refused {
        path: path.to_path_buf(),
        reason,
    };
    match std::fs::metadata(path) {
        Ok(m) => {
            let t = m.file_type();
            if t.is_file() {
                return Ok(DbPath::Existing);
            }
            let what = if t.is_dir() {
                "a directory; give a file name inside it"
            } else if t.is_block_device() {
                "a block device; sysgauge would overwrite what it holds"
            } else {
                sysgauge_core::file::file_kind(&t)
            };
            let via = if is_symlink(path) {
                " (through a symbolic link)"
            } else {
                ""
            };
            Err(refuse(format!(
                "it is {what}{via}; the results database must be a regular file"
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if is_symlink(path) {
                // SQLite would create the link's target, wherever it points.
                return Err(refuse(
                    "it is a symbolic link to a missing file; give the file itself".into(),
                ));
            }
            match path.parent() {
                Some(p) if !p.as_os_str().is_empty() && !p.is_dir() => Err(StoreError::Open {
                    path: path.to_path_buf(),
                    reason: format!(
                        "directory {} does not exist; create it or pass another --db",
                        p.display()
                    ),
                }),
                _ => Ok(DbPath::New),
            }
        }
        Err(e) => Err(StoreError::Open {
            path: path.to_path_buf(),
            reason: e.to_string(),
        }),
    }
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}
