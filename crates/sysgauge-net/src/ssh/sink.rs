//! `sysgauge ssh --sink PATH`: each transfer is written into a file on the
//! far side instead of `/dev/null`, so the far side's file system (an
//! encrypted home such as eCryptfs, a network mount) is part of what is
//! timed. A different workload from the default: the transfer cases carry
//! the param `sink=file` (the default cases have no `sink` param, so runs
//! stored before this option still compare with default runs), and the
//! path goes into the details.
//!
//! Everything about the file happens on the far side, through the same ssh
//! session (with `--host` it is another machine): a check before the run
//! (what the path is, and the free space of its file system), `cat >`
//! into it for each transfer (the shell's `>` truncates, so every transfer
//! starts from an empty file) followed by `wc -c` of the file, which must
//! be the transfer size, and `rm -f` when the case ends (so PATH must not
//! exist before: a file of the user's is never overwritten). Data goes to the
//! page cache as any `cat > file` would: nothing is synced, as `scp` does
//! not sync either.

use super::client::{Outcome, READY_MARKER};
use std::path::Path;
use thiserror::Error;

/// The `sink` param of transfer cases written into a file.
pub const SINK_PARAM: &str = "sink";
/// Its value.
pub const SINK_FILE: &str = "file";
/// The detail naming the file.
pub const SINK_PATH_DETAIL: &str = "sink_path";
/// The detail with the file's size after the last transfer (bytes).
pub const SINK_BYTES_DETAIL: &str = "sink_bytes_written";

/// Why a `--sink` path cannot be used. Each message names the path and
/// the problem.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SinkError {
    #[error("--sink {0}: not an absolute path (the far side's working directory is not ours; give the full path, e.g. /home/me/sink.bin)")]
    Relative(String),
    #[error("--sink {0}: the path is not UTF-8 or holds a newline, which the remote shell command cannot carry; choose a plain path")]
    Unquotable(String),
    #[error("--sink {0}: is a directory on the far side; name a file inside it (e.g. {0}/sysgauge-sink)")]
    Directory(String),
    #[error("--sink {0}: already exists on the far side; sysgauge writes the file and removes it afterwards, so it takes only a new path (name a file that does not exist yet)")]
    Exists(String),
    #[error("--sink {0}: its directory does not exist on the far side")]
    NoParent(String),
    #[error("--sink {0}: the far side's user cannot write it (or create it in its directory)")]
    NotWritable(String),
    #[error("--sink {path}: its file system has {free} bytes free on the far side, less than one transfer ({size} bytes); free space or lower --size")]
    NoSpace { path: String, free: u64, size: u64 },
    #[error("--sink {path}: the far side's check printed '{output}', not what sysgauge expects (is the remote login shell POSIX-like, with df?)")]
    Unexpected { path: String, output: String },
}

/// A file on the far side that each transfer is written into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sink {
    path: String,
    /// The path quoted for the remote POSIX shell.
    quoted: String,
}

impl Sink {
    /// The path as given: absolute and quotable, or why not.
    pub fn new(path: &Path) -> Result<Sink, SinkError> {
        let lossy = || path.to_string_lossy().into_owned();
        if !path.is_absolute() {
            return Err(SinkError::Relative(lossy()));
        }
        let text = path
            .to_str()
            .filter(|t| !t.contains(['\n', '\0']))
            .ok_or_else(|| SinkError::Unquotable(lossy()))?
            .to_string();
        let quoted = shlex::try_quote(&text)
            .map_err(|_| SinkError::Unquotable(text.clone()))?
            .into_owned();
        Ok(Sink { path: text, quoted })
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// The far-side check (POSIX sh; always exits 0): one status word, or
    /// `free KIB` with the available space of the file's file system.
    pub fn check_command(&self) -> String {
        format!(
            "p={p}; d=$(dirname -- \"$p\"); \
             if [ -d \"$p\" ]; then echo directory; \
             elif [ -e \"$p\" ] || [ -L \"$p\" ]; then echo exists; \
             elif [ ! -d \"$d\" ]; then echo no-parent; \
             elif [ ! -w \"$d\" ]; then echo not-writable; \
             else echo \"free $(df -Pk -- \"$d\" | awk 'NR==2 {{print $4}}')\"; fi",
            p = self.quoted
        )
    }

    /// What the check printed, against the transfer size.
    pub fn judge_check(&self, output: &str, size: u64) -> Result<(), SinkError> {
        let path = || self.path.clone();
        let line = output.lines().map(str::trim).rfind(|l| !l.is_empty());
        match line.unwrap_or_default() {
            "directory" => Err(SinkError::Directory(path())),
            "exists" => Err(SinkError::Exists(path())),
            "no-parent" => Err(SinkError::NoParent(path())),
            "not-writable" => Err(SinkError::NotWritable(path())),
            l => {
                let free = l
                    .strip_prefix("free ")
                    .and_then(|k| k.trim().parse::<u64>().ok())
                    .map(|kib| kib.saturating_mul(1024))
                    .ok_or_else(|| SinkError::Unexpected {
                        path: path(),
                        output: output.trim().chars().take(200).collect(),
                    })?;
                if free < size {
                    Err(SinkError::NoSpace {
                        path: path(),
                        free,
                        size,
                    })
                } else {
                    Ok(())
                }
            }
        }
    }

    /// The remote command of a transfer: truncate and write the file, then
    /// print its size.
    pub fn transfer_command(&self) -> String {
        format!(
            "echo {READY_MARKER}; cat > {p} && wc -c < {p}",
            p = self.quoted
        )
    }

    /// The file's size a transfer's far side printed.
    pub fn written(outcome: &Outcome) -> Option<u64> {
        outcome.after_marker().parse().ok()
    }

    /// The remote command that removes the file.
    pub fn remove_command(&self) -> String {
        format!("rm -f -- {}", self.quoted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink(p: &str) -> Sink {
        Sink::new(Path::new(p)).unwrap()
    }

    #[test]
    fn paths_are_absolute_and_quoted() {
        assert_eq!(
            Sink::new(Path::new("sink.bin")),
            Err(SinkError::Relative("sink.bin".into()))
        );
        assert!(matches!(
            Sink::new(Path::new("/tmp/a\nb")),
            Err(SinkError::Unquotable(_))
        ));
        let s = sink("/tmp/it's here; rm -rf ~");
        assert_eq!(s.path(), "/tmp/it's here; rm -rf ~");
        assert_eq!(
            shlex::split(&s.remove_command()).unwrap(),
            ["rm", "-f", "--", "/tmp/it's here; rm -rf ~"]
        );
        assert_eq!(
            sink("/tmp/x").transfer_command(),
            "echo sysgauge-ready; cat > /tmp/x && wc -c < /tmp/x"
        );
    }

    #[test]
    fn check_outputs() {
        let s = sink("/srv/sink");
        assert_eq!(s.judge_check("free 2048\n", 2 * 1024 * 1024), Ok(()));
        assert_eq!(
            s.judge_check("motd\nfree 1\n", 2048),
            Err(SinkError::NoSpace {
                path: "/srv/sink".into(),
                free: 1024,
                size: 2048
            })
        );
        assert_eq!(
            s.judge_check("directory\n", 1),
            Err(SinkError::Directory("/srv/sink".into()))
        );
        assert_eq!(
            s.judge_check("exists", 1),
            Err(SinkError::Exists("/srv/sink".into()))
        );
        assert!(matches!(
            s.judge_check("no-parent", 1),
            Err(SinkError::NoParent(_))
        ));
        assert!(matches!(
            s.judge_check("not-writable", 1),
            Err(SinkError::NotWritable(_))
        ));
        assert!(matches!(
            s.judge_check("free \n", 1),
            Err(SinkError::Unexpected { .. })
        ));
        let msg = s.judge_check("directory", 1).unwrap_err().to_string();
        assert!(msg.starts_with("--sink /srv/sink: is a directory"), "{msg}");
    }

    /// The check script run by the real shell here: each kind of path gives
    /// its word.
    #[test]
    fn the_check_runs_in_sh() {
        let dir = tempfile::tempdir().unwrap();
        let run = |p: &Path| {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(Sink::new(p).unwrap().check_command())
                .output()
                .unwrap();
            assert!(out.status.success());
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        assert_eq!(run(dir.path()), "directory");
        assert_eq!(run(Path::new("/dev/null")), "exists");
        let kept = dir.path().join("kept");
        std::fs::write(&kept, b"the user's data").unwrap();
        assert_eq!(
            run(&kept),
            "exists",
            "an existing file is never overwritten"
        );
        assert_eq!(run(&dir.path().join("missing/file")), "no-parent");
        let free = run(&dir.path().join("new file"));
        assert!(free.starts_with("free "), "{free}");
        let s = sink("/x");
        assert_eq!(s.judge_check(&free, 1), Ok(()));
    }
}
