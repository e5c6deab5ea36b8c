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
