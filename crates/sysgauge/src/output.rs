//! Writing data to stdout. Every write goes through here so that a reader
//! that goes away (a pipe into `head`) ends the program quietly with exit 0
//! instead of a panic from `println!`.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// Write `text` to stdout.
pub fn stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .context("writing to standard output")
}

/// True when the error is a closed pipe on our output.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Write `text` to a file, or to stdout when the path is `-`. The file is
/// written next to its final name and renamed into place, so an existing
/// file is never left half-written.
pub fn to_file_or_stdout(path: &Path, text: &str) -> Result<()> {
    if path.as_os_str() == "-" {
        return stdout(text);
    }
    bytes_to_file(path, text.as_bytes())
}

/// Write bytes to a file through a temporary file renamed into place.
pub fn bytes_to_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "output".into());
    let tmp = dir.join(format!(".{name}.sysgauge-{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}", path.display())
    })
}
