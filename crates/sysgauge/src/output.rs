//! Writing data to stdout. Every write goes through here so that a reader
//! that goes away (a pipe into `head`) ends the program quietly with exit 0
//! instead of a panic from `println!`; and every user-named output file is
//! written by `bytes_to_file` (temporary file, fsync, rename). Messages to
//! stderr go through `stderr` (the crate's `eprintln!`), which never fails.

use anyhow::{Context, Result};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Write `text` to stdout.
pub fn stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .context("writing to standard output")
}

/// Write a message to stderr, dropping it when stderr is closed or full: a
/// warning or a progress line nobody can read is no reason to stop, so the
/// command goes on and ends with the exit code it earns. One write per
/// message, so that lines from threads do not interleave. Every
/// `eprintln!`/`eprint!` of this crate is this (see `main.rs`).
pub fn stderr(args: std::fmt::Arguments<'_>) {
    let text = std::fmt::format(args);
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// True when the error is a closed pipe on our output.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Write `text` to a file, or to stdout when the path is `-`. See
/// `bytes_to_file` for how the file is written.
pub fn to_file_or_stdout(path: &Path, text: &str) -> Result<()> {
    if path.as_os_str() == "-" {
        return stdout(text);
    }
    bytes_to_file(path, text.as_bytes())
}

/// Write bytes to a user-named file (`--json`, `--csv`, `--chart`, report,
/// `compare -o`, baseline): every such file goes through here, and none
/// replaces a results database.
///
/// A new temporary file is created in the target's directory with
/// `O_EXCL` and an unpredictable name (so nobody can plant a symlink or a
/// file there first), written, fsynced, renamed over the target, and the
/// directory fsynced: the target is the old file or the complete new one,
/// even after a crash. The mode is 0666 less the umask, as for any new
/// file. A target that exists but is not a regular file (`/dev/stdout`, a
/// FIFO) is written in place; a symlink to a regular file is followed, so
/// the link stays a link.
pub fn bytes_to_file(path: &Path, bytes: &[u8]) -> Result<()> {
    // Checked before the command ran (`config::check_output_path`); again
    // here, the one door every output file goes through.
    crate::db::refuse_database_as_output(path, "the output file")?;
    let target = match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            return f
                .write_all(bytes)
                .and_then(|_| f.flush())
                .with_context(|| format!("cannot write {}", path.display()));
        }
        Ok(_) => std::fs::canonicalize(path)
            .with_context(|| format!("cannot resolve {}", path.display()))?,
        Err(_) => path.to_path_buf(),
    };
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".sysgauge-")
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(&dir)
        .with_context(|| {
            format!(
                "cannot create a temporary file in {} to write {}",
                dir.display(),
                path.display()
            )
        })?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    // On failure the temporary file is removed by its drop.
    tmp.persist(&target)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", path.display()))?;
    // The rename is durable only once the directory is.
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    #[test]
    fn replaces_atomically_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        bytes_to_file(&p, b"first").unwrap();
        bytes_to_file(&p, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn symlink_followed_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.csv");
        std::fs::write(&real, b"old").unwrap();
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        bytes_to_file(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
    }

    #[test]
    fn device_written_in_place() {
        bytes_to_file(Path::new("/dev/null"), b"x").unwrap();
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
    }
}
