//! Helpers shared by the integration tests: a temporary home with its own
//! database and scratch directory, and a command builder for the real binary.

#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};

pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}")),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("results.db")
    }

    pub fn scratch(&self) -> PathBuf {
        let p = self.dir.path().join("scratch");
        std::fs::create_dir_all(&p).unwrap_or_else(|e| panic!("mkdir: {e}"));
        p
    }

    /// The binary with HOME and XDG_DATA_HOME pointing into the sandbox, so
    /// no test ever touches the user's real database.
    pub fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("sysgauge").unwrap_or_else(|e| panic!("binary: {e}"));
        c.env("HOME", self.dir.path())
            .env("XDG_DATA_HOME", self.dir.path().join("xdg"))
            .env_remove("SYSGAUGE_DB")
            .current_dir(self.dir.path())
            .timeout(std::time::Duration::from_secs(300));
        c
    }

    /// `run` with the tiny profile on the sandbox database.
    pub fn tiny_run(&self) -> Command {
        let mut c = self.cmd();
        c.arg("run")
            .arg("--profile")
            .arg("tiny")
            .arg("--repetitions")
            .arg("3")
            .arg("--db")
            .arg(self.db())
            .arg("--scratch-dir")
            .arg(self.scratch());
        c
    }
}

pub fn stdout_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

pub fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// Running the binary and checking how it ended, in one step, so each test
/// states only what it expects and a failure always shows the binary's stderr.
pub trait Outcome {
    /// Runs to the end and asserts exit status 0.
    fn succeeds(&mut self) -> std::process::Output;
    /// Runs to the end and asserts the given exit code.
    fn exits_with(&mut self, code: i32) -> std::process::Output;
}

fn succeeded(out: std::io::Result<std::process::Output>) -> std::process::Output {
    let out = out.unwrap_or_else(|e| panic!("spawn: {e}"));
    assert!(out.status.success(), "{}", stderr_of(&out));
    out
}

fn exited_with(out: std::io::Result<std::process::Output>, code: i32) -> std::process::Output {
    let out = out.unwrap_or_else(|e| panic!("spawn: {e}"));
    assert_eq!(out.status.code(), Some(code), "{}", stderr_of(&out));
    out
}

/// The binary under test (assert_cmd) and the system tools some tests set up
/// with (std) end the same way.
macro_rules! impl_outcome {
    ($($command:ty),*) => {$(
        impl Outcome for $command {
            fn succeeds(&mut self) -> std::process::Output {
                succeeded(self.output())
            }

            fn exits_with(&mut self, code: i32) -> std::process::Output {
                exited_with(self.output(), code)
            }
        }
    )*};
}

impl_outcome!(Command, std::process::Command);

/// The one run's status in the database and how many results it kept.
pub fn run_status_and_results(conn: &rusqlite::Connection) -> (String, i64) {
    conn.query_row(
        "SELECT status, (SELECT count(*) FROM results) FROM runs",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap_or_else(|e| panic!("reading the run back: {e}"))
}
