//! Reading a file the user named (an inventory, a binary to send, an ssh
//! config, a file to import): a regular file of bounded size, or a clear
//! error saying what it is instead.
//!
//! Why this shape:
//! - `/dev/zero` or `/dev/urandom` never end: read whole, they fill memory
//!   until the process is killed. A FIFO without a writer blocks `open` and
//!   `read` for ever. A directory reads as an error that says nothing
//!   useful. So only regular files are read, and only up to a bound each
//!   caller states for what the file is.
//! - The path is `stat`ed first, so that a device is never even opened
//!   (opening some devices has effects: a tape rewinds, a watchdog starts).
//! - It is then opened with `O_NONBLOCK` (a FIFO swapped in meanwhile does
//!   not block the open; on a regular file the flag changes nothing), the
//!   opened descriptor is `fstat`ed and checked again, and the bytes are
//!   read through that same descriptor, never more than the bound plus one
//!   (a file growing while it is read is caught too).

use crate::size::Bytes;
use std::fs::{File, FileType, Metadata};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Why a file argument cannot be read. `what` is the option or the role
/// of the file (`--inventory`, `--binary aarch64=`), shown before its path.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    // The I/O error is said in the message, not chained as a cause too:
    // chained, every error report would say it twice.
    #[error("{}: {io}", subject(.what, .path))]
    Open {
        what: String,
        path: PathBuf,
        io: std::io::Error,
    },
    #[error("{}: not a regular file ({kind})", subject(.what, .path))]
    NotRegular {
        what: String,
        path: PathBuf,
        kind: &'static str,
    },
    #[error(
        "{}: {}, more than the {} such a file may be",
        subject(.what, .path),
        Bytes(*.size),
        Bytes(*.max)
    )]
    TooLarge {
        what: String,
        path: PathBuf,
        size: u64,
        max: u64,
    },
    #[error("{}: reading it: {io}", subject(.what, .path))]
    Read {
        what: String,
        path: PathBuf,
        io: std::io::Error,
    },
}

/// `--inventory x.ini`, `--binary aarch64=x`, or the path alone.
fn subject(what: &str, path: &Path) -> String {
    match what {
        "" => path.display().to_string(),
        w if w.ends_with('=') => format!("{w}{}", path.display()),
        w => format!("{w} {}", path.display()),
    }
}

/// What a file that is not a regular file is, for messages.
pub fn file_kind(t: &FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// `meta` is of a regular file no larger than `max_bytes`.
fn check_meta(meta: &Metadata, path: &Path, what: &str, max_bytes: u64) -> Result<u64, FileError> {
    if !meta.is_file() {
        return Err(FileError::NotRegular {
            what: what.to_string(),
            path: path.to_path_buf(),
            kind: file_kind(&meta.file_type()),
        });
    }
    if meta.len() > max_bytes {
        return Err(FileError::TooLarge {
            what: what.to_string(),
            path: path.to_path_buf(),
            size: meta.len(),
            max: max_bytes,
        });
    }
    Ok(meta.len())
}

/// Opens `path` if it is a regular file of at most `max_bytes` (symbolic
/// links followed); returns it with its size. See the module doc.
pub fn open_regular_file(
    path: &Path,
    what: &str,
    max_bytes: u64,
) -> Result<(File, u64), FileError> {
    let open_error = |io| FileError::Open {
        what: what.to_string(),
        path: path.to_path_buf(),
        io,
    };
    check_meta(
        &std::fs::metadata(path).map_err(open_error)?,
        path,
        what,
        max_bytes,
    )?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(open_error)?;
    let size = check_meta(&file.metadata().map_err(open_error)?, path, what, max_bytes)?;
    Ok((file, size))
}

/// Checks, without reading it, that `path` is a regular file of at most
/// `max_bytes` (for a file handed to another program by its path, such as
/// ssh's `-F`); returns its size.
pub fn check_regular_file(path: &Path, what: &str, max_bytes: u64) -> Result<u64, FileError> {
    open_regular_file(path, what, max_bytes).map(|(_, size)| size)
}

/// The bytes of `path`, a regular file of at most `max_bytes`.
pub fn read_regular_file(path: &Path, what: &str, max_bytes: u64) -> Result<Vec<u8>, FileError> {
    let (file, size) = open_regular_file(path, what, max_bytes)?;
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|io| FileError::Read {
            what: what.to_string(),
            path: path.to_path_buf(),
            io,
        })?;
    let read = bytes.len() as u64;
    if read > max_bytes {
        return Err(FileError::TooLarge {
            what: what.to_string(),
            path: path.to_path_buf(),
            size: read,
            max: max_bytes,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn err(r: Result<Vec<u8>, FileError>) -> String {
        match r {
            Ok(b) => panic!("read {} bytes", b.len()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_regular_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("hosts.ini");
        std::fs::write(&p, b"[web]\nw1\n").unwrap();
        assert_eq!(
            read_regular_file(&p, "--inventory", MIB).unwrap(),
            b"[web]\nw1\n"
        );
        assert_eq!(check_regular_file(&p, "--inventory", MIB).unwrap(), 9);
        // Exactly the bound is allowed.
        assert_eq!(read_regular_file(&p, "--inventory", 9).unwrap().len(), 9);
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pipe");
        sysgauge_testkit::mkfifo(&p);
        // No writer: an open without O_NONBLOCK, or a read, would block.
        let e = err(read_regular_file(&p, "--inventory", MIB));
        assert_eq!(
            e,
            format!(
                "--inventory {}: not a regular file (a FIFO (named pipe))",
                p.display()
            )
        );
        let e = check_regular_file(&p, "--ssh-config", MIB)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--ssh-config ") && e.contains("a FIFO"),
            "{e}"
        );
    }

    #[test]
    fn a_device_is_refused() {
        let e = err(read_regular_file(
            Path::new("/dev/zero"),
            "--inventory",
            MIB,
        ));
        assert_eq!(
            e,
            "--inventory /dev/zero: not a regular file (a character device)"
        );
        let e = err(read_regular_file(
            Path::new("/dev/zero"),
            "--binary aarch64=",
            MIB,
        ));
        assert_eq!(
            e,
            "--binary aarch64=/dev/zero: not a regular file (a character device)"
        );
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = err(read_regular_file(dir.path(), "", MIB));
        assert_eq!(
            e,
            format!("{}: not a regular file (a directory)", dir.path().display())
        );
    }

    #[test]
    fn a_file_above_the_bound_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.ini");
        // Sparse: 3 GiB claimed, nothing written.
        let f = File::create(&p).unwrap();
        f.set_len(3 << 30).unwrap();
        let e = err(read_regular_file(&p, "--inventory", 64 * MIB));
        assert_eq!(
            e,
            format!(
                "--inventory {}: 3 GiB, more than the 64 MiB such a file may be",
                p.display()
            )
        );
        assert!(check_regular_file(&p, "--ssh-config", 64 * MIB).is_err());
    }

    #[test]
    fn a_missing_file_says_so() {
        let e = err(read_regular_file(
            Path::new("/nonexistent/x.ini"),
            "--inventory",
            MIB,
        ));
        assert!(
            e.starts_with("--inventory /nonexistent/x.ini: No such file"),
            "{e}"
        );
    }
}
