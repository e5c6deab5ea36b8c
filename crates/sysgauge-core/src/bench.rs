//! The one `Benchmark` trait every measurement implements, with what it may
//! declare (requirements) and return (errors that become `Skipped`/`Failed`).

use crate::ctx::RunCtx;
use crate::record::{Metric, Params, Profile, ResultRecord};
use crate::unit::{Better, Unit};
use std::path::Path;
use thiserror::Error;

/// What a benchmark measures, for `sysgauge list` and for the records.
#[derive(Debug, Clone, PartialEq)]
pub struct Description {
    /// One line: what is measured.
    pub summary: String,
    /// Unit of the headline (first) metric.
    pub unit: Unit,
    pub better: Better,
    /// Bump when the work done changes, so old numbers are not compared with new.
    pub workload_version: u32,
    /// State that outlives a run and can change the result between runs
    /// (the page cache, dirty pages, a file system's journal): named as the
    /// likely cause when the case's rounds disagree.
    pub state: Option<String>,
}

impl Description {
    /// A description of the first version of a workload.
    pub fn new(summary: impl Into<String>, unit: Unit, better: Better) -> Description {
        Description {
            summary: summary.into(),
            unit,
            better,
            workload_version: 1,
            state: None,
        }
    }

    /// The same, for a case whose result depends on `state` that carries
    /// over between runs (see `state`).
    pub fn depends_on(self, state: impl Into<String>) -> Description {
        Description {
            state: Some(state.into()),
            ..self
        }
    }

    /// The same, for a workload whose work has changed `version - 1` times.
    pub fn version(self, workload_version: u32) -> Description {
        Description {
            workload_version,
            ..self
        }
    }
}

/// Something a benchmark needs from the machine. An unmet requirement makes
/// every case of the benchmark a `Skipped` record with a hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    /// A program on PATH, and the Debian package that provides it.
    Program { name: String, package: String },
    /// Effective user id 0.
    Root,
}

impl Requirement {
    pub fn program(name: &str, package: &str) -> Requirement {
        Requirement::Program {
            name: name.to_string(),
            package: package.to_string(),
        }
    }

    /// `Ok(())` when met, else the reason and a hint.
    pub fn check(&self) -> Result<(), BenchError> {
        match self {
            Requirement::Program { name, package } => {
                if find_program(name).is_some() {
                    Ok(())
                } else {
                    Err(BenchError::skip(
                        format!("'{name}' is not installed"),
                        format!("install it (Debian/Ubuntu: apt-get install {package})"),
                    ))
                }
            }
            Requirement::Root => {
                if rustix::process::geteuid().is_root() {
                    Ok(())
                } else {
                    Err(BenchError::skip(
                        "needs root",
                        "run sysgauge as root (sudo) for this benchmark",
                    ))
                }
            }
        }
    }
}

/// Look a program up on PATH (or accept an existing path with a slash).
pub fn find_program(name: &str) -> Option<std::path::PathBuf> {
    if name.contains('/') {
        let p = Path::new(name);
        return is_executable(p).then(|| p.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// What a benchmark knows when it plans its cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub profile: Profile,
    /// Logical CPUs available to this process.
    pub threads: usize,
}

/// Why a case did not produce metrics.
#[derive(Debug, Error)]
pub enum BenchError {
    /// The case cannot run here; not an error of the machine.
    #[error("skipped: {reason}")]
    Skip {
        reason: String,
        hint: Option<String>,
    },
    /// The case ran and failed (wrong digest, I/O error, child crashed...).
    #[error("{0}")]
    Failed(String),
    /// The user pressed Ctrl-C.
    #[error("interrupted")]
    Cancelled,
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl BenchError {
    pub fn skip(reason: impl Into<String>, hint: impl Into<String>) -> BenchError {
        BenchError::Skip {
            reason: reason.into(),
            hint: Some(hint.into()),
        }
    }
    pub fn failed(msg: impl Into<String>) -> BenchError {
        BenchError::Failed(msg.into())
    }
    /// Wrap an I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> BenchError {
        BenchError::Io {
            context: context.into(),
            source,
        }
    }
}

/// Extension to attach context to I/O results.
pub trait IoContext<T> {
    fn io_context(self, context: impl FnOnce() -> String) -> Result<T, BenchError>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn io_context(self, context: impl FnOnce() -> String) -> Result<T, BenchError> {
        self.map_err(|e| BenchError::io(context(), e))
    }
}

/// One benchmark: a stable id, a description, declared requirements, the
/// cases it runs for a profile, and how to run one case.
///
/// `run` returns the metrics of one case (headline first). It reports
/// methodology findings with `ctx.finding(..)` and parameters discovered while
/// running (an actual size used) with `ctx.note_param(..)`. It never prints.
pub trait Benchmark: Send + Sync {
    /// Stable dotted id (`hash.sha256`); never renamed once stored.
    fn id(&self) -> &str;
    fn describe(&self) -> Description;
    fn requirements(&self) -> Vec<Requirement> {
        Vec::new()
    }
    /// The cases to run, in order. Empty means nothing to do for this plan.
    fn cases(&self, plan: &Plan) -> Vec<Params>;
    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError>;
    /// The ids of the benchmarks whose results this one is computed from
    /// (an index); empty for a measurement. A selection that keeps all of
    /// them keeps this one too, and one that drops any of them drops it.
    fn derived_from(&self) -> Vec<String> {
        Vec::new()
    }
    /// The stored record of one of its cases, merged from its rounds
    /// (`rounds::merge`; with one round, that round's record), just before
    /// the sinks get it. `earlier`: the stored records of the cases before
    /// it in this run. A case whose values derive from another case of the
    /// run (a ratio to it) recomputes them here from the values those
    /// records show, and judges its findings on them, so that a table and a
    /// finding say what the stored values say. By default the record stays
    /// as merged.
    fn settle(&self, _result: &mut ResultRecord, _earlier: &[ResultRecord]) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_requirement() {
        assert!(Requirement::program("sh", "dash").check().is_ok());
        let missing = Requirement::program("sysgauge-no-such-program", "nothing").check();
        match missing {
            Err(BenchError::Skip { reason, hint }) => {
                assert!(reason.contains("sysgauge-no-such-program"));
                assert!(hint.unwrap_or_default().contains("apt-get install nothing"));
            }
            other => panic!("expected skip, got {other:?}"),
        }
        assert!(find_program("/bin/sh").is_some());
        assert!(find_program("/nonexistent/sh").is_none());
    }
}
